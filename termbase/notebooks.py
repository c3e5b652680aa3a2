"""Notebooks: one jupytext source per notebook, executed once, published in every language.

A notebook is `docs/notebooks/<name>.py` in jupytext's percent format. Its code cells are
shared by all languages; each prose cell carries `lang="en|es|da"` and comes in all three
languages, side by side. A code cell may embed snippet sections with a line
`# --8<-- "snippets/<module>.py:<section>"` (the same references pages use), so the notebook
runs the tested snippet code and a downloaded notebook runs without this repository.

At build time (the `on_files` hook, before mkdocs-jupyter wraps the files):

1. the code cells (snippets expanded) are executed with nbclient in an empty directory, or
   taken from `.termbase-cache/notebooks/<name>/run-<key>/` when the key (hash of the
   expanded code, this module's runner and the torch/matplotlib versions) is unchanged: an
   unchanged notebook is never executed again, not by the next build, the next language's
   build, or a `mkdocs serve` rebuild. A cell that raises fails the build, naming the file,
   the cell and its line;
2. figures are written as SVG files (a light and a dark variant, shown by Material's
   `#only-light` / `#only-dark`), not embedded in the page;
3. per language, a page notebook (prose of that language, outputs, figures as <img>) is
   rendered by mkdocs-jupyter (`execute: false`) at `notebooks/<name>/`, and a download
   notebook (figures embedded) is published next to it as `<name>.ipynb`.

`page_content` then slims mkdocs-jupyter's HTML (its ~600 KB of inlined JupyterLab CSS and
its scripts go; code blocks become Material's own, with its copy button) and adds the
download button in the page's language.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import html as html_lib
import json
import re
import shutil
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from termbase.i18n import current_lang, log
from termbase.model import DOCS, LANGS, ROOT, t

SOURCES = DOCS / "notebooks"
CACHE = ROOT / ".termbase-cache" / "notebooks"
RENDER_CACHE = ROOT / ".termbase-cache" / "mkdocs-jupyter"
STYLE = SOURCES / "_notebook.css"
# mkdocs-jupyter renders only the page notebooks, <PAGES>/<lang>/notebooks/<name>.ipynb
# (mkdocs.yml `include`); the run of each notebook is in <CACHE>/<name>/run-<key>/.
PAGES = CACHE / "pages"
RUNNER_VERSION = "3"  # bump to re-execute every notebook after changing how they are run
CELL_TIMEOUT_S = 120
INK = "#010101"  # matplotlib's text/axis colour while executing; the dark figures swap it
DARK_INK = "#d5d8e0"

INCLUDE = re.compile(r'^\s*#\s*--8<--\s+"([^"]+)"\s*$')
SECTION_MARK = re.compile(r"^\s*#\s*-+8<-+\s*\[(start|end):([\w-]+)\]\s*$")
CELL_HEADER = re.compile(r"^# %%")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

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


class NotebookError(PluginError):
    pass


# --- reading a source -------------------------------------------------------------------------

@dataclass
class Source:
    path: Path
    name: str
    cells: list  # jupytext cells
    lines: list[int]  # line of each cell's `# %%` header

    @property
    def shown(self) -> str:
        try:
            return self.path.relative_to(ROOT).as_posix()
        except ValueError:
            return str(self.path)


def source_paths() -> list[Path]:
    """The notebooks: docs/notebooks/*.py; files starting with `_` are helpers they embed."""
    return sorted(p for p in SOURCES.glob("*.py") if not p.name.startswith("_"))


def read_source(path: Path) -> Source:
    """The parsed source; parsed once per version of the file (titles and pages ask often)."""
    stat = path.stat()
    cells, headers = _parse(str(path), stat.st_mtime_ns, stat.st_size)
    return Source(path, path.stem, copy.deepcopy(cells), list(headers))


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime_ns: int, size: int):
    import jupytext

    text = Path(path).read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="py:percent")
    headers = [number for number, line in enumerate(text.splitlines(), 1) if CELL_HEADER.match(line)]
    if len(headers) != len(notebook.cells):  # text before the first `# %%` is a cell too
        headers = [1] * (len(notebook.cells) - len(headers)) + headers
    return list(notebook.cells), tuple(headers)


def title(name: str, lang: str) -> str:
    """The title of notebook `name` (its first `# ` heading) in `lang`."""
    return source_title(read_source(SOURCES / f"{name}.py"), lang) or name


def source_title(source: Source, lang: str) -> str | None:
    for cell in source.cells:
        if cell.cell_type == "markdown" and cell.metadata.get("lang", lang) == lang:
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def _sections(path: Path) -> dict[str, str]:
    """{section: text} as pymdownx.snippets cuts them (marker lines of other sections dropped)."""
    sections: dict[str, list[str]] = {}
    open_names: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = SECTION_MARK.match(line)
        if match:
            kind, name = match.groups()
            if kind == "start":
                open_names.append(name)
                sections[name] = []
            elif name in open_names:
                open_names.remove(name)
            continue
        for name in open_names:
            sections[name].append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def expand(code: str) -> str:
    """Replace each `# --8<-- "file.py:section"` line by that section, dedented; the parts of
    a cell are two blank lines apart, as the site's code blocks show them."""
    chunks: list[str] = []
    plain: list[str] = []
    for line in code.splitlines():
        match = INCLUDE.match(line)
        if not match:
            plain.append(line)
            continue
        chunks.append("\n".join(plain))
        plain = []
        file_part, _, section = match.group(1).partition(":")
        chunks.append(textwrap.dedent(_sections(ROOT / file_part)[section]))
    chunks.append("\n".join(plain))
    return "\n\n\n".join(chunk.strip("\n") for chunk in chunks if chunk.strip())


def problems(source: Source) -> list[tuple[int, str, str]]:
    """(line, what, fix) for everything that would make a notebook wrong in some language."""
    from termbase.check import snippet_section_exists

    found = []
    group: dict[str, int] = {}
    group_line = 1

    def close_group():
        if group:
            for lang in LANGS:
                if lang not in group:
                    found.append((group_line, f"prose cell has no '{lang}' version",
                                  f'add a `# %% [markdown] lang="{lang}"` cell next to it'))

    for cell, line in zip(source.cells, source.lines):
        lang = cell.metadata.get("lang") if cell.cell_type == "markdown" else None
        if lang is None:
            close_group()
            group = {}
        else:
            if lang not in LANGS:
                found.append((line, f"unknown language '{lang}'", f"use one of: {', '.join(LANGS)}"))
                continue
            if not group:
                group_line = line
            elif lang in group:  # a second cell of the same language starts the next group
                close_group()
                group, group_line = {}, line
            group[lang] = line
        if cell.cell_type == "code":
            for offset, text in enumerate(cell.source.splitlines(), 1):
                match = INCLUDE.match(text)
                if match:
                    missing = snippet_section_exists(match.group(1))
                    if missing:
                        found.append((line + offset, missing, "create it, or fix the reference `file.py:section`"))
    close_group()
    if not any(c.cell_type == "code" for c in source.cells):
        found.append((1, "notebook has no code cell", "add `# %%` cells with the code it runs"))
    for lang in LANGS:
        if source_title(source, lang) is None:
            found.append((1, f"no title in '{lang}'", f'start the first `lang="{lang}"` cell with `# Title`'))
    return found


def check(report) -> None:
    """Adds the notebooks' problems to a termbase.check Report."""
    for path in source_paths():
        try:
            source = read_source(path)
        except Exception as exc:  # jupytext raises several types
            report.add(path, 1, f"cannot read the notebook: {exc}", "write it in jupytext's percent format (`# %%` cells)")
            continue
        for line, what, fix in problems(source):
            report.add(path, line, what, fix)


# --- executing ---------------------------------------------------------------------------------

def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def code_cells(source: Source) -> list[tuple[int, str]]:
    """(line, expanded code) of each code cell, in order."""
    return [(line, expand(cell.source)) for cell, line in zip(source.cells, source.lines) if cell.cell_type == "code"]


def run_key(codes: list[str]) -> str:
    digest = hashlib.sha256()
    parts = [RUNNER_VERSION, SETUP, _version("torch"), _version("matplotlib"), _version("ipykernel"), *codes]
    for part in parts:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()[:20]


@dataclass
class Run:
    dir: Path
    cells: list  # executed code cells, in source order (outputs included)
    figures: list[str]  # file names of the light figures, in order; dark ones end in -dark.svg
    executed: bool  # False: taken from the cache


_locks: dict[str, threading.Lock] = {}


def run(source: Source) -> Run:
    """The executed code cells of a notebook, from the cache when its code has not changed."""
    import nbformat

    codes = code_cells(source)
    key = run_key([code for _, code in codes])
    base = CACHE / source.name
    run_dir = base / f"run-{key}"
    with _locks.setdefault(source.name, threading.Lock()):
        done = run_dir / "executed.ipynb"
        if done.is_file():
            log.info("termbase: notebook %s unchanged, not executed again (cached run %s)", source.shown, key)
            executed = nbformat.read(done, as_version=4)
            return Run(run_dir, executed.cells, json.loads((run_dir / "figures.json").read_text()), False)
        started = time.monotonic()
        executed = _execute(source, codes)
        figures = _write_figures(executed, run_dir)
        nbformat.write(executed, run_dir / "executed.ipynb.tmp")
        (run_dir / "executed.ipynb.tmp").replace(done)
        for old in base.glob("run-*"):  # one run per notebook is kept: the current one
            if old != run_dir:
                shutil.rmtree(old, ignore_errors=True)
        log.info("termbase: executed notebook %s in %.1f s", source.shown, time.monotonic() - started)
        return Run(run_dir, executed.cells, figures, True)


def _execute(source: Source, codes: list[tuple[int, str]]):
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
        raise NotebookError(_failure(source, codes, setup, notebook, exc)) from None
    except Exception as exc:  # the kernel did not start
        raise NotebookError(f"{source.shown}:1: cannot run the notebook ({type(exc).__name__}: {exc}) "
                            f"- install the requirements (ipykernel) and rebuild") from exc
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    notebook.cells = notebook.cells[1:]
    return notebook


def _failure(source: Source, codes, setup, notebook, exc) -> str:
    def error_of(cell):
        return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)

    cells = notebook.cells[1:]
    reached = [i for i, cell in enumerate(cells) if cell.get("execution_count") is not None]
    failed = reached[-1] if reached else None  # the cell that was running; None: the setup
    error = error_of(setup) if failed is None else error_of(cells[failed])
    if error:
        reason = f"{error['ename']}: {error['evalue']}"
        where = "the runner's setup" if failed is None else f"code cell {failed + 1} (line {codes[failed][0]})"
        traceback = ANSI.sub("", "\n".join(error.get("traceback", [])[-6:]))
        log.error("termbase: notebook %s, %s failed:\n%s", source.shown, where, traceback)
    else:
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if failed is None:
        return (f"{source.shown}:1: the notebook runner's setup raised {reason} "
                f"- check matplotlib and ipykernel (pip install -r requirements.txt)")
    return (f"{source.shown}:{codes[failed][0]}: code cell {failed + 1} of notebook '{source.name}' raised "
            f"{reason} - fix that cell; a notebook with an error is not published")


def _write_figures(notebook, run_dir: Path) -> list[str]:
    """Each SVG output to fig-N.svg (as drawn) and fig-N-dark.svg (ink for the dark scheme)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            svg = output.get("data", {}).get("image/svg+xml")
            if svg is None:
                continue
            svg = "".join(svg) if isinstance(svg, list) else svg
            name = f"fig-{len(names) + 1}.svg"
            (run_dir / name).write_text(svg, encoding="utf-8")
            (run_dir / name.replace(".svg", "-dark.svg")).write_text(svg.replace(INK, DARK_INK), encoding="utf-8")
            names.append(name)
    (run_dir / "figures.json").write_text(json.dumps(names), encoding="utf-8")
    return names


# --- one notebook per language -------------------------------------------------------------------

def language_notebooks(source: Source, result: Run, lang: str):
    """(page notebook, download notebook) for `lang`: its prose, the shared executed code."""
    import nbformat

    page = nbformat.v4.new_notebook()
    page.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    codes = iter(result.cells)
    figure = count = 0
    for index, cell in enumerate(source.cells):
        cell_id = f"{source.name}-{index}"[-64:]
        if cell.cell_type == "markdown":
            if cell.metadata.get("lang", lang) == lang:
                page.cells.append(nbformat.v4.new_markdown_cell(cell.source, id=cell_id))
            continue
        if cell.cell_type != "code":
            continue
        executed = next(codes)
        count += 1
        new = nbformat.v4.new_code_cell(executed.source, id=cell_id, execution_count=count)
        new.outputs = copy.deepcopy(executed.outputs)
        for output in new.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
        embedded = [INCLUDE.match(line) for line in cell.source.splitlines() if line.strip()]
        if embedded and all(embedded):  # only snippet sections: folded on the page
            new.metadata["termbase_fold"] = [m.group(1).split(":")[0].rsplit("/", 1)[-1] for m in embedded]
        if "alt" in cell.metadata:
            alt = cell.metadata["alt"]
            new.metadata["alt"] = alt.get(lang, "") if isinstance(alt, dict) else str(alt)
        page.cells.append(new)
    download = copy.deepcopy(page)
    for cell in page.cells:
        if cell.cell_type != "code":
            continue
        alt = cell.metadata.pop("alt", "") or t("notebook_figure", lang)
        for output in cell.outputs:
            data = output.get("data", {})
            if "image/svg+xml" not in data:
                continue
            name = result.figures[figure]
            figure += 1
            escaped = html_lib.escape(alt, quote=True)
            output["data"] = {"text/html": (
                f'<img src="{name}#only-light" alt="{escaped}">'
                f'<img src="{name.replace(".svg", "-dark.svg")}#only-dark" alt="{escaped}">'
            )}
            output["metadata"] = {}
    for cell in download.cells:
        cell.metadata.pop("alt", None)
        cell.metadata.pop("termbase_fold", None)
    return page, download


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _prepare_all() -> list[tuple[Source, Run]]:
    sources = [read_source(path) for path in source_paths()]
    for source in sources:
        found = problems(source)
        if found:
            line, what, fix = found[0]
            raise NotebookError(f"{source.shown}:{line}: {what} - {fix}")
    with ThreadPoolExecutor(max_workers=max(1, min(4, len(sources)))) as pool:
        runs = list(pool.map(run, sources))
    return list(zip(sources, runs))


# --- MkDocs -------------------------------------------------------------------------------------

def configure(config) -> None:
    """Each language build keeps its own mkdocs-jupyter cache: that plugin evicts every cached
    page its current build did not use, so one shared directory would be emptied 3 times a run."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is not None:
        plugin.config["cache_dir"] = str(RENDER_CACHE / current_lang(config))
        plugin.config["execute"] = False  # executed here, once, with errors failing the build
        plugin.config["allow_errors"] = False


def add_files(files: Files, config) -> Files:
    """Drop the sources from the site; add each notebook's page, download and figures in the
    language being built. Runs before mkdocs-jupyter's on_files wraps the page notebooks."""
    import nbformat

    lang = current_lang(config)
    files = Files([f for f in files if not _is_source(f)])
    for source, result in _prepare_all():
        page, download = language_notebooks(source, result, lang)
        folder = f"notebooks/{source.name}"
        page_root = PAGES / lang  # a real src_dir: mkdocs-jupyter's NotebookFile needs one
        download_path = CACHE / source.name / lang / f"{source.name}.ipynb"
        _write_if_changed(page_root / f"{folder}.ipynb", nbformat.writes(page) + "\n")
        _write_if_changed(download_path, nbformat.writes(download) + "\n")
        files.append(File(f"{folder}.ipynb", str(page_root), config.site_dir, config.use_directory_urls))
        files.append(File.generated(config, f"{folder}/{source.name}.ipynb", abs_src_path=str(download_path)))
        for name in result.figures:
            for variant in (name, name.replace(".svg", "-dark.svg")):
                files.append(File.generated(config, f"{folder}/{variant}", abs_src_path=str(result.dir / variant)))
    return files


def _is_source(file) -> bool:
    """Notebook sources and their helpers (`_*`) are not published as they are."""
    path = Path(file.abs_src_path or "")
    return path.parent == SOURCES and (path.suffix == ".py" or path.name.startswith("_"))


def is_notebook_page(page) -> bool:
    return Path(page.file.abs_src_path or "").is_relative_to(PAGES)


CODE_INPUT = re.compile(
    r'<div class="jp-CodeMirrorEditor[^"]*"[^>]*>\s*(?:<div class="celltoolbar">.*?</div>\s*)?'
    r'<div class="CodeMirror[^"]*">\s*<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>\s*'
    r'<div class="highlight-ipynb[^"]*"><pre>(?:<span></span>)?(.*?)</pre></div>\s*'
    r'<div class="clipboard-copy-txt"[^>]*>.*?</div>\s*</div>\s*</div>',
    re.S,
)


def _folds(page_notebook: str) -> list:
    """Per code cell of a page notebook: the snippet files it only embeds, or None."""
    cells = json.loads(Path(page_notebook).read_text(encoding="utf-8"))["cells"]
    return [c["metadata"].get("termbase_fold") for c in cells if c["cell_type"] == "code"]


def page_content(html: str, page, config) -> str:
    """mkdocs-jupyter's HTML, slimmed to the site's look: no inlined JupyterLab CSS, no scripts
    (clipboard, MathJax and Mermaid from CDNs), Material's code blocks; plus a download button."""
    if not is_notebook_page(page):
        return html
    lang = current_lang(config)
    html = re.sub(r"<style\b.*?</style>|<script\b.*?</script>|<!--.*?-->", "", html, flags=re.S)
    folds = iter(_folds(page.file.abs_src_path))

    def code_block(match: re.Match) -> str:
        # Code and outputs stay out of the search index: a notebook is found by its prose, and its
        # code would outrank the glossary entries for every identifier it mentions.
        block = f'<div class="highlight" data-search-exclude><pre><code>{match.group(1)}</code></pre></div>'
        fold = next(folds, None)
        if not fold:
            return block
        # Cells that only embed the site's snippets are long and shown on the glossary entries:
        # folded, with the files they come from as the summary.
        files = ", ".join(f"<code>{html_lib.escape(name)}</code>" for name in dict.fromkeys(fold))
        summary = f'<summary>{html_lib.escape(t("notebook_snippets", lang))} {files}</summary>'
        return f'<details class="example termbase-nb-snippets">{summary}{block}</details>'

    html = CODE_INPUT.sub(code_block, html)
    html = re.sub(r'<div class="jp-Collapser[^"]*">\s*</div>\s*', "", html)
    # Outputs stay out of search too. Material's search parser compares elements by tag name, so an
    # excluded <div> is let go at its first nested </div>: mark each output <pre> (never nested).
    html = re.sub(r'(<div class="jp-RenderedText[^"]*"[^>]*>\s*)<pre>', r"\1<pre data-search-exclude>", html)
    html = re.sub(r' tabindex="0"| id="cell-id=[^"]*"| data-jp-theme-[a-z]+="[^"]*"', "", html)
    html = re.sub(r'(<h1 [^>]*>.*?)<a class="anchor-link" href="[^"]*">¶</a>', r"\1", html, count=1, flags=re.S)
    html = html.replace('<a class="anchor-link"', '<a class="headerlink" title="Permanent link"')
    if "jp-CodeMirrorEditor" in html or "clipboard-copy" in html:
        raise NotebookError(f"{page.file.src_uri}: mkdocs-jupyter's HTML changed; update termbase/notebooks.py (CODE_INPUT)")
    name = Path(page.file.abs_src_path).stem
    button = (f'<p class="termbase-nb-download"><a class="md-button" href="{name}.ipynb" download>'
              f'{html_lib.escape(t("notebook_download", lang))}</a></p>')
    html = re.sub(r"(</h1>)", r"\1\n" + button.replace("\\", "\\\\"), html, count=1)
    style = re.sub(r"/\*.*?\*/|\s*\n\s*", "", STYLE.read_text(encoding="utf-8"), flags=re.S)
    return f'<style>{style}</style>\n{html.strip()}'
