"""Claims: sentences about how PyTorch behaves, each cited on a page as `{{ claim:<id> }}` and
asserted by one test under tests/claims/ decorated `@claim("<id>")` (tests/claims/__init__.py).
Both sides are read from the sources here, without importing the tests (or torch)."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from termbase.core import markdown
from termbase.core.project import Project

CITATION = markdown.CITATION


@dataclass(frozen=True)
class Test:
    claim_id: str
    path: Path
    line: int  # of the decorator
    function: str
    first: int  # first and last line of the test function, for the claims page
    last: int


def tests(project: Project) -> dict[str, list[Test]]:
    found: dict[str, list[Test]] = {}
    for path in sorted((project.tests / "claims").glob("test_*.py")):
        stat = path.stat()
        for test in _tests_of(str(path), stat.st_mtime_ns, stat.st_size):
            found.setdefault(test.claim_id, []).append(test)
    return found


@functools.lru_cache(maxsize=256)
def _tests_of(path: str, mtime_ns: int, size: int) -> tuple[Test, ...]:
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if (isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "claim"
                    and decorator.args and isinstance(decorator.args[0], ast.Constant)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append(Test(str(decorator.args[0].value), Path(path), decorator.lineno, node.name,
                                first, node.end_lineno or node.lineno))
    return tuple(out)


def citations(text: str) -> list[tuple[int, str]]:
    """(line, claim id) of every citation in a text, in order (code spans only show the form)."""
    return markdown.citations(text)


# A sentence ends at . ! or ? before the next one's first word; a colon or a semicolon does
# not end it (the claims page would show a clause without its subject).
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\s\w]*[\w¿¡«“\"(`*$])")


BULLET = re.compile(r"\s*[-*+]\s+")
ORDERED = re.compile(r"\s*\d+\.\s+")


def cited_sentences(text: str, abbreviations=()) -> list[tuple[int, str, str]]:
    """(line, claim id, the sentence it follows) of every citation of a Markdown text.
    `abbreviations` (the style guide's, e.g. "e.g.", "pr.", "et al.") do not end a sentence."""
    found = []
    paragraph: list[tuple[int, str]] = []
    endings = tuple(a.lower() for a in abbreviations)

    def last_sentence(before: str) -> str:
        pieces = SENTENCE_END.split(before)
        sentence = pieces.pop()
        while pieces and _whole_word(pieces[-1], endings):
            sentence = pieces.pop() + " " + sentence
        return sentence

    def close():
        joined = " ".join(line.strip() for _, line in paragraph)
        for match in CITATION.finditer(joined):
            before = CITATION.sub("", joined[: match.start()]).strip()
            sentence = last_sentence(before) if before else ""
            number = next((n for n, line in paragraph if match.group() in line), paragraph[0][0])
            found.append((number, match.group(1), sentence.strip()))

    in_list = False
    for number, line in enumerate(text.splitlines(), 1):
        # A bullet starts an item anywhere; "2." only in a list or after a blank line (inside
        # a paragraph, "1000." at the start of a line is a number, as in CommonMark).
        item = BULLET.match(line) or (ORDERED.match(line) if in_list or not paragraph else None)
        if item and paragraph:  # each item of a list is a paragraph of its own
            close()
            paragraph = []
        if item:
            in_list = True
        if line.strip():
            paragraph.append((number, line[item.end():] if item else line))
        elif paragraph:
            close()
            paragraph, in_list = [], False
    if paragraph:
        close()
    return found


def _whole_word(text: str, endings: tuple[str, ...]) -> bool:
    """Whether `text` ends with one of `endings` as a word of its own ("pr.", not "Spr.")."""
    lower = text.lower()
    return any(lower.endswith(e) and (len(lower) == len(e) or not lower[-len(e) - 1].isalnum())
               for e in endings)
