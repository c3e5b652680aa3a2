"""Rules for the notebooks' sources (docs/notebooks/*.py)."""

from __future__ import annotations

from termbase.core import notebook_source
from termbase.core.project import Project


def check_notebooks(project: Project, report) -> None:
    for path in notebook_source.source_paths(project):
        try:
            source = notebook_source.read_source(path)
        except Exception as exc:  # jupytext raises several types
            report.add(path, 1, f"cannot read the notebook: {exc}", "write it in jupytext's percent format (`# %%` cells)")
            continue
        for line, what, fix in notebook_source.problems(project, source):
            report.add(path, line, what, fix)
