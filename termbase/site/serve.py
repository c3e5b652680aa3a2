"""`mkdocs serve` for a site built in one process per language, made to show an edit at once.

MkDocs' server holds every request while it rebuilds, and its rebuild here is the default
language only (the other languages finish in their own processes afterwards). So a request is
held until the language it asks for has rebuilt, never longer, and until then a page someone
just edited is answered from its preview (termbase/site/preview.py). The browser's livereload
poll is answered the same way: a page that has a newer preview reloads into it, and reloads
again once its language has rebuilt, so what stays on screen is always the rebuilt page.

This reaches into MkDocs' server (its request handler, builder and epochs, MkDocs 1.6): if
those change, `install` says so and serve falls back to waiting for every rebuild.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import urlsplit

log = logging.getLogger("mkdocs.plugins.termbase")
NEEDED = ("_serve_request", "_epoch_cond", "_visible_epoch", "_wanted_epoch", "builder", "_inject_js_into_html",
          "poll_response_timeout")
POLL = re.compile(r"/livereload/([0-9]+)/[0-9]+")


class Previews:
    """The pages rendered ahead of a rebuild, by the path they are served at (`es/glossary/x/`),
    each kept until its language has rebuilt. Guarded by the server's own condition, the one
    its held requests and livereload polls wait on, so that a new preview wakes them."""

    def __init__(self, cond: threading.Condition, default_language: str):
        self.cond = cond
        self.default_language = default_language
        self.epoch = 0  # just below the epoch of the rebuild that is running
        self.pages: dict[str, tuple[bytes, int, str]] = {}  # path -> (HTML, epoch, language)

    def add(self, lang: str, pages: dict[str, str]) -> None:
        prefix = "" if lang == self.default_language else f"{lang}/"
        with self.cond:
            for url, html in pages.items():
                self.pages[prefix + url] = (html.encode("utf-8", errors="xmlcharrefreplace"), self.epoch, lang)
            self.cond.notify_all()
        if pages:
            log.info("termbase: showing %s ahead of the rebuild", ", ".join(prefix + url for url in pages))

    def built(self, lang: str) -> None:
        """`lang` has rebuilt: its pages are served from the site again."""
        with self.cond:
            self.pages = {path: page for path, page in self.pages.items() if page[2] != lang}
            self.cond.notify_all()


def install(server, config, plugin) -> Previews | None:
    """Wrap the server's builder and request handler; None (and a warning) if MkDocs changed them."""
    missing = [name for name in NEEDED if not hasattr(server, name)]
    if missing:
        log.warning("termbase: mkdocs serve has no %s; rebuilds wait for every language and show no "
                    "edit ahead of them", ", ".join(missing))
        return None
    mount = urlsplit(config.site_url or "/").path.rstrip("/") + "/"
    project = plugin.build.project
    previews = Previews(server._epoch_cond, project.default_language)
    serve, rebuild = server._serve_request, server.builder

    def language(path: str) -> str:
        first = path.split("/", 1)[0]
        return first if first in project.other_languages else project.default_language

    def settled(lang: str) -> bool:
        return server._visible_epoch == server._wanted_epoch and plugin.language_settled(lang)

    def page_key(path: str) -> str:
        key = path[len(mount):] if path.startswith(mount) else path.lstrip("/")
        return key[:-len("index.html")] if key.endswith("/index.html") or key == "index.html" else key

    def poll(epoch: int, referer: str) -> bytes:
        """A livereload poll from a page served at `epoch`: answer once there is something newer."""
        key = page_key(urlsplit(referer).path)

        def newer() -> int | None:
            page = previews.pages.get(key)
            if page is not None:
                return page[1] if page[1] > epoch else None
            return server._visible_epoch if server._visible_epoch > epoch and settled(language(key)) else None

        with server._epoch_cond:
            server._epoch_cond.wait_for(lambda: newer() is not None, timeout=server.poll_response_timeout)
            return b"%d" % (newer() or epoch)

    def serve_request(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if match := POLL.fullmatch(path):
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [poll(int(match[1]), environ.get("HTTP_REFERER", ""))]
        if path.startswith(mount):
            key = page_key(path)
            lang = language(key)
            with server._epoch_cond:
                server._epoch_cond.wait_for(lambda: key in previews.pages or settled(lang), timeout=plugin.timeout)
                page = previews.pages.get(key)
            if page is not None:
                content = server._inject_js_into_html(page[0], page[1])
                start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                          ("Content-Length", str(len(content))), ("X-Termbase-Preview", "1")])
                return [content]
            plugin.wait_for_language(lang)
        return serve(environ, start_response)

    def builder(*args, **kwargs):
        previews.epoch = server._wanted_epoch - 1
        try:
            plugin.preview(previews)
        except Exception as exc:  # noqa: BLE001 - a preview is never worth a rebuild
            log.warning("termbase: no preview (%r); the rebuild shows the page", exc)
        try:
            result = rebuild(*args, **kwargs)
        except BaseException:  # MkDocs now holds every request until a rebuild succeeds: so do previews
            for lang in project.languages:
                previews.built(lang)
            raise
        previews.built(project.default_language)
        return result

    server._serve_request = serve_request
    server.builder = builder
    return previews
