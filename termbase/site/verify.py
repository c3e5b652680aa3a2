"""Nothing unverified reaches the site: before a build writes anything, every code block a page
embeds runs (once per content and versions: the cache) and must print exactly the output its
module's test declares. A block that raises or prints anything else fails `mkdocs build` with
`snippets/<file>.py:<section>`, the pages that embed it and the first differing line; under
`mkdocs serve` the page shows that message in place of the block."""

from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

from termbase.core import blocks, sections
from termbase.core.model import TermBase, page_lang
from termbase.run.blocks import BlockRunner, first_difference

TRACEBACK_LINE = re.compile(r'File ".*block\.py", line (\d+)')


def page_blocks(base: TermBase) -> dict[tuple[str, ...], list[str]]:
    """refs -> the pages (docs/...) that embed the block."""
    project = base.project
    found: dict[tuple[str, ...], list[str]] = {}
    for slug, term in base.terms.items():
        for refs in term.get("code") or []:
            pages = [project.shown(project.docs / "glossary" / f"{slug}.{lang}.md") for lang in base.languages]
            found.setdefault(tuple(refs), []).extend(pages)
    for path in sorted(project.docs.rglob("*.md")):
        if page_lang(path.relative_to(project.docs).as_posix(), base.languages) is None:
            continue
        for line, refs in blocks.fence_blocks(path.read_text(encoding="utf-8")):
            found.setdefault(refs, []).append(f"{project.shown(path)}:{line}")
    return found


def _where(root, refs, line_number: int) -> str:
    """The snippet file, line and section that line `line_number` of the composed block is from."""
    line = 1
    for ref in refs:
        text = sections.text(root, ref).strip("\n")
        count = text.count("\n") + 1
        if line_number < line + count:
            file_part, name = sections.split(ref)
            parsed = sections.parse_file(root / file_part).sections[name]
            lead = len(sections.text(root, ref)) - len(sections.text(root, ref).lstrip("\n"))
            return f"{file_part}:{name} (line {parsed.line + lead + line_number - line + 1})"
        line += count + 2
    return ":".join(sections.split(refs[-1]))


def verify(base: TermBase, runner: BlockRunner) -> dict[tuple[str, ...], str]:
    """refs -> what is wrong with the block, for every block that fails. Fails the build
    first when the installed torch (which runs the blocks and which the pages name) is not
    the pinned one."""
    problem = base.torch_problem()
    if problem:
        raise PluginError(problem)
    root = base.project.root
    declared = blocks.declared(base.project)
    embedded = page_blocks(base)
    programs = {refs: sections.compose(root, refs) for refs in embedded if all(
        sections.missing(root, ref) is None for ref in refs)}
    futures = {refs: runner.submit(code) for refs, code in programs.items()}
    failures = {}
    for refs, future in futures.items():
        result = future.result()
        pages = ", ".join(dict.fromkeys(embedded[refs]))
        block = declared.get(refs)
        name = f"block '{block.name}' of snippets/{block.module}.py" if block else "the block"
        if result.returncode != 0 or result.stderr:
            lines = [int(n) for n in TRACEBACK_LINE.findall(result.stderr)]
            where = _where(root, refs, lines[-1]) if lines else ":".join(sections.split(refs[-1]))
            last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit code {result.returncode}"
            what = "raised" if result.returncode else "wrote to stderr"
            failures[refs] = (f"{where}: {name} {what}: {last} - fix the code (embedded by {pages})")
        elif block is None or block.expected is None:
            failures[refs] = (f"{':'.join(sections.split(refs[-1]))}: {name} has no declared expected output "
                              f"- declare it in the BLOCKS and EXPECTED_OUTPUT of its module (embedded by {pages})")
        else:
            difference = first_difference(block.expected, result.stdout)
            if difference:
                failures[refs] = (f"{':'.join(sections.split(refs[-1]))}: {name} printed other than its expected output, "
                                  f"{difference} - fix the code or {block.expectation()} (embedded by {pages})")
    return failures
