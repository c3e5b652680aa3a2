"""`mkdocs serve` for a site built in one process per language, through MkDocs' public API only.

MkDocs' server calls `server.builder` each time a watched file changes, holds every request
while it runs, and then tells the open pages to reload (livereload). The plugin's `on_serve`
wraps that builder (a public attribute of the server) so that it returns within a second:
1. it asks each language's process (termbase/site/language_process.py) for the pages the saved
   files are the source of (termbase/site/preview.py), and waits for the processes that are
   not building: they write them straight into the folder MkDocs serves (`server.root`), so the
   edited page is on screen as soon as the builder returns;
2. it wakes a thread (`Rebuilds`) that checks the sources (the check, the notebooks, the code
   blocks, all cached) and then asks every language, the default one included, to rebuild in
   its process (termbase/site/supervisor.py). Each builds into a folder of its own and then
   publishes what changed into the served folder (termbase/site/publish.py): until then the
   last published pages are served, never a half-built folder;
3. when a language has published (or failed, or a preview came from a process that was
   building), this module touches a file in a folder the server watches (`server.watch`), so
   MkDocs calls the builder again: nothing under the sources changed, it returns at once, and
   MkDocs tells the open pages to reload into what was published.
`/.termbase/serve.json` in the served site says how far each language has got: `changes` counts
the saves the builder has seen, and a language's `built` is the count its last finished build
read (its `failed` names why that build failed). Once every `built` equals `changes`, every
page is what `mkdocs build` writes from the same sources (a test compares them).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from termbase.core import model
from termbase.site import preview, publish, watch

log = logging.getLogger("mkdocs.plugins.termbase")
STATE = ".termbase"  # in the served folder: serve.json, the watched folder, the languages' builds
PREVIEW_WAIT = 10.0  # seconds the builder (and so every request) waits for an idle process's previews
SKIPPED = {"__pycache__", ".pytest_cache", "artifacts", ".termbase-cache"}


def sources(project, config_file: str | None) -> dict[str, int]:
    """Every file the site reads that the server watches, with its modification time."""
    found = {}
    roots = [project.docs, *watch.watched(project)] + ([Path(config_file)] if config_file else [])
    for root in roots:
        if root.is_file():
            found[str(root)] = root.stat().st_mtime_ns
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIPPED and not d.startswith(".")]
            for name in files:
                path = os.path.join(folder, name)
                try:
                    found[path] = os.stat(path).st_mtime_ns
                except OSError:
                    continue
    return found


def changed(before: dict[str, int], now: dict[str, int]) -> list[str]:
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


class Site:
    """The served site: what each language's process has published, and the wrapped builder."""

    def __init__(self, server, config, plugin):
        self.plugin = plugin
        self.project = plugin.build.project
        self.config_file = config.config_file_path
        self.root = Path(server.root)
        self.state = self.root / STATE
        self.reload = self.state / "reload"  # watched: a file written here makes MkDocs reload the pages
        self.reload.mkdir(parents=True, exist_ok=True)
        self.url = (config.site_url or "/").rstrip("/")
        self.lock = threading.Condition()
        self.changes = 0
        self.done = {lang: 0 for lang in self.project.languages}
        self.done[self.project.default_language] = -1  # until its process has built once (below)
        self.failed: dict[str, str | None] = {lang: None for lang in self.project.languages}
        self.waiting: set[str] = set()  # languages whose previews the builder waits for
        self.snapshot = sources(self.project, self.config_file)
        self.rebuilds = Rebuilds(self)
        self._write_state()
        server.watch(str(self.reload))

    # --- where a language is published -------------------------------------------------------

    def target(self, lang: str) -> Path:
        return self.root if lang == self.project.default_language else self.root / lang

    def request(self, lang: str, problems: list, change: int) -> dict:
        default = lang == self.project.default_language
        keep = sorted({*self.project.other_languages, STATE}) if default else []
        return {"site_dir": str(self.state / "builds" / lang), "site_url": self.url + ("/" if default else f"/{lang}/"),
                "dirty": False, "serve": problems, "publish": str(self.target(lang)), "keep": keep,
                "change": change}

    # --- MkDocs' builder, wrapped -------------------------------------------------------------

    def builder(self, *args, **kwargs) -> None:
        now = sources(self.project, self.config_file)
        edited, self.snapshot = changed(self.snapshot, now), now
        if not edited:
            return  # a language published, or a late preview: MkDocs reloads the open pages
        with self.lock:
            self.changes += 1
        self._write_state()
        shown = [path for path in edited if _previewable(path, self.project)]
        langs = preview.languages_of(shown, self.project) if shown else set()
        supervisor = self.plugin.language_builds
        if langs and supervisor is not None:
            with self.lock:
                asked = supervisor.preview({lang: {"preview": shown, "publish": str(self.target(lang))}
                                            for lang in langs})
                self.waiting = set(asked)
                if not self.lock.wait_for(lambda: not self.waiting, timeout=PREVIEW_WAIT):
                    log.warning("termbase: no preview from %s within %.0f s; the rebuild shows the page",
                                ", ".join(sorted(self.waiting)), PREVIEW_WAIT)
                self.waiting = set()
        self.rebuilds.wanted()

    # --- what the languages' processes report (supervisor.py's listener) ---------------------

    def previewed(self, lang: str, urls: list[str]) -> None:
        prefix = "" if lang == self.project.default_language else f"{lang}/"
        if urls:
            log.info("termbase: showing %s ahead of the rebuild", ", ".join(prefix + url for url in urls))
        with self.lock:
            late = lang not in self.waiting
            self.waiting.discard(lang)
            self.lock.notify_all()
        if late and urls:
            self._touch()

    def built(self, lang: str, outcome, request: dict | None) -> None:
        status, message = outcome
        with self.lock:
            if request is not None and "change" in request:
                self.done[lang] = request["change"]
            self.failed[lang] = None if status == "ok" else message
        if status == "ok" and request is not None and "publish" in request:
            log.info("termbase: the %s site is rebuilt and published", lang)
        self._write_state()
        self._touch()

    def failed_pages(self, lang: str, message: str) -> None:
        """A language whose build failed or hung: its pages say so (problems.py), never a 404."""
        from termbase.site import problems

        problems.failure_pages(model.TermBase(self.project), str(self.root), lang, message)

    # --- the state file and the reload ---------------------------------------------------------

    def _write_state(self) -> None:
        with self.lock:
            state = {"changes": self.changes,
                     "languages": {lang: {"built": self.done[lang], "failed": self.failed[lang]}
                                   for lang in self.project.languages}}
            try:
                publish.write(self.state / "serve.json", json.dumps(state, indent=1).encode("utf-8"))
            except OSError as exc:
                log.warning("termbase: could not write %s: %s", self.state / "serve.json", exc)

    def _touch(self) -> None:
        try:
            publish.write(self.reload / "published", str(self.changes).encode("utf-8"))
        except OSError as exc:
            log.warning("termbase: could not tell the server to reload the pages: %s", exc)

    def close(self) -> None:
        self.rebuilds.close()


def _previewable(path: str, project) -> bool:
    """A page or a term record: what a preview can be rendered from."""
    p = Path(path)
    return (p.suffix == ".md" and p.is_relative_to(project.docs)) or (p.suffix == ".yml" and p.parent == project.terms_dir)


class Rebuilds:
    """The thread that checks the sources and asks every language to rebuild, once per save
    (saves made while it checks are taken together, in the next round)."""

    def __init__(self, site: Site):
        self.site = site
        self.cond = threading.Condition()
        self.asked = 0
        self.done = 0
        self.closing = False
        self.thread = threading.Thread(target=self._run, name="termbase-rebuilds", daemon=True)
        self.thread.start()

    def wanted(self) -> None:
        with self.cond:
            self.asked += 1
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify_all()

    def _run(self) -> None:
        site = self.site
        while True:
            with self.cond:
                self.cond.wait_for(lambda: self.asked > self.done or self.closing)
                if self.closing:
                    return
                self.done = self.asked
            with site.lock:
                change = site.changes
            try:
                problems = site.plugin.serve_problems()
            except Exception as exc:  # noqa: BLE001 - the pages say it; serving goes on
                log.warning("termbase: the sources could not be checked: %r", exc)
                from termbase.site.problems import Note

                problems = [Note(f"the sources could not be checked: {exc!r}")]
            supervisor = site.plugin.language_builds
            if supervisor is None:
                continue
            log.info("termbase: rebuilding %s in the background", ", ".join(site.project.languages))
            supervisor.start(lambda lang: site.request(lang, problems, change))


def install(server, config, plugin) -> Site:
    """Serve through `server.builder` and `server.watch`; the default language gets a process
    of its own, which builds once now so that it can render previews."""
    site = Site(server, config, plugin)
    supervisor = plugin.language_builds
    supervisor.listener = site
    supervisor.on_failed = site.failed_pages
    supervisor.add(site.project.default_language)
    supervisor.ask(site.project.default_language, site.request(site.project.default_language, plugin.problems, 0))
    server.builder = site.builder
    return site
