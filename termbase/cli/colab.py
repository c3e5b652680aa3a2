"""`python -m termbase notebooks`: each notebook, per language, as an .ipynb without outputs in
notebooks/<lang>/<name>.ipynb, committed so that "Open in Colab" can open it from the hosted
repository (Colab opens notebooks from GitHub, not from a web page). Code cells have the
snippet sections embedded, as the site's pages show them; tests/site/test_notebooks.py fails
when a committed file and its source drift apart."""

from __future__ import annotations

from pathlib import Path

from termbase.core import markdown, notebook_source
from termbase.core.project import Project

FOLDER = notebook_source.COLAB_FOLDER


def colab_notebook(project: Project, source, lang: str) -> str:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}
    for index, cell in enumerate(source.cells):
        cell_id = f"{source.name}-{index}"[-64:]
        if cell.cell_type == "markdown" and cell.metadata.get("lang", lang) == lang:
            text = markdown.strip_citations(cell.source)
            notebook.cells.append(nbformat.v4.new_markdown_cell(text, id=cell_id))
        elif cell.cell_type == "code":
            notebook.cells.append(nbformat.v4.new_code_cell(notebook_source.expand(project, cell.source), id=cell_id))
    return nbformat.writes(notebook) + "\n"


def write_all(project: Project, out: Path | None = None) -> list[Path]:
    out = Path(out) if out else project.root / FOLDER
    written = []
    for path in notebook_source.source_paths(project):
        source = notebook_source.read_source(path)
        for lang in project.languages:
            target = out / lang / f"{source.name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(colab_notebook(project, source, lang), encoding="utf-8")
            written.append(target)
    return written
