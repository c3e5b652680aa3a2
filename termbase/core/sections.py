"""Snippet sections: the one parser of `# --8<-- [start:NAME]` ... `# --8<-- [end:NAME]`.

A section's text is exactly what pymdownx.snippets pastes into a page for
`--8<-- "snippets/<file>.py:NAME"` (mkdocs.yml sets `dedent_subsections`): the lines between
the markers, marker lines of other sections dropped, dedented. A code block of the site is a
list of such references, two blank lines apart (PEP 8 between top-level parts). The checker,
the notebooks, the page renderer, the block runner and the tests all use this module.
"""

from __future__ import annotations

import functools
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

# pymdownx.snippets' own pattern for a section marker (case-insensitive, anywhere in a line).
MARKER = re.compile(
    r"(?i)^(?P<pre>.*?)(?<!;)(?P<inline>-{1,}8<-{1,}[ \t]+)"
    r"\[[ \t]*(?P<type>start|end)[ \t]*:[ \t]*(?P<name>[a-z][-_0-9a-z]*)[ \t]*\](?P<post>.*?)$"
)
BLOCK_SEPARATOR = "\n\n\n"


@dataclass
class Section:
    name: str
    line: int  # of its start marker, 1-based
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return textwrap.dedent("\n".join(self.lines))


@dataclass
class Parsed:
    sections: dict[str, Section]
    problems: list[tuple[int, str, str]]  # (line, what, fix)


def parse(text: str) -> Parsed:
    sections: dict[str, Section] = {}
    problems = []
    open_section: Section | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = MARKER.match(line)
        if not match:
            if open_section is not None:
                open_section.lines.append(line)
            continue
        kind, name = match.group("type").lower(), match.group("name")
        if kind == "start":
            if open_section is not None:
                problems.append((number, f"section '{name}' starts inside section '{open_section.name}'",
                                 f"end '{open_section.name}' first: sections do not nest here"))
                continue
            if name in sections:
                problems.append((number, f"section '{name}' is marked twice",
                                 "give each section of a file its own name"))
                continue
            open_section = sections[name] = Section(name, number)
        elif open_section is not None and open_section.name == name:
            open_section = None
        else:
            problems.append((number, f"end of section '{name}' without its start",
                             f"add `# --8<-- [start:{name}]` above it, or remove this line"))
    if open_section is not None:
        problems.append((open_section.line, f"section '{open_section.name}' is never closed",
                         f"add `# --8<-- [end:{open_section.name}]` after its last line"))
    return Parsed(sections, problems)


def parse_file(path: Path) -> Parsed:
    stat = path.stat()
    return _parse_file(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _parse_file(path: str, mtime_ns: int, size: int) -> Parsed:
    return parse(Path(path).read_text(encoding="utf-8"))


def split(ref: str) -> tuple[str, str]:
    """"snippets/x.py:code" -> ("snippets/x.py", "code"); the section is "" for a whole file."""
    file_part, _, section = ref.partition(":")
    return file_part, section


def missing(root: Path, ref: str) -> str | None:
    """None when `ref` names a section that exists, else what is wrong with it."""
    file_part, section = split(ref)
    path = root / file_part
    if not path.is_file():
        return f"snippet file {file_part} does not exist"
    if not section:
        return f"'{ref}' embeds the whole file; embed a section, e.g. '{file_part}:code'"
    if section not in parse_file(path).sections:
        return f"section '{section}' is not marked in {file_part}"
    return None


def text(root: Path, ref: str) -> str:
    """The text of one section, as pymdownx.snippets pastes it."""
    file_part, section = split(ref)
    return parse_file(root / file_part).sections[section].text


def compose(root: Path, refs) -> str:
    """The program a page shows for a block of references."""
    return BLOCK_SEPARATOR.join(text(root, ref).strip("\n") for ref in refs) + "\n"
