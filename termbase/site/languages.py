"""One MkDocs run builds the site once per language: the default language at `/`, each other
language under `/<code>/`, each a complete Material site with its own theme strings, search
index (that language's stemmer), sitemap and 404 page. Pages keep one slug in every language
(`glossary/x.da.md` is served as `/da/glossary/x/`).

Why not mkdocs-static-i18n: its single search index mixes languages, its 404 page is in one
language, and it drops mkdocs-jupyter's files.

The other languages build in parallel with the default one, each in a process of its own
started with `spawn` (a fresh interpreter, so nothing is shared with the parent and nothing
is forked from a process that runs threads, such as `mkdocs serve`'s). A language that fails
never stops another: the parent waits for all of them, each with a deadline, and then fails
the build naming every language that failed or hung.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import sys
import threading
import time
from urllib.parse import urlsplit

from mkdocs.structure.files import File, Files

from termbase.core.model import TermBase, page_lang
from termbase.core.project import repository

log = logging.getLogger("mkdocs.plugins.termbase")


class Switcher:
    """Stands in `config.extra.alternate`: truthy, so Material's header shows the language
    switcher (overrides/partials/alternate.html renders it from `config.extra.termbase`), and
    not iterable, so Material's <head> writes no `<link rel="alternate">` of its own (its script
    would fetch `<link>/sitemap.xml` from each; overrides/main.html writes the hreflang links)."""

    def __bool__(self) -> bool:
        return True


def site_root(config, base: TermBase, lang: str) -> str:
    """The URL path of the default language's site root, e.g. `/` or `/attention-glossary/`."""
    path = urlsplit(site_base(config, base, lang)).path or "/"
    return path if path.endswith("/") else path + "/"


def site_base(config, base: TermBase, lang: str) -> str:
    """The absolute URL of the default language's root (a language site's URL ends in <lang>/)."""
    url = config.site_url or "/"
    if lang != base.default_language:
        url = url.rstrip("/").rsplit("/", 1)[0]
    return url if url.endswith("/") else url + "/"


def prefix(base: TermBase, lang: str) -> str:
    return "" if lang == base.default_language else f"{lang}/"


def configure(config, base: TermBase, lang: str) -> None:
    """Switch a freshly loaded config to the language it builds."""
    config.theme["language"] = lang
    config.site_name = base.ui["site_name"][lang]
    config.nav = _translate_nav(config.nav, base, lang)
    toc = config.mdx_configs.setdefault("toc", {})
    toc["permalink_title"] = base.t("permalink", lang)
    # Material has no translation for the palette toggle's name: it is what mkdocs.yml says.
    for palette in config.theme.get("palette") or []:
        toggle = palette.get("toggle")
        if toggle:
            toggle["name"] = base.t("to_light" if palette.get("scheme") == "slate" else "to_dark", lang)
    config.extra["alternate"] = Switcher()
    root = site_root(config, base, lang)
    home = root + prefix(base, lang)
    config.extra["termbase"] = {
        "lang": lang,
        "home": home,
        "glossary": home + "glossary/",
        "glossary_label": base.nav_label("Glossary", lang),
        "not_found": base.t("not_found", lang),
        "not_found_text": base.t("not_found_text", lang),
        "made_with": base.t("made_with", lang),
        "repository": repository(base.project.root),
        "branch": os.environ.get("REPO_BRANCH", "main"),
        "switcher": [],
        "hreflang": [],
        # The one /404.html a static host serves for every missing path shows the page of the
        # language the address asks for (docs/assets/javascripts/not-found.js).
        "not_found_data": {"root": root, "languages": list(base.project.other_languages)}
        if lang == base.default_language else None,
    }


def _translate_nav(items, base: TermBase, lang: str):
    if items is None:
        return None
    out = []
    for item in items:
        if isinstance(item, dict):
            (label, value), = item.items()
            value = _translate_nav(value, base, lang) if isinstance(value, list) else value
            out.append({base.nav_label(label, lang): value})
        else:
            out.append(item)
    return out


def localize_files(files: Files, config, base: TermBase, lang: str) -> Files:
    """Keep this language's pages under their language-neutral path; drop other languages'."""
    kept = []
    for file in files:
        parsed = page_lang(file.src_uri, base.languages)
        if parsed is None:
            kept.append(file)
        elif parsed[1] == lang:
            kept.append(File.generated(config, parsed[0], abs_src_path=file.abs_src_path))
    return Files(kept)


def set_page_links(config, base: TermBase, lang: str, url: str) -> None:
    """The switcher (site-root-relative) and the hreflang links (absolute) of one page; for the
    404 page (url ""), each language's home."""
    root = site_root(config, base, lang)
    absolute = site_base(config, base, lang)
    extra = config.extra["termbase"]
    extra["switcher"] = [{"name": base.language_name(other), "lang": other,
                          "link": root + prefix(base, other) + url} for other in base.languages]
    extra["hreflang"] = [{"lang": other, "href": absolute + prefix(base, other) + url} for other in base.languages]
    extra["hreflang"].append({"lang": "x-default", "href": absolute + url})


# --- the other languages' builds -----------------------------------------------------------------

class Worker:
    """One language's build process, and what it answered. A thread reads its answers, so the
    main process can wait for it with a deadline, or (under `mkdocs serve`) not at all."""

    def __init__(self, lang: str, process, conn, owner: "LanguageBuilds"):
        self.lang = lang
        self.owner = owner  # whose listener hears of previews and finished builds
        self.process = process
        self.conn = conn
        self.pending = 0  # builds asked for and not answered yet
        self.started = 0.0
        self.answers: list[tuple[str, str | None]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, name=f"termbase-{lang}-answers", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                answer = self.conn.recv()
            except (EOFError, OSError):
                answer = None
            listener = self.owner.listener
            if answer is not None and answer[0] == "preview":  # pages ahead of a rebuild, not a build
                if listener is not None:
                    listener.add(self.lang, answer[1])
                continue
            with self.changed:
                if answer is None:  # the process is gone: whatever it owed has failed
                    self.answers += [("failed", f"its process ended (exit code {self.process.exitcode})")] * self.pending
                    self.pending = 0
                else:
                    self.answers.append(answer)  # a failure was logged by the language's process
                    self.pending -= 1
                self.changed.notify_all()
            if listener is not None:
                listener.built(self.lang)
            if answer is None:
                return

    def ask(self, request: dict) -> None:
        with self.changed:
            self.pending += 1
            self.started = time.monotonic()
        self.conn.send(request)

    def wait(self, timeout: float) -> bool:
        """True once every build asked for has answered; False at the deadline."""
        with self.changed:
            return self.changed.wait_for(lambda: self.pending == 0, timeout=timeout)


class LanguageBuilds:
    """The processes that build the other languages, started once (a `mkdocs serve` keeps them
    for every rebuild) and told to build after the default language's site folder is clean."""

    def __init__(self, config, base: TermBase, listener=None):
        self.timeout = base.project.language_timeout
        self.listener = listener  # under `mkdocs serve`: termbase/site/serve.py's Previews
        ctx = multiprocessing.get_context("spawn")
        # What the command line may have changed (`--strict`, `--no-directory-urls`).
        options = {"strict": config.strict, "use_directory_urls": config.use_directory_urls}
        self.workers: list[Worker] = []
        for lang in base.project.other_languages:
            parent, child = ctx.Pipe()
            process = ctx.Process(target=_worker_main, name=f"termbase-{lang}", daemon=True,
                                  args=(child, config.config_file_path, lang, options,
                                        logging.getLogger("mkdocs").getEffectiveLevel(), _implementation()))
            process.start()
            child.close()
            self.workers.append(Worker(lang, process, parent, self))

    def start(self, site_dir: str, site_url: str, dirty: bool) -> None:
        for worker in self.workers:
            lang_url = (site_url or "/").rstrip("/") + f"/{worker.lang}/"
            worker.ask({"site_dir": os.path.join(site_dir, worker.lang), "site_url": lang_url, "dirty": dirty})

    def wait(self) -> list[str]:
        """Wait for every language asked to build, each with a deadline; what failed, one line
        per language. A language that hangs is stopped and named."""
        failed = []
        for worker in self.workers:
            if not worker.wait(max(0.0, self.timeout - (time.monotonic() - worker.started))):
                worker.process.kill()
                worker.wait(30)
                worker.answers[-1:] = [("failed", f"it did not finish within {self.timeout:.0f} s and was stopped")]
            failures = [message for status, message in worker.answers if status != "ok"]
            worker.answers.clear()
            if failures:
                failed.append(f"the {worker.lang} site failed to build: {failures[-1]}")
        self.workers = [w for w in self.workers if w.process.is_alive()] if failed else self.workers
        return failed

    def preview(self, paths: list[str], langs: set[str]) -> None:
        """Ask the processes of `langs` for the pages of `paths` ahead of their rebuild."""
        for worker in self.workers:
            if worker.lang in langs:
                try:
                    worker.conn.send({"preview": paths})
                except (OSError, BrokenPipeError):
                    pass

    def settled(self, lang: str) -> bool:
        return all(worker.pending == 0 for worker in self.workers if worker.lang == lang)

    def wait_for(self, lang: str) -> None:
        """Under `mkdocs serve`: hold a request for a page of `lang` until that language's
        rebuild has finished (never longer than the deadline), so no page served is stale."""
        for worker in self.workers:
            if worker.lang == lang:
                worker.wait(self.timeout)

    @property
    def languages(self) -> list[str]:
        return [worker.lang for worker in self.workers]

    @property
    def alive(self) -> bool:
        return all(worker.process.is_alive() for worker in self.workers)

    def close(self) -> None:
        for worker in self.workers:
            try:
                worker.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for worker in self.workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.kill()
        self.workers = []


def _implementation() -> str:
    """'properdocs' when ProperDocs runs this build in MkDocs' name, else 'mkdocs'."""
    return sys.modules["mkdocs"].__name__.split(".")[0]


class _NameTheLanguage(logging.Filter):
    """In a language's build MkDocs says 'index.md'; the file to fix is docs/index.<lang>.md.
    Other languages' messages also start with the language, e.g. '[es] '."""

    def __init__(self, lang: str, docs_dir: str, tag: bool = True):
        super().__init__()
        self.lang = lang
        self.docs_dir = docs_dir
        self.tag = tag

    def _named(self, match: re.Match) -> str:
        name = match.group(1)
        localized = f"{name}.{self.lang}.md"
        return f"'{localized}'" if os.path.isfile(os.path.join(self.docs_dir, localized)) else match.group()

    def filter(self, record: logging.LogRecord) -> bool:
        message = re.sub(r"'([^'\s]+)\.md'", self._named, record.getMessage())
        record.msg, record.args = (f"[{self.lang}] {message}" if self.tag else message), None
        return True


def name_the_files(lang: str, docs_dir: str) -> None:
    """The default language's build, in MkDocs' own process: its messages name the real files
    too (once per handler, however many rebuilds `mkdocs serve` runs)."""
    for handler in logging.getLogger("mkdocs").handlers:
        if not any(isinstance(f, _NameTheLanguage) for f in handler.filters):
            handler.addFilter(_NameTheLanguage(lang, docs_dir, tag=False))


def _worker_main(conn, config_file: str, lang: str, options: dict, level: int, implementation: str) -> None:
    """A language's build process: builds `lang` each time it is asked, until told to stop."""
    if implementation != "mkdocs":
        __import__(f"{implementation}.replacement")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from termbase.site import preview

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    logger.setLevel(level)
    handler.addFilter(_NameTheLanguage(lang, os.path.join(os.path.dirname(config_file), "docs")))
    last = None  # the configuration of the last build that succeeded: previews are rendered against it
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        if "preview" in request:
            conn.send(("preview", preview.render(last.plugins["termbase"], last, request["preview"]) if last else {}))
            continue
        last = None
        try:
            config = load_config(config_file=config_file, site_dir=request["site_dir"], site_url=request["site_url"],
                                 **options)
            config.plugins["termbase"].language = lang
            log.info("termbase: building the '%s' site", lang)
            build(config, dirty=request["dirty"])
            reply = ("ok", None)
            last = config
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the build
            message = str(exc).strip() or type(exc).__name__
            log.error("termbase: the '%s' site failed: %s", lang, message)
            reply = ("failed", message)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        conn.send(reply)
