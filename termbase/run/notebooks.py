"""Executes the notebooks: each one's code cells (snippets expanded) run with nbclient in an
empty folder, once per content and versions (the cache, termbase/run/cache.py).

An unchanged notebook is never executed again: not by the next build, another language's
build, a `mkdocs serve` rebuild or the tests. A cell that raises fails with the file, the cell
and its line. Figures are written as SVG, a light and a dark variant (the dark one re-inked).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from termbase.core import notebook_source
from termbase.core.notebook_source import Source
from termbase.core.project import Project
from termbase.run.cache import Cache, key

log = logging.getLogger("mkdocs.plugins.termbase")
NAMESPACE = "notebooks"
RUNNER_VERSION = "4"  # bump to re-execute every notebook after changing how they are run
PACKAGES = ("torch", "numpy", "matplotlib", "ipykernel")
CELL_TIMEOUT_S = 120
INK = "#010101"  # matplotlib's text/axis colour while executing; the dark figures swap it
DARK_INK = "#d5d8e0"

# Run before the notebook's own cells and dropped from the result: figures as deterministic
# SVG with live text, on a transparent background, drawn in a sentinel ink.
SETUP = f"""\
%matplotlib inline
%config InlineBackend.figure_formats = ["svg"]
%config InlineBackend.print_figure_kwargs = {{"bbox_inches": "tight", "metadata": {{"Date": None}}}}
import matplotlib as _mpl
_mpl.rcParams.update({{
    "svg.fonttype": "none", "svg.hashsalt": "termbase", "savefig.transparent": True,
    "figure.facecolor": "none", "axes.facecolor": "none", "font.size": 9,
    "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans"],
    "text.color": "{INK}", "axes.labelcolor": "{INK}", "axes.edgecolor": "{INK}",
    "xtick.color": "{INK}", "ytick.color": "{INK}",
}})
del _mpl
"""


class NotebookError(Exception):
    """A notebook cannot be published: `path:line: what - fix`."""


@dataclass
class Run:
    dir: Path
    cells: list  # executed code cells, in source order (outputs included)
    figures: list[str]  # file names of the light figures, in order; dark ones end in -dark.svg
    executed: bool  # False: taken from the cache


def run_key(codes: list[str]) -> str:
    return key(RUNNER_VERSION, SETUP, *codes, packages=PACKAGES)


def run(project: Project, cache: Cache, source: Source) -> Run:
    """The executed code cells of a notebook, from the cache when its code has not changed."""
    import nbformat

    shown = project.shown(source.path)
    codes = notebook_source.code_cells(project, source)
    entry = f"{source.name}-{run_key([code for _, code in codes])}"
    with cache.lock(NAMESPACE, entry):
        done = cache.get(NAMESPACE, entry)
        if done is not None:
            log.info("termbase: notebook %s unchanged, not executed again (cached run %s)", shown, entry)
            executed = nbformat.read(done / "executed.ipynb", as_version=4)
            return Run(done, executed.cells, json.loads((done / "figures.json").read_text()), False)
        started = time.monotonic()
        executed = _execute(shown, source, codes)

        def write(folder: Path):
            _write_figures(executed, folder)
            nbformat.write(executed, folder / "executed.ipynb")

        done = cache.put(NAMESPACE, entry, write)
        log.info("termbase: executed notebook %s in %.1f s", shown, time.monotonic() - started)
        return Run(done, executed.cells, json.loads((done / "figures.json").read_text()), True)


def run_all(project: Project, cache: Cache) -> list[tuple[Source, Run]]:
    """Every notebook of the project, checked and run (in parallel, from the cache if unchanged)."""
    sources = [notebook_source.read_source(path) for path in notebook_source.source_paths(project)]
    for source in sources:
        found = notebook_source.problems(project, source)
        if found:
            line, what, fix = found[0]
            raise NotebookError(f"{project.shown(source.path)}:{line}: {what} - {fix}")
    with ThreadPoolExecutor(max_workers=max(1, min(4, len(sources)))) as pool:
        runs = list(pool.map(lambda s: run(project, cache, s), sources))
    cache.cleanup(NAMESPACE)
    return list(zip(sources, runs))


def _execute(shown: str, source: Source, codes: list[tuple[int, str]]):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    setup = nbformat.v4.new_code_cell(SETUP)
    notebook.cells = [setup] + [nbformat.v4.new_code_cell(code) for _, code in codes]
    workdir = Path(tempfile.mkdtemp(prefix="termbase-nb-"))  # empty: the code needs nothing of the repo
    client = NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    try:
        # The kernel's own chatter (e.g. its TCP notice) goes to a file, not into the build log.
        with open(workdir / "kernel.log", "wb") as sink, client.setup_kernel(stdout=sink, stderr=sink):
            client.execute_cell(setup, 0, store_history=False)  # In[1] stays the first code cell
            for index, cell in enumerate(notebook.cells[1:], 1):
                client.execute_cell(cell, index, execution_count=index)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        raise NotebookError(_failure(shown, source, codes, setup, notebook, exc)) from None
    except Exception as exc:  # the kernel did not start
        raise NotebookError(f"{shown}:1: cannot run the notebook ({type(exc).__name__}: {exc}) "
                            f"- install the requirements (ipykernel) and rebuild") from exc
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    notebook.cells = notebook.cells[1:]
    return notebook


def _failure(shown: str, source: Source, codes, setup, notebook, exc) -> str:
    import re

    def error_of(cell):
        return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)

    cells = notebook.cells[1:]
    reached = [i for i, cell in enumerate(cells) if cell.get("execution_count") is not None]
    failed = reached[-1] if reached else None  # the cell that was running; None: the setup
    error = error_of(setup) if failed is None else error_of(cells[failed])
    if error:
        reason = f"{error['ename']}: {error['evalue']}"
        where = "the runner's setup" if failed is None else f"code cell {failed + 1} (line {codes[failed][0]})"
        traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.get("traceback", [])[-6:]))
        log.error("termbase: notebook %s, %s failed:\n%s", shown, where, traceback)
    else:
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if failed is None:
        return (f"{shown}:1: the notebook runner's setup raised {reason} "
                f"- check matplotlib and ipykernel (pip install -r requirements.txt)")
    return (f"{shown}:{codes[failed][0]}: code cell {failed + 1} of notebook '{source.name}' raised "
            f"{reason} - fix that cell; a notebook with an error is not published")


def _write_figures(notebook, folder: Path) -> list[str]:
    """Each SVG output to fig-N.svg (as drawn) and fig-N-dark.svg (ink for the dark scheme)."""
    names = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            svg = output.get("data", {}).get("image/svg+xml")
            if svg is None:
                continue
            svg = "".join(svg) if isinstance(svg, list) else svg
            name = f"fig-{len(names) + 1}.svg"
            (folder / name).write_text(svg, encoding="utf-8")
            (folder / name.replace(".svg", "-dark.svg")).write_text(svg.replace(INK, DARK_INK), encoding="utf-8")
            names.append(name)
    (folder / "figures.json").write_text(json.dumps(names), encoding="utf-8")
    return names
