"""Reading a notebook's source: `docs/notebooks/<name>.py`, one jupytext (percent format) file.

Its code cells are shared by all languages; each prose cell carries `lang="<code>"` and comes
in every language of the project, side by side. A code cell may embed snippet sections with a
line `# --8<-- "snippets/<module>.py:<section>"` (the references pages use), so the notebook
runs the tested snippet code and a downloaded notebook runs without this repository.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from termbase.core import blocks, markdown, sections
from termbase.core.project import Project

INCLUDE = markdown.NOTEBOOK_INCLUDE
CELL_HEADER = re.compile(r"^# %%")
# Notebooks render their prose with CommonMark (mistune, in Jupyter and mkdocs-jupyter), where
# these open a new block even in the middle of a paragraph; Python-Markdown, which renders the
# pages, does not. A wrapped line that starts with one of them breaks the paragraph.
INTERRUPTS = re.compile(r"^ {0,3}(?:[-+*]\s|1[.)]\s|>|#{1,6}\s)")


def interrupted_lines(text: str) -> list[tuple[int, str]]:
    """(line within `text`, from 1, the line) for each line that would cut a paragraph of a
    notebook's prose: one that starts with a list marker, `1.`, `>` or a heading mark while the
    lines above it, since the last blank line, are a plain paragraph."""
    found, in_paragraph, fenced = [], False, False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced, in_paragraph = not fenced, False
            continue
        if fenced:
            continue
        if not line.strip():
            in_paragraph = False
        elif in_paragraph and INTERRUPTS.match(line):
            found.append((number, line))
        elif not in_paragraph:
            # a block that opens with a marker is a list (or quote, heading), not a paragraph
            in_paragraph = not INTERRUPTS.match(line) and not line.lstrip().startswith(("|", "<", "$$"))
    return found


@dataclass
class Source:
    path: Path
    name: str
    cells: list  # jupytext cells
    lines: list[int]  # line of each cell's `# %%` header


def source_paths(project: Project) -> list[Path]:
    """The notebooks: docs/notebooks/*.py; files starting with `_` are helpers they embed."""
    return sorted(p for p in (project.docs / "notebooks").glob("*.py") if not p.name.startswith("_"))


def read_source(path: Path) -> Source:
    """The parsed source; parsed once per version of the file (titles and pages ask often)."""
    stat = path.stat()
    cells, headers = _parse(str(path), stat.st_mtime_ns, stat.st_size)
    return Source(path, path.stem, copy.deepcopy(cells), list(headers))


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime_ns: int, size: int):
    import jupytext  # no MkDocs, no torch; only a notebook reader

    text = Path(path).read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="py:percent")
    headers = [number for number, line in enumerate(text.splitlines(), 1) if CELL_HEADER.match(line)]
    if len(headers) != len(notebook.cells):  # text before the first `# %%` is a cell too
        headers = [1] * (len(notebook.cells) - len(headers)) + headers
    return list(notebook.cells), tuple(headers)


def title(project: Project, name: str, lang: str) -> str:
    """The title of notebook `name` (its first `# ` heading) in `lang`."""
    return source_title(read_source(project.docs / "notebooks" / f"{name}.py"), lang) or name


def source_title(source: Source, lang: str) -> str | None:
    for cell in source.cells:
        if cell.cell_type == "markdown" and cell.metadata.get("lang", lang) == lang:
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def expand(project: Project, code: str) -> str:
    """Replace each `# --8<-- "file.py:section"` line by that section; the parts of a cell are
    two blank lines apart, as the site's code blocks show them."""
    chunks: list[str] = []
    plain: list[str] = []
    for line in code.splitlines():
        match = INCLUDE.match(line)
        if not match:
            plain.append(line)
            continue
        chunks.append("\n".join(plain))
        plain = []
        chunks.append(sections.text(project.root, match.group(1)))
    chunks.append("\n".join(plain))
    return sections.BLOCK_SEPARATOR.join(chunk.strip("\n") for chunk in chunks if chunk.strip())


def code_cells(project: Project, source: Source) -> list[tuple[int, str]]:
    """(line, expanded code) of each code cell, in order."""
    return [(line, expand(project, cell.source))
            for cell, line in zip(source.cells, source.lines) if cell.cell_type == "code"]


def prose_cells(source: Source):
    """(language, first line of its text in the file, text) of every prose cell."""
    for cell, line in zip(source.cells, source.lines):
        if cell.cell_type == "markdown" and cell.metadata.get("lang"):
            yield cell.metadata["lang"], line + 1, cell.source


def alt_texts(source: Source):
    """(language, line, text) of every figure description a code cell carries."""
    for cell, line in zip(source.cells, source.lines):
        alt = cell.metadata.get("alt") if cell.cell_type == "code" else None
        if isinstance(alt, dict):
            for lang, text in alt.items():
                yield lang, line, str(text)


def problems(project: Project, source: Source) -> list[tuple[int, str, str]]:
    """(line, what, fix) for everything that would make a notebook wrong in some language."""
    languages = project.languages
    found = []
    group: dict[str, int] = {}
    group_line = 1

    def close_group():
        if group:
            for lang in languages:
                if lang not in group:
                    found.append((group_line, f"prose cell has no '{lang}' version",
                                  f'add a `# %% [markdown] lang="{lang}"` cell next to it'))

    for cell, line in zip(source.cells, source.lines):
        lang = cell.metadata.get("lang") if cell.cell_type == "markdown" else None
        if lang is None:
            close_group()
            group = {}
        else:
            if lang not in languages:
                found.append((line, f"unknown language '{lang}'", f"use one of: {', '.join(languages)}"))
                continue
            if not group:
                group_line = line
            elif lang in group:  # a second cell of the same language starts the next group
                close_group()
                group, group_line = {}, line
            group[lang] = line
        if cell.cell_type == "markdown":
            for offset, text in interrupted_lines(cell.source):
                found.append((line + offset, f"a wrapped line starts with '{text.split()[0]}': the notebook renders "
                              "it as a new list, quote or heading, cutting the paragraph",
                              "rewrap the paragraph so that no line starts with it"))
        if cell.cell_type == "code":
            for offset, text in enumerate(cell.source.splitlines(), 1):
                if len(text) > blocks.MAX_LINE:
                    found.append((line + offset, f"code line is {len(text)} characters long (at most {blocks.MAX_LINE})",
                                  "break it (the notebook's code box, like a snippet's, shows 79 without scrolling)"))
                match = INCLUDE.match(text)
                if match:
                    missing = sections.missing(project.root, match.group(1))
                    if missing:
                        found.append((line + offset, missing, "create it, or fix the reference `file.py:section`"))
            alt = cell.metadata.get("alt")
            if isinstance(alt, dict):
                for lang in languages:
                    if not str(alt.get(lang, "")).strip():
                        found.append((line, f"figure description has no '{lang}' text",
                                      f"add `{lang}` to the cell's alt metadata"))
    close_group()
    if not any(c.cell_type == "code" for c in source.cells):
        found.append((1, "notebook has no code cell", "add `# %%` cells with the code it runs"))
    for lang in languages:
        if source_title(source, lang) is None:
            found.append((1, f"no title in '{lang}'", f'start the first `lang="{lang}"` cell with `# Title`'))
    return found


COLAB_FOLDER = "notebooks"  # notebooks/<lang>/<name>.ipynb, written by `python -m termbase notebooks`


def colab_url(repository: str, branch: str, lang: str, name: str) -> str:
    """Colab's address of notebooks/<lang>/<name>.ipynb in a GitHub repository."""
    owner_repo = repository.rstrip("/").removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/{COLAB_FOLDER}/{lang}/{name}.ipynb"
