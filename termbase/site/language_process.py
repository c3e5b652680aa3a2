"""A language's build process: the child that termbase/site/supervisor.py watches.

Each language other than the default builds in a process of its own, started with `spawn` (a
fresh interpreter: nothing is shared with the parent, and nothing is forked from a process
that runs threads, such as `mkdocs serve`'s). It loads mkdocs.yml, builds its language each
time it is asked, and answers ("ok", None) or ("failed", message). Under `mkdocs serve` a
rebuild is built into a folder of its own and then published into the served one
(termbase/site/publish.py), and the child also writes the previews of edited pages there
(termbase/site/preview.py): previews and publishes of one language happen in this one process,
in the order they were asked for, so a preview is never overwritten by an older build.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.termbase")


def spawner(config):
    """`start_child(lang) -> (process, conn)` for the supervisor, with this build's options."""
    ctx = multiprocessing.get_context("spawn")
    # What the command line may have changed (`--strict`, `--no-directory-urls`).
    options = {"strict": config.strict, "use_directory_urls": config.use_directory_urls}
    level = logging.getLogger("mkdocs").getEffectiveLevel()
    config_file, docs_dir = config.config_file_path, config.docs_dir

    def start_child(lang: str):
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_worker_main, name=f"termbase-{lang}", daemon=True,
                              args=(child, config_file, docs_dir, lang, options, level, _implementation()))
        process.start()
        child.close()
        return process, parent

    return start_child


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


def _worker_main(conn, config_file: str, docs_dir: str, lang: str, options: dict, level: int,
                 implementation: str) -> None:
    """A language's build process: builds `lang` each time it is asked, until told to stop.
    A request: {"site_dir", "site_url", "dirty"}, and under `mkdocs serve` "serve" (the problems
    to show), "publish" and "keep" (where the build goes live, publish.py); or {"preview": paths,
    "publish": folder}, answered ("preview", [urls of the pages written])."""
    if implementation != "mkdocs":
        __import__(f"{implementation}.replacement")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from termbase.site import preview, publish

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    logger.setLevel(level)
    handler.addFilter(_NameTheLanguage(lang, docs_dir))
    last = None  # the configuration of the last build that succeeded: previews are rendered against it
    while True:
        try:
            request = conn.recv()
        except (EOFError, ConnectionError, KeyboardInterrupt):  # the parent has gone: nothing to build for
            return
        if request is None:
            return
        if "preview" in request:
            if not _answer(conn, ("preview", _preview(last, request, preview, publish))):
                return
            continue
        last = None
        try:
            config = load_config(config_file=config_file, site_dir=request["site_dir"], site_url=request["site_url"],
                                 **options)
            plugin = config.plugins["termbase"]
            plugin.language = lang
            if "serve" in request:  # problems are shown on the pages, never raised
                plugin.command, plugin.problems = "serve", request["serve"]
            log.info("termbase: building the '%s' site", lang)
            build(config, dirty=request["dirty"])
            if "publish" in request:
                publish.publish(Path(request["site_dir"]), Path(request["publish"]), set(request.get("keep", ())))
            reply = ("ok", None)
            last = config
        except KeyboardInterrupt:  # Ctrl+C in the terminal reaches every process: not a failed build
            return
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the build
            message = str(exc).strip() or type(exc).__name__
            log.error("termbase: the '%s' site failed: %s", lang, message)
            reply = ("failed", message)
        except SystemExit as exc:  # MkDocs' Abort ("Aborted with N warnings in strict mode!")
            message = str(exc).strip() or type(exc).__name__
            log.error("termbase: the '%s' site failed: %s", lang, message)
            reply = ("failed", message)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        if not _answer(conn, reply):
            return


def _answer(conn, reply) -> bool:
    """Send `reply`; False when the parent has gone (serve stopped mid-build), which ends the child."""
    try:
        conn.send(reply)
    except (ConnectionError, EOFError):
        return False
    return True


def _preview(last, request: dict, preview, publish) -> list[str]:
    """Write the previews of the edited pages into the served folder; the urls written."""
    if last is None:  # no build has succeeded in this process yet: the rebuild shows the page
        return []
    written = []
    for url, dest_uri, html in preview.render(last.plugins["termbase"], last, request["preview"]):
        try:
            publish.write(Path(request["publish"]) / dest_uri, html.encode("utf-8", errors="xmlcharrefreplace"))
        except OSError as exc:
            log.warning("termbase: could not write the preview of %s: %s", url, exc)
            continue
        written.append(url)
    return written
