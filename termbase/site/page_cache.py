"""What termbase adds to each page's HTML, kept per page and reused while nothing it is made from
has changed.

`on_page_content` turns the HTML MkDocs rendered into the page's body: notebook outputs, MathML
for every formula, slimmer code, download links and a tooltip on every term (about a fifth of a
warm build, benchmarks/RESULTS.md). That step is kept per page under a key made of what it reads:
- the HTML it is given, so the page's Markdown and everything the markers expanded into it (the
  record, the snippets' code, a failed block's message, the problems shown under serve);
- the page's address and language, the site's address and the plugin's settings;
- the term base's data and the snippets (tooltips name every term; download links name the
  blocks), termbase's own code, and the versions of the packages that render.
So an edit renders again only the additions of the pages it touches, except an edit under
termbase/ or snippets/, which renews every page's. MkDocs' own steps (Markdown, the theme) run
for every page, every build; nothing here reads or writes anything of MkDocs' but the HTML it
hands the plugin.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from termbase.run.cache import Cache, key

NAMESPACE = "page-additions"
RENDERERS = ("mkdocs", "mkdocs-material", "pymdown-extensions", "mkdocs-jupyter", "latex2mathml", "Markdown",
             "PyYAML", "Pygments")


def _tree(*folders: Path) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = Path(root) / name
                try:
                    content = path.read_bytes()
                except OSError:
                    continue
                digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


class PageCache:
    """One build's view of the stored additions of its language's pages."""

    def __init__(self, cache: Cache, project, lang: str, config):
        settings = json.dumps(config.extra.get("termbase", {}), sort_keys=True, default=str)
        package = Path(__file__).resolve().parents[1]
        self.cache = cache
        self.common = key(lang, config.site_url or "", str(config.use_directory_urls), settings,
                          _tree(project.data_dir, project.snippets, package), packages=RENDERERS)
        self.reused = 0

    def _entry(self, page, html: str) -> str:
        return key(self.common, page.url, page.file.src_uri, hashlib.sha256(html.encode("utf-8")).hexdigest(),
                   packages=())

    def get(self, page, html: str) -> dict | None:
        """{"html": ..., "downloads": ...} made before from the same `html` and inputs, or None."""
        stored = self.cache.get_json(NAMESPACE, self._entry(page, html))
        if stored is not None:
            self.reused += 1
        return stored

    def put(self, page, html: str, made: str, downloads: dict) -> None:
        try:
            self.cache.put_json(NAMESPACE, self._entry(page, html), {"html": made, "downloads": downloads})
        except OSError:  # a full disk: only speed is lost
            pass

    def close(self) -> None:
        try:
            self.cache.cleanup(NAMESPACE)
        except OSError:
            pass
