"""The pages of the last clean build, reused when nothing they are made from has changed.

A warm build (nothing changed) used to spend most of its time rendering Markdown and adding
MathML, tooltips and download links to pages that came out byte for byte the same
(benchmarks/RESULTS.md, the warm build's profile). So each build process stores, per page, the
HTML `on_page_content` returns (with the table of contents, title and anchors MkDocs' render
sets), and the next build uses it instead of rendering the page again when both of these are
unchanged:
- the hash of every input of the build (`source_check.inputs`: every file of the project,
  termbase's own code, the dictionaries, the versions of the packages), with the language, the
  site's address, the configuration file, the theme and the renderers' versions; any change
  anywhere renders every page again, so a record edited, a snippet or a theme file can never
  leave an old tooltip, related term or code block behind;
- the page's Markdown as MkDocs renders it (so also the outdated-translation notice, which
  comes from git, not from the files).
Only a build that logged no warning or error at MkDocs' usual level (not `-q`, which hides
warnings, nor `-v`, under which MkDocs keeps no links to anchors), with every code block
verified, is stored, and only when the inputs did not change while it ran (an edit under
`mkdocs serve` mid-build). A preview (termbase/site/preview.py) never reads it: it renders
between builds, when no store is open.
"""

from __future__ import annotations

import hashlib
import json
import logging
import types

from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from termbase.run.cache import Cache, key

NAMESPACE = "pages"
# What renders a page besides the project's files (whose hash `source_check.inputs` already
# covers with PyYAML, latex2mathml and Markdown).
RENDERERS = ("mkdocs", "mkdocs-material", "pymdown-extensions", "mkdocs-jupyter", "nbconvert", "nbformat",
             "mistune", "Jinja2", "Pygments")
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


def _replay(page, stored: dict, files) -> None:
    """Set what MkDocs' render (or mkdocs-jupyter's) set on `page` when it was stored."""
    page.content = stored["html"]
    page.toc = get_toc(stored["toc"])
    page._title_from_render = stored["title_from_render"]
    if "title" in stored:
        page.title = stored["title"]
    anchors = stored["anchors"]
    page.present_anchor_ids = set(anchors) if anchors is not None else None
    links = stored["links_to_anchors"]
    if links is not None:
        linked = {uri: files.get_file_from_path(uri) for uri in links}
        page.links_to_anchors = {linked[uri]: dict(to) for uri, to in links.items() if linked[uri] is not None}


class PageCache:
    """One build's view of the stored pages: what it may reuse and what it renders anew."""

    def __init__(self, cache: Cache, inputs: str, lang: str, config):
        extra = json.dumps(config.extra.get("termbase", {}), sort_keys=True, default=str)
        self.cache, self.inputs = cache, inputs
        self.entry = key(inputs, lang, config.site_url or "", str(config.use_directory_urls), extra,
                         str(config.config_file_path), str(config.theme.name), packages=RENDERERS)
        self.stored: dict = self.cache.get_json(NAMESPACE, self.entry) or {}
        self.made: dict = {}
        self.hits: dict = {}  # src_uri -> what was stored, for the pages this build reuses
        self._digests: dict = {}  # src_uri -> hash of the Markdown MkDocs rendered
        self._count = _Count()
        logging.getLogger("mkdocs").addHandler(self._count)

    def wrap_render(self, page) -> None:
        """Make `page`'s next render reuse what was stored, if it renders the same Markdown;
        otherwise render as usual (MkDocs', or the one mkdocs-jupyter gave this page)."""
        src = page.file.src_uri
        usual = page.__dict__.get("render") or types.MethodType(Page.render, page)

        def render(self_, config, files):
            self_.__dict__.pop("render", None)  # once: this page object renders as usual again
            self._digests[src] = digest = _digest(self_.markdown or "")
            stored = self.stored.get(src)
            if stored is not None and stored["markdown"] == digest:
                _replay(self_, stored, files)
                self.hits[src] = stored
            else:
                usual(config, files)

        page.render = types.MethodType(render, page)

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
        level = logging.getLogger("mkdocs").getEffectiveLevel()
        if (not clean or self._count.count or inputs_now != self.inputs or not self.made
                or not logging.DEBUG < level <= logging.INFO):
            return
        try:
            self.cache.replace_json(NAMESPACE, self.entry, {**self.stored, **self.made})
            self.cache.keep_newest(NAMESPACE, KEEP)
        except OSError:  # a full disk, or another build removing old entries: only speed is lost
            pass

    def abandon(self) -> None:
        logging.getLogger("mkdocs").removeHandler(self._count)
