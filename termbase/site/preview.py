"""Under `mkdocs serve`, the page a contributor edited, rendered before its language rebuilds.

A save makes every language rebuild, each in its process (termbase/site/serve.py), which takes
seconds at the real site's size (benchmarks/RESULTS.md), most of it pages the contributor is not
looking at. So first each language's process renders only the pages the saved files are the
source of, against the state its last good build left (files, navigation, theme), and writes
them into the served folder, where MkDocs serves them at once; the rebuild (with the check
before it) then publishes every page, these included (termbase/site/publish.py). A saved page
gives its own page; a saved term record gives its entry's page in every language, rendered
from the record as saved. A preview that fails is simply not written: the rebuild shows the page.
Everything here goes through MkDocs' public API (the page's `read_source` and `render`, the
plugins' page events, `get_context`, the theme's Jinja environment).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from pathlib import Path

from termbase.core.model import TermBase, page_lang
from termbase.site.notebook_pages import is_notebook_page
from termbase.site.pages import Pages, entry_slug
from termbase.site.tooltips import Tooltips

log = logging.getLogger("mkdocs.plugins.termbase")

from mkdocs.commands.build import get_context


def _records(paths: list[str], project) -> set[str]:
    """The slugs of the term records among `paths`."""
    return {Path(p).stem for p in paths if Path(p).parent == project.terms_dir}


def languages_of(paths: list[str], project) -> set[str]:
    """The languages whose pages `paths` are sources of (a term record: every language)."""
    langs = set(project.languages) if _records(paths, project) else set()
    for path in map(Path, paths):
        if path.is_relative_to(project.docs):
            parsed = page_lang(path.relative_to(project.docs).as_posix(), project.languages)
            if parsed:
                langs.add(parsed[1])
    return langs


class _Quiet(logging.Filter):
    """Drops what this thread logs while it renders a preview: the rebuild that follows says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != threading.get_ident()


def render(plugin, config, paths: list[str]) -> list[tuple[str, str, str]]:
    """(page url, file written, HTML) for this build's pages that `paths` are sources of, rendered
    against the last good build of this language (`config` is that build's configuration)."""
    build = plugin.build
    if build is None or build.files is None or build.env is None:
        return []
    quiet = _Quiet()
    handlers = {h for name in ("", "mkdocs") for h in logging.getLogger(name).handlers}
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        project = build.project
        records = _records(paths, project)
        edited = {os.path.realpath(p) for p in paths}
        targets = [file.page for file in build.files.documentation_pages()
                   if file.page is not None and not is_notebook_page(file.page, build.base)
                   and (os.path.realpath(file.abs_src_path or "") in edited or entry_slug(file.src_uri) in records)]
        if targets and records:  # the records as saved, in place of the ones the last build read
            base = TermBase(project)  # read_yaml re-reads only what changed
            plugin.build = dataclasses.replace(
                build, base=base, machine_pages={}, downloads={}, tooltips=Tooltips(base, build.lang),
                pages=Pages(base, build.lang, build.pages.status, build.pages.home, build.failed_blocks))
        return [(page.url, page.file.dest_uri, _page(page, config, build)) for page in targets]
    except Exception as exc:  # noqa: BLE001 - the rebuild that follows also reports it, with its place
        failed = exc
    finally:
        plugin.build = build
        for handler in handlers:
            handler.removeFilter(quiet)
    log.warning("termbase: no preview of %s (%r); the rebuild shows the page", ", ".join(paths), failed)
    return []


def _page(page, config, build) -> str:
    """What MkDocs' build does for one page, through its public API (the page's `read_source`
    and `render`, the plugins' page events, `get_context`, the theme's Jinja environment), in
    memory."""
    files = build.files
    page = config.plugins.on_pre_page(page, config=config, files=files)
    page.read_source(config)
    page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=files)
    page.render(config, files)
    page.content = config.plugins.on_page_content(page.content, page=page, config=config, files=files)
    page.active = True
    try:
        context = get_context(build.nav, build.files.documentation_pages(), config, page)
        template = build.env.get_template(page.meta.get("template", "main.html"))
        context = config.plugins.on_page_context(context, page=page, config=config, nav=build.nav)
        return config.plugins.on_post_page(template.render(context), page=page, config=config)
    finally:
        page.active = False
