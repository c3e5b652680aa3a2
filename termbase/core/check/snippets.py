"""Rules for the code: snippet modules, their sections, their tests, and the blocks pages show."""

from __future__ import annotations

from termbase.core import blocks, sections
from termbase.core.check.records import PLACEHOLDER
from termbase.core.check import yamlfile
from termbase.core.model import TermBase
from termbase.core.project import Project

MODULE_TESTS = "module_tests("


def check_modules(project: Project, report) -> None:
    modules = blocks.snippet_modules(project)
    for path in sorted([*project.snippets.glob("*.py"), *project.tests.glob("test_*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PLACEHOLDER.search(line):
                report.add(path, number, "unfilled placeholder from `termbase new`", "replace it with real code")
            if path in modules and len(line) > blocks.MAX_LINE:
                report.add(path, number, f"line is {len(line)} characters long (at most {blocks.MAX_LINE})",
                           "break it: a page's code box shows 80 characters, and a reader would scroll sideways")
    for module in modules:
        parsed = sections.parse_file(module)
        for line, what, fix in parsed.problems:
            report.add(module, line, what, fix)
        for section in parsed.sections.values():
            if section.lines and (not section.lines[0].strip() or not section.lines[-1].strip()):
                report.add(module, section.line, f"section '{section.name}' starts or ends with a blank line",
                           "remove it: the page puts exactly two blank lines between sections")
        test = project.tests / f"test_{module.stem}.py"
        if not test.is_file():
            report.add(module, 1, f"snippet module has no test ({project.shown(test)} is missing)",
                       "write tests that compare it with PyTorch's own implementation")
        declared = blocks.read_literal(module, "BLOCKS")
        if declared is None or not isinstance(declared[0], dict) or not declared[0]:
            report.add(module, 1, "the module declares no BLOCKS",
                       'add `BLOCKS = {"demo": ["snippets/' + module.name + ':code", "snippets/' + module.name
                       + ':demo"]}`: each block a complete program (see snippets/masks.py)')
            continue
        names, key_lines, line = declared
        used = set()
        for name, refs in names.items():
            at = key_lines.get(name, line)
            if not isinstance(refs, (list, tuple)) or not refs or not all(isinstance(r, str) for r in refs):
                report.add(module, at, f"block '{name}' is not a list of references",
                           'write ["snippets/<file>.py:<section>", ...]')
                continue
            for ref in refs:
                missing = sections.missing(project.root, ref)
                if missing:
                    report.add(module, at, f"block '{name}': {missing}", "fix the reference `file.py:section`")
                elif ref.startswith(f"snippets/{module.name}:"):
                    used.add(sections.split(ref)[1])
        for name in sorted(set(parsed.sections) - used):
            report.add(module, parsed.sections[name].line, f"section '{name}' is in no block",
                       "add it to a block of BLOCKS, or remove the section")
        if not test.is_file():
            continue
        expected = blocks.read_literal(test, "EXPECTED_OUTPUT")
        if expected is None or not isinstance(expected[0], dict):
            report.add(test, 1, f"no EXPECTED_OUTPUT for the blocks of {project.shown(module)}",
                       "add `EXPECTED_OUTPUT = {block: [every line it prints]}` (see tests/test_masks.py)")
            continue
        outputs, output_lines, output_line = expected
        for name in names:
            if name not in outputs:
                report.add(test, output_line, f"block '{name}' of {project.shown(module)} has no expected output",
                           f'add "{name}": [every line it prints] to EXPECTED_OUTPUT')
            elif not isinstance(outputs[name], list) or not all(isinstance(x, str) for x in outputs[name]):
                report.add(test, output_lines.get(name, output_line), f"expected output of '{name}' is not a list of lines",
                           "write each printed line as a string")
        for name in outputs:
            if name not in names:
                report.add(test, output_lines.get(name, output_line), f"EXPECTED_OUTPUT names '{name}', which is not a block",
                           f"use one of: {', '.join(names)}")
        if MODULE_TESTS not in test.read_text(encoding="utf-8"):
            report.add(test, 1, "the test does not run the module's blocks",
                       "add `test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)`")


def page_blocks(base: TermBase, pages) -> dict[tuple[str, ...], blocks.PageBlock]:
    """Every code block the site shows, by its references, with where it is embedded."""
    found: dict[tuple[str, ...], blocks.PageBlock] = {}
    for slug, term in base.terms.items():
        path = base.project.terms_dir / f"{slug}.yml"
        for refs in term.get("code") or []:
            if isinstance(refs, list):
                found.setdefault(tuple(refs), blocks.PageBlock(tuple(refs))).where.append((path, 1))
    for page in pages.values():
        for line, refs in blocks.fence_blocks(page.text):
            found.setdefault(refs, blocks.PageBlock(refs)).where.append((page.path, line))
    return found


def check_page_blocks(base: TermBase, pages, report) -> None:
    declared = blocks.declared(base.project)
    record_lines = {}
    for block in page_blocks(base, pages).values():
        if block.refs in declared:
            continue
        for path, line in block.where:
            if path.suffix == ".yml" and path not in record_lines:
                record_lines[path] = yamlfile.load(path, report)[1]
            at = yamlfile.line_of(record_lines.get(path, {}), ("code",)) if path.suffix == ".yml" else line
            # A reference to a file or section that is not there is the mistake to name first.
            wrong = [m for m in (sections.missing(base.project.root, ref) for ref in block.refs) if m]
            if wrong and path.suffix == ".yml":
                for problem in wrong:
                    report.add(path, at, problem, "create it, or fix the reference `file.py:section`")
                continue
            if wrong:
                continue  # the page check names it, at its line
            report.add(path, at, f"code block [{', '.join(block.refs)}] is not declared by any snippet module",
                       "add it to the BLOCKS of its module, with its expected output in the module's test")
