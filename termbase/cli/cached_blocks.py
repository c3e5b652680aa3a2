"""What `termbase check` can say about the code without running it: each code block the site
shows whose last run is in the cache (the same key the build and the tests use: its program
and the versions of Python, torch and numpy) is compared with the output its test declares
now, so an edited EXPECTED_OUTPUT is compared too; a block whose code changed since its last
run is counted as not run, and the check's last line says so, names its files and the commands
that run it. Nothing here imports MkDocs or torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from termbase.core import blocks, sections
from termbase.core.check.snippets import page_blocks
from termbase.core.model import TermBase, page_lang
from termbase.core.project import Project
from termbase.run.blocks import NAMESPACE, block_key, first_difference
from termbase.run.cache import Cache


@dataclass
class Compared:
    compared: int = 0
    not_run: list[tuple[str, ...]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # `path:line: problem - fix`

    def summary(self) -> str:
        total = self.compared + len(self.not_run)
        line = f"{self.compared} of {total} code blocks compared with their last run"
        if self.not_run:
            files = sorted({sections.split(refs[-1])[0] for refs in self.not_run})
            named = ", ".join(files[:3]) + (f" and {len(files) - 3} more files" if len(files) > 3 else "")
            line += (f"; {len(self.not_run)} NOT verified: not run since they last changed ({named});"
                     " `python -m termbase test <slug>` or `mkdocs build` runs them")
        return line


def compare(project: Project) -> Compared:
    base = TermBase(project)
    root = project.root
    pages = {}
    for path in sorted(project.docs.rglob("*.md")):
        if page_lang(path.relative_to(project.docs).as_posix(), base.languages) is not None:
            pages[path] = SimpleNamespace(path=path, text=path.read_text(encoding="utf-8"))
    declared = blocks.declared(project)
    cache = Cache(project.cache_dir)
    out = Compared()
    for refs in page_blocks(base, pages):
        block = declared.get(refs)
        if block is None or any(sections.missing(root, ref) for ref in refs):
            continue  # the check names it
        hit = cache.get_json(NAMESPACE, block_key(sections.compose(root, refs)))
        if hit is None:
            out.not_run.append(refs)
            continue
        out.compared += 1
        file_part, name = sections.split(refs[-1])
        where = f"{file_part}:{sections.parse_file(root / file_part).sections[name].line}"
        what = f"block '{block.name}' of snippets/{block.module}.py"
        if hit["returncode"] != 0 or hit["stderr"]:
            last = (hit["stderr"].strip().splitlines() or [f"exit code {hit['returncode']}"])[-1]
            out.problems.append(f"{where}: {what} raised in its last run: {last} - fix the code")
        elif block.expected is not None and (difference := first_difference(block.expected, hit["stdout"])):
            out.problems.append(f"{where}: {what} printed other than its expected output in its last run, "
                                f"{difference} - fix the code or {block.expectation()}")
    return out
