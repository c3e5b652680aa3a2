"""What termbase adds to each page's HTML, kept per page and reused while nothing it is made from
has changed.

`on_page_content` turns the HTML MkDocs rendered into the page's body: notebook outputs, MathML
for every formula, slimmer code, download links and a tooltip on every term (about a fifth of a
warm build, benchmarks/RESULTS.md). That step is kept per page under a key made of exactly what
it reads (termbase/site/plugin.py `_page_content` and what it calls):

common to the pages of one language (`PageCache.common`):
- the language, the site's address, `use_directory_urls` and the plugin's settings (`extra.termbase`:
  the repository and branch of the Colab links);
- the tooltip table of that language only (`Tooltips.table`: each term's name and synonyms -> its
  slug, and `Tooltips.titles`: each term's short definition as tooltip text); every page is matched
  against the whole table, so it cannot be narrowed to a page;
- the interface strings the additions print in that language (labels `notebook_snippets`,
  `notebook_download`, `permalink`; page `download_py`, `open_in_colab`);
- the notebook pages' style sheet, docs/notebooks/_notebook.css, which they inline;
- termbase's code (every .py file of the package, not its data folder): which function of it
  makes an addition is not worth tracking, and code edits are rare;
- the versions of the packages that render (`RENDERERS`) and of Python.
per page (`PageCache._entry`):
- its address and source path, and the HTML it is given (so its Markdown and everything the
  markers expanded into it: the record, the snippets' code, a failed block's message, the
  problems shown under serve);
- the bytes of its source file (a notebook page's cells say which ones fold: `_folds`);
- its own term's names in every language (`Tooltips.own`: no word inside them is linked);
- the file name each of its Python blocks downloads as (`downloads.names`: only the blocks the
  page shows, so a snippet edit renews only the pages that show it; their HTML holds its code).
So a record edit renews the additions of its language's pages only when it changes a name, a
synonym or a short definition (and of the pages that show its names otherwise: their HTML); a
snippet edit renews the pages that show it. MkDocs' own steps (Markdown, the theme) run for every
page, every build; nothing here reads or writes anything of MkDocs' but the HTML it hands the plugin.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from termbase.core.markdown import entry_slug
from termbase.run.cache import Cache, key
from termbase.site.code_blocks import python_blocks

NAMESPACE = "page-additions"
RENDERERS = ("mkdocs", "mkdocs-material", "pymdown-extensions", "mkdocs-jupyter", "latex2mathml", "Markdown",
             "PyYAML", "Pygments")
PYTHON = '<div class="language-python highlight">'  # downloads.BLOCK: a page without it has no download link
LABELS = (("notebook_snippets", "labels"), ("notebook_download", "labels"), ("permalink", "labels"),
          ("download_py", "page"), ("open_in_colab", "page"))


def _code(package: Path) -> str:
    """A hash of termbase's Python files (its data folder, termbase/data, holds no code: the
    records' part in the additions is in the tooltip table and the HTML)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "data"))
        for name in sorted(f for f in files if f.endswith(".py")):
            path = Path(root) / name
            try:
                content = path.read_bytes()
            except OSError:
                continue
            digest.update(str(path.relative_to(package)).encode("utf-8") + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


def _notebook_style(config) -> str:
    """A hash of the style sheet notebook pages inline (notebook_pages.page_content)."""
    docs = getattr(config, "docs_dir", None)
    try:
        return hashlib.sha256((Path(docs) / "notebooks" / "_notebook.css").read_bytes()).hexdigest() if docs else ""
    except OSError:
        return ""


def labels(base, lang: str) -> dict:
    """The interface strings the additions print in `lang` (a missing one: None, as it fails there)."""
    found = {}
    for name, group in LABELS:
        try:
            found[f"{group}.{name}"] = base.t(name, lang, group)
        except KeyError:
            found[f"{group}.{name}"] = None
    return found


class PageCache:
    """One build's view of the stored additions of its language's pages."""

    def __init__(self, cache: Cache, lang: str, config, tooltips, block_names: dict[str, str], labels: dict):
        settings = json.dumps(config.extra.get("termbase", {}), sort_keys=True, default=str)
        package = Path(__file__).resolve().parents[1]
        self.cache = cache
        self.tooltips = tooltips
        self.block_names = block_names
        table = json.dumps([[list(words), slug] for words, slug in sorted(tooltips.table.items())])
        titles = json.dumps(sorted(tooltips.titles.items()))
        self.common = key(lang, config.site_url or "", str(config.use_directory_urls), settings, table, titles,
                          json.dumps(labels, sort_keys=True), _code(package), _notebook_style(config),
                          packages=RENDERERS)
        self.reused = 0
        self._made: dict[tuple[str, str], str] = {}  # a page's key, from `get` to `put` (made once)

    def _entry(self, page, html: str) -> str:
        made = self._made.get((page.url, html))
        if made is None:
            made = self._made[page.url, html] = self._make_entry(page, html)
        return made

    def _make_entry(self, page, html: str) -> str:
        source = ""
        if page.file.abs_src_path:
            try:
                source = hashlib.sha256(Path(page.file.abs_src_path).read_bytes()).hexdigest()
            except OSError:
                source = "unreadable"
        own = sorted(" ".join(words) for words in self.tooltips.own.get(entry_slug(page.file.src_uri), ()))
        blocks = ([str(self.block_names.get(code.strip())) for code in python_blocks(html)]
                  if PYTHON in html else [])
        return key(self.common, page.url, page.file.src_uri, hashlib.sha256(html.encode("utf-8")).hexdigest(),
                   source, json.dumps(own), json.dumps(blocks), packages=())

    def get(self, page, html: str) -> dict | None:
        """{"html": ..., "downloads": ...} made before from the same `html` and inputs, or None."""
        stored = self.cache.get_json(NAMESPACE, self._entry(page, html))
        if stored is not None:
            self.reused += 1
            self._made.pop((page.url, html), None)
        return stored

    def put(self, page, html: str, made: str, downloads: dict) -> None:
        entry = self._entry(page, html)
        self._made.pop((page.url, html), None)
        try:
            self.cache.put_json(NAMESPACE, entry, {"html": made, "downloads": downloads})
        except OSError:  # a full disk: only speed is lost
            pass

    def close(self) -> None:
        try:
            self.cache.cleanup(NAMESPACE)
        except OSError:
            pass
