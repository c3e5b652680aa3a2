"""The pages of the last clean build, reused when nothing they are made from has changed.

A warm build (nothing changed) used to spend most of its time rendering Markdown and adding
MathML, tooltips and download links to pages that came out byte for byte the same
(benchmarks/RESULTS.md, the warm build's profile). So each build process stores, per page, the
HTML `on_page_content` returns (with the table of contents, title and anchors MkDocs' render
sets), and the next build uses it instead of rendering the page again when both of these are
unchanged:
- the hash of every input of the build (`source_check.inputs`: every file of the project,
  termbase's own code, the dictionaries, the versions of the packages), with the language and
  the site's address; any change anywhere renders every page again, so a record edited, a
  snippet or a theme file can never leave an old tooltip, related term or code block behind;
- the page's Markdown as the plugin hands it to MkDocs (so also the outdated-translation notice,
  which comes from git, not from the files).
Only a build that logged no warning or error, with every code block verified, is stored, and
only when the inputs did not change while it ran (an edit under `mkdocs serve` mid-build).
A preview (termbase/site/preview.py) never reads it: it renders between builds, when no store
is open.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import types

from mkdocs.structure.toc import get_toc

from termbase.run.cache import Cache, key

NAMESPACE = "pages"
# What renders a page besides the project's files (whose hash `source_check.inputs` already
# covers with PyYAML, latex2mathml and Markdown).
RENDERERS = ("mkdocs", "mkdocs-material", "pymdown-extensions", "mkdocs-jupyter", "nbconvert", "Pygments")
KEEP = 12  # stored builds kept (three languages, a few site addresses); each is a few MB


class _Count(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        self.count += 1


def _tokens(toc) -> list[dict]:
    return [{"level": a.level, "id": a.id, "name": a.title, "children": _tokens(a.children)} for a in toc]


def _digest(markdown: str) -> str:
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()


class PageCache:
    """One build's view of the stored pages: what it may reuse and what it renders anew."""

    def __init__(self, cache: Cache, inputs: str, lang: str, config):
        extra = json.dumps(config.extra.get("termbase", {}), sort_keys=True, default=str)
        self.cache, self.inputs = cache, inputs
        self.entry = key(inputs, lang, config.site_url or "", str(config.use_directory_urls), extra, packages=RENDERERS)
        self.stored: dict = self.cache.get_json(NAMESPACE, self.entry) or {}
        self.made: dict = {}
        self.hits: dict = {}  # src_uri -> what was stored, for the pages this build reuses
        self._digests: dict = {}  # src_uri -> hash of the Markdown this build handed MkDocs
        self._count = _Count()
        logging.getLogger("mkdocs").addHandler(self._count)

    def reuse(self, page, markdown: str) -> dict | None:
        """If `page` was rendered from this `markdown` before: make its render set what it set
        then, and return what was stored (else None: it renders as usual)."""
        src = page.file.src_uri
        self._digests[src] = _digest(markdown)
        stored = self.stored.get(src)
        if stored is None or stored["markdown"] != self._digests[src]:
            return None

        def render(self_, config, files):
            self_.__dict__.pop("render", None)  # once: this page object is rendered as usual again
            self_.content = stored["html"]
            self_.toc = get_toc(stored["toc"])
            self_._title_from_render = stored["title_from_render"]
            if "title" in stored:
                self_.title = stored["title"]
            anchors = stored["anchors"]
            self_.present_anchor_ids = set(anchors) if anchors is not None else None
            links = stored["links_to_anchors"]
            if links is not None:
                by_uri = {f.src_uri: f for f in files}
                self_.links_to_anchors = {by_uri[uri]: dict(to) for uri, to in links.items() if uri in by_uri}

        page.render = types.MethodType(render, page)
        self.hits[src] = stored
        return stored

    def made_page(self, page, html: str, downloads: dict) -> None:
        """Remember what this build made of `page` (`html`: what `on_page_content` returns)."""
        src = page.file.src_uri
        if src not in self._digests:
            return
        stored = {"markdown": self._digests[src], "html": html, "toc": _tokens(page.toc or []),
                  "title_from_render": page._title_from_render, "downloads": downloads,
                  "anchors": sorted(page.present_anchor_ids) if page.present_anchor_ids is not None else None,
                  "links_to_anchors": None if page.links_to_anchors is None else
                  {f.src_uri: dict(to) for f, to in page.links_to_anchors.items()}}
        if "title" in page.__dict__:
            stored["title"] = page.__dict__["title"]
        self.made[src] = stored

    def close(self, clean: bool, inputs_now: str | None) -> None:
        """Store this build's pages if it was `clean`, logged nothing and its inputs held still."""
        logging.getLogger("mkdocs").removeHandler(self._count)
        if not clean or self._count.count or inputs_now != self.inputs or not self.made:
            return
        folder = self.cache.path(NAMESPACE, self.entry)
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f".result-{os.getpid()}.json"  # renamed into place: readers see all or the old one
        part.write_text(json.dumps({**self.stored, **self.made}), encoding="utf-8")
        os.replace(part, folder / "result.json")
        self.cache.keep_newest(NAMESPACE, KEEP)

    def abandon(self) -> None:
        logging.getLogger("mkdocs").removeHandler(self._count)
