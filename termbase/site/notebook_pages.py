"""The notebooks on the site: per language, a page notebook (that language's prose, the shared
executed code and outputs, figures as <img>) rendered by mkdocs-jupyter (`execute: false`) at
`notebooks/<name>/`, and a download notebook (figures embedded) published beside it.

`page_content` then slims mkdocs-jupyter's HTML (its ~600 KB of inlined JupyterLab CSS and its
scripts go; code blocks become Material's own, with its copy button) and adds the download
button in the page's language. Every pattern it rewrites is checked to be there: when
mkdocs-jupyter's markup changes, the build says so instead of publishing a half-styled page.
"""

from __future__ import annotations

import copy
import html as html_lib
import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from termbase.core.model import TermBase
from termbase.core import notebook_source
from termbase.core import markdown
from termbase.core.notebook_source import Source
from termbase.run.notebooks import Run
from termbase.site import publish


def pages_dir(base: TermBase) -> Path:
    # mkdocs-jupyter renders only the page notebooks, <pages>/<lang>/notebooks/<name>.ipynb
    # (mkdocs.yml `include`): a real src_dir, which its NotebookFile needs.
    return base.project.cache_dir / "notebook-pages"


def configure(config, base: TermBase, lang: str, command: str) -> None:
    """Each language build keeps its own mkdocs-jupyter cache, and so do `mkdocs serve` and
    `mkdocs build` (`command`): that plugin evicts every cached page its current build did not
    use, and reads a page it found a moment before, so a serve and a build running at once in one
    directory emptied it under each other ("No such file or directory", seen in CI)."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is not None:
        plugin.config["cache_dir"] = str(base.project.cache_dir / "mkdocs-jupyter" / command / lang)
        plugin.config["execute"] = False  # executed by termbase, once, a failing cell failing the build
        plugin.config["allow_errors"] = False


def language_notebooks(base: TermBase, source: Source, result: Run, lang: str, claim_mark):
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
                text = markdown.render(cell.source, lambda name: None, claim_mark)
                page.cells.append(nbformat.v4.new_markdown_cell(text, id=cell_id))
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
        embedded = [markdown.NOTEBOOK_INCLUDE.match(line) for line in cell.source.splitlines() if line.strip()]
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
        alt = cell.metadata.pop("alt", "") or base.t("notebook_figure", lang)
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
        if cell.cell_type == "markdown":
            cell.source = re.sub(r'<a class="termbase-claim"[^>]*>.*?</a>', "", cell.source)
    return page, download


def _write_if_changed(path: Path, text: str) -> None:
    """In one step (publish.write): a serve and a build running at once both write the page
    notebooks, and mkdocs-jupyter must never read one half written."""
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        publish.write(path, text.encode("utf-8"))


def add_files(files: Files, config, base: TermBase, lang: str, runs, claim_mark) -> Files:
    """Drop the sources from the site; add each notebook's page, download and figures in the
    language being built. Runs before mkdocs-jupyter's on_files wraps the page notebooks."""
    import nbformat

    sources_dir = base.project.docs / "notebooks"
    files = Files([f for f in files if not _is_source(f, sources_dir)])
    for source, result in runs:
        page, download = language_notebooks(base, source, result, lang, claim_mark)
        folder = f"notebooks/{source.name}"
        page_root = pages_dir(base) / lang
        download_path = base.project.cache_dir / "notebook-downloads" / lang / f"{source.name}.ipynb"
        _write_if_changed(page_root / f"{folder}.ipynb", nbformat.writes(page) + "\n")
        _write_if_changed(download_path, nbformat.writes(download) + "\n")
        files.append(File(f"{folder}.ipynb", str(page_root), config.site_dir, config.use_directory_urls))
        files.append(File.generated(config, f"{folder}/{source.name}.ipynb", abs_src_path=str(download_path)))
        for name in result.figures:
            for variant in (name, name.replace(".svg", "-dark.svg")):
                files.append(File.generated(config, f"{folder}/{variant}", abs_src_path=str(result.dir / variant)))
    return files


def _is_source(file, sources_dir: Path) -> bool:
    """Notebook sources and their helpers (`_*`) are not published as they are."""
    path = Path(file.abs_src_path or "")
    return path.parent == sources_dir and (path.suffix == ".py" or path.name.startswith("_"))


def is_notebook_page(page, base: TermBase) -> bool:
    return Path(page.file.abs_src_path or "").is_relative_to(pages_dir(base))


CODE_INPUT = re.compile(
    r'<div class="jp-CodeMirrorEditor[^"]*"[^>]*>\s*(?:<div class="celltoolbar">.*?</div>\s*)?'
    r'<div class="CodeMirror[^"]*">\s*<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>\s*'
    r'<div class="highlight-ipynb[^"]*"><pre>(?:<span></span>)?(.*?)</pre></div>\s*'
    r'<div class="clipboard-copy-txt"[^>]*>.*?</div>\s*</div>\s*</div>',
    re.S,
)
OUTPUT_PRE = re.compile(r'(<div class="jp-RenderedText[^"]*"[^>]*>\s*)<pre>')
ANCHOR = '<a class="anchor-link"'


def _folds(page_notebook: str) -> list:
    """Per code cell of a page notebook: the snippet files it only embeds, or None."""
    cells = json.loads(Path(page_notebook).read_text(encoding="utf-8"))["cells"]
    return [c["metadata"].get("termbase_fold") for c in cells if c["cell_type"] == "code"]


def _changed(page, what: str) -> PluginError:
    return PluginError(f"{page.file.src_uri}: mkdocs-jupyter's HTML changed ({what}); "
                       "update termbase/site/notebook_pages.py to its new markup")


def page_content(html: str, page, base: TermBase, lang: str, repository: tuple[str, str] | None = None) -> str:
    """mkdocs-jupyter's HTML, slimmed to the site's look: no inlined JupyterLab CSS, no scripts
    (clipboard, MathJax and Mermaid from CDNs), Material's code blocks; plus a download button."""
    if not is_notebook_page(page, base):
        return html
    html = re.sub(r"<style\b.*?</style>|<script\b.*?</script>|<!--.*?-->", "", html, flags=re.S)
    folds = _folds(page.file.abs_src_path)
    unfolded = iter(folds)

    def code_block(match: re.Match) -> str:
        # Code and outputs stay out of the search index: a notebook is found by its prose, and its
        # code would outrank the glossary entries for every identifier it mentions.
        block = f'<div class="highlight" data-search-exclude><pre><code>{match.group(1)}</code></pre></div>'
        fold = next(unfolded, None)
        if not fold:
            return block
        # Cells that only embed the site's snippets are long and shown on the glossary entries:
        # folded, with the files they come from as the summary.
        names = ", ".join(f"<code>{html_lib.escape(name)}</code>" for name in dict.fromkeys(fold))
        summary = f'<summary>{html_lib.escape(base.t("notebook_snippets", lang))} {names}</summary>'
        return f'<details class="example termbase-nb-snippets">{summary}{block}</details>'

    html, blocks = CODE_INPUT.subn(code_block, html)
    if blocks != len(folds):
        raise _changed(page, f"{blocks} code inputs found for {len(folds)} code cells")
    html = re.sub(r'<div class="jp-Collapser[^"]*">\s*</div>\s*', "", html)
    # Outputs stay out of search too. Material's search parser compares elements by tag name, so an
    # excluded <div> is let go at its first nested </div>: mark each output <pre> (never nested).
    html = OUTPUT_PRE.sub(r"\1<pre data-search-exclude>", html)
    html = re.sub(r'(jp-OutputArea-output"[^>]*)? tabindex="0"| id="cell-id=[^"]*"| data-jp-theme-[a-z]+="[^"]*"', lambda m: m[0] if m[1] else "", html)
    html = re.sub(r'(<h1 [^>]*>.*?)<a class="anchor-link" href="[^"]*">¶</a>', r"\1", html, count=1, flags=re.S)
    html = html.replace(ANCHOR, f'<a class="headerlink" title="{html_lib.escape(base.t("permalink", lang))}"')
    if "jp-CodeMirrorEditor" in html or "clipboard-copy" in html:
        raise _changed(page, "code inputs left after rewriting them")
    name = Path(page.file.abs_src_path).stem
    colab = ""
    if repository:
        url = notebook_source.colab_url(repository[0], repository[1], lang, name)
        colab = (f' <a class="md-button" href="{url}" target="_blank" rel="noopener">'
                 f'{html_lib.escape(base.t("open_in_colab", lang, "page"))}</a>')
    button = (f'<p class="termbase-nb-download"><a class="md-button" href="{name}.ipynb" download>'
              f'{html_lib.escape(base.t("notebook_download", lang))}</a>{colab}</p>')
    html, titles = re.subn(r"(</h1>)", r"\1\n" + button.replace("\\", "\\\\"), html, count=1)
    if not titles:
        raise _changed(page, "no <h1> title")
    style = re.sub(r"/\*.*?\*/|\s*\n\s*", "", (base.project.docs / "notebooks" / "_notebook.css").read_text(encoding="utf-8"),
                   flags=re.S)
    return f'<style>{style}</style>\n{html.strip()}'
