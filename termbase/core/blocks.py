"""Code blocks: what each page embeds, what each snippet module declares, and what each block
is expected to print.

A snippet module declares its blocks in a module-level `BLOCKS = {name: [refs]}`; its test,
`tests/test_<module>.py`, declares `EXPECTED_OUTPUT = {name: [every line printed]}`. A block
a page shows (a term record's `code:` entry, or a fence of `--8<--` lines in a page) must be
one of the declared blocks: that is how the build knows what it must print. Both are read
from the source with `ast`, so nothing is imported (no torch) to know them.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

from termbase.core import markdown
from termbase.core.project import Project

MAX_LINE = 79  # the code box of a desktop page shows 80 characters: no sideways scrolling


@dataclass
class Declared:
    module: str  # e.g. "masks"
    name: str  # block name in BLOCKS
    refs: tuple[str, ...]
    line: int  # of the block's key in BLOCKS
    expected: list[str] | None  # EXPECTED_OUTPUT[name], None when not declared
    expected_line: int | None = None  # of its key in EXPECTED_OUTPUT

    def expectation(self) -> str:
        """Where its expected output is written, for a message's fix."""
        test = f"tests/test_{self.module}.py"
        return f"{test}:{self.expected_line} (EXPECTED_OUTPUT[{self.name!r}])" if self.expected_line else test


@dataclass
class PageBlock:
    refs: tuple[str, ...]
    where: list[tuple[Path, int]] = field(default_factory=list)  # (file, line) embedding it


def _literal_assign(tree: ast.Module, name: str):
    """(value, {key: line}, line) of a top-level `name = {...}` literal, or None."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            lines = {}
            if isinstance(node.value, ast.Dict):
                for key in node.value.keys:
                    if isinstance(key, ast.Constant):
                        lines[key.value] = key.lineno
            return value, lines, node.lineno
    return None


def read_literal(path: Path, name: str):
    stat = path.stat()
    return _read_literal(str(path), stat.st_mtime_ns, stat.st_size, name)


@functools.lru_cache(maxsize=1024)
def _read_literal(path: str, mtime_ns: int, size: int, name: str):
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except SyntaxError:
        return None
    return _literal_assign(tree, name)


def snippet_modules(project: Project) -> list[Path]:
    return sorted(p for p in project.snippets.glob("*.py") if p.name != "__init__.py")


def declared(project: Project) -> dict[tuple[str, ...], Declared]:
    """Every block of every snippet module, by its references."""
    out = {}
    for module in snippet_modules(project):
        blocks = read_literal(module, "BLOCKS")
        if not blocks or not isinstance(blocks[0], dict):
            continue
        test = project.tests / f"test_{module.stem}.py"
        expected = read_literal(test, "EXPECTED_OUTPUT") if test.is_file() else None
        outputs = expected[0] if expected and isinstance(expected[0], dict) else {}
        output_lines = expected[1] if outputs else {}
        for name, refs in blocks[0].items():
            if isinstance(refs, (list, tuple)) and all(isinstance(r, str) for r in refs):
                out.setdefault(tuple(refs), Declared(module.stem, name, tuple(refs), blocks[1].get(name, blocks[2]),
                                                     outputs.get(name), output_lines.get(name)))
    return out


def fence_blocks(text: str):
    """(line, refs) of each fenced Python block of a page made of `--8<--` lines only."""
    for fence in markdown.fences(text):
        if fence.end is not None and fence.is_python and fence.lang != "pycon" and fence.refs:
            yield fence.start, fence.refs
