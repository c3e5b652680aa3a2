"""The `termbase` MkDocs plugin: wires the term base into every build.

State is held per plugin instance, which MkDocs makes per configuration (and keeps across the
rebuilds of one `mkdocs serve`, because the plugin has `on_startup`), never in module globals:
each other language is built by its own process (site/language_process.py, watched by
site/supervisor.py) with its own instance.

Order of a build of the default language: check the sources (fail before anything is written),
run the notebooks and verify every code block (both cached), then build the default language
while each other language builds into `site/<lang>/` in a process of its own. Under `mkdocs
serve` that is the first build; every rebuild after it runs in the languages' processes, the
default one's included (site/serve.py), and this instance only checks the sources for them.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File

from termbase.core import export
from termbase.core.model import TermBase
from termbase.core.project import ConfigError, Project
from termbase.core.status import Status
from termbase.run.blocks import BlockRunner
from termbase.run.cache import Cache
from termbase.run.notebooks import NotebookError, run_all
from termbase.site import (downloads, language_process, languages, machine_pages, mathml, notebook_pages, page_cache,
                           problems, search_names, serve, source_check, verify, watch)
from termbase.site.config import TermbaseConfig
from termbase.site.page_cache import PageCache
from termbase.site.pages import Pages, breakable_code, entry_slug, slim_code
from termbase.site.supervisor import Supervisor
from termbase.site.tooltips import Tooltips

log = logging.getLogger("mkdocs.plugins.termbase")
SEARCH_WORKER = "assets/javascripts/workers/search."
SEARCH_BOOST = {"claims.md": 0.5}  # glossary entries: 2


@dataclass
class Build:
    """What one build of one language reads and makes."""

    project: Project
    base: TermBase
    lang: str
    main: bool  # the process MkDocs runs, building the default language and starting the others
    site_dir: str
    runs: list = field(default_factory=list)
    failed_blocks: dict = field(default_factory=dict)
    pages: Pages | None = None
    tooltips: Tooltips | None = None
    machine_pages: dict = field(default_factory=dict)  # url -> MachinePage
    downloads: dict = field(default_factory=dict)  # page url -> {file name: code}
    block_names: dict = field(default_factory=dict)  # composed code -> file name
    files: object = None  # MkDocs' Files, Navigation and Jinja environment of this build,
    nav: object = None  # kept for the previews of the next `mkdocs serve` rebuild (preview.py)
    env: object = None
    page_cache: PageCache | None = None  # open from on_pre_build to the end of the build
    problems: problems.Problems | None = None  # under `mkdocs serve`: shown on the pages, never raised


class TermbasePlugin(BasePlugin[TermbaseConfig]):
    def __init__(self):
        super().__init__()
        self.command = "build"
        self.language: str | None = None  # set by a language's build process before it builds
        self.language_builds: Supervisor | None = None
        self.runner: BlockRunner | None = None
        self.code: watch.Code | None = None  # under `mkdocs serve`: the site's code it started with
        self.build: Build | None = None
        self.site: serve.Site | None = None  # under `mkdocs serve`, once it serves: termbase/site/serve.py
        self.problems: list = []  # under `mkdocs serve`: what the check found (a language's process: as told)

    @property
    def serving(self) -> bool:
        return self.command == "serve"

    def on_startup(self, *, command, dirty):
        self.command = command

    def on_serve(self, server, config, builder):
        """Watch everything the site reads; from now on every language, the default one included,
        rebuilds in its process and goes live when it has finished, and an edited page is shown
        before that (termbase/site/serve.py: public server API only)."""
        for path in watch.watched(self.build.project):
            server.watch(str(path))
        if self.language_builds is None:
            self.language_builds = Supervisor([], language_process.spawner(config), self.build.project.language_timeout)
        self.site = serve.install(server, config, self)
        return server

    def serve_problems(self) -> list:
        """Under `mkdocs serve`, before each rebuild (in serve.py's thread): what is wrong with the
        sources, for every language's pages: the check's problems, a notebook that fails, code
        changed since the server started. The notebooks and code blocks run here first, once, so
        that the languages' processes find them in the cache."""
        project = self.build.project
        stale = self.code.stale() if self.code is not None else None
        report = source_check.run(project, entry=source_check.inputs(project, self.build.site_dir))
        for note in report.notes:
            log.info("termbase: %s", note)
        for problem in report:
            log.warning(str(problem))
        found = list(report) + ([problems.Note(stale)] if stale else [])
        try:
            run_all(project, Cache(project.cache_dir))
        except NotebookError as exc:
            log.warning("termbase: %s", exc)
            found.append(problems.Note(str(exc)))
        if self.runner is not None:
            for message in verify.verify(TermBase(project), self.runner).values():
                log.warning("termbase: %s", message)
        return found

    def on_shutdown(self):
        if self.site is not None:
            self.site.close()
            self.site = None
        if self.language_builds is not None:
            self.language_builds.close()
            self.language_builds = None
        if self.runner is not None:
            self.runner.close()
            self.runner = None

    @event_priority(100)  # before the search plugin reads the theme language
    def on_config(self, config):
        try:
            project = Project.from_options(Path(config.config_file_path).parent.resolve(), dict(self.config))
        except ConfigError as exc:
            raise PluginError(str(exc)) from None
        base = TermBase(project)
        lang = self.language or project.default_language
        self.build = Build(project, base, lang, self.language is None, config.site_dir)
        if self.serving:  # a warning is shown, never the end of serving (docs/how-it-works.en.md: mkdocs serve)
            config.strict = False
            problems.never_abort()
        languages.configure(config, base, lang)
        notebook_pages.configure(config, base, lang, "serve" if self.serving else "build")
        if self.language is None:
            language_process.name_the_files(lang, config.docs_dir)
        return config

    def on_pre_build(self, config):
        build = self.build
        project, base = build.project, build.base
        cache = Cache(project.cache_dir)
        if build.main:
            if self.serving and self.code is None:
                self.code = watch.Code(project)
            stale = self.code.stale() if self.serving else None
            report = source_check.run(project, entry=self._inputs(config))
            for note in report.notes:
                log.info("termbase: %s", note)
            for problem in report:
                log.error(str(problem))
            if report and not self.serving:
                raise PluginError(f"termbase check found {len(report)} problem(s); fix them (listed above) and rebuild")
            self.problems = list(report) + ([problems.Note(stale)] if stale else [])
        try:
            build.runs = run_all(project, cache)
        except NotebookError as exc:
            if not self.serving:
                raise PluginError(str(exc)) from None
            log.error("termbase: %s", exc)
            build.runs = []
            if build.main:
                self.problems.append(problems.Note(str(exc)))
        if self.runner is None:
            self.runner = BlockRunner(cache)
        build.failed_blocks = verify.verify(base, self.runner)
        if build.failed_blocks and build.main:
            for message in build.failed_blocks.values():
                log.error("termbase: %s", message)
            if self.command != "serve":
                raise PluginError(f"{len(build.failed_blocks)} code block(s) do not do what their tests declare; "
                                  "nothing unverified is published (see above)")
        home = languages.site_root(config, base, build.lang) + languages.prefix(base, build.lang)
        build.pages = Pages(base, build.lang, Status(project), home, build.failed_blocks)
        build.tooltips = Tooltips(base, build.lang)
        build.block_names = downloads.names(project)
        build.page_cache = PageCache(cache, build.lang, config, build.tooltips, build.block_names,
                                     page_cache.labels(base, build.lang))
        if self.serving:
            build.pages.renderers = problems.TolerantMarkers(build.pages.renderers,
                                                             base.t("part_failed", build.lang, "page"))
            build.problems = problems.Problems(base, build.lang, self.problems, build.failed_blocks,
                                               verify.page_blocks(base))
        if build.main and project.other_languages and self.language_builds is None:
            # Started once; a child that dies or hangs is started again (termbase/site/supervisor.py).
            self.language_builds = Supervisor(project.other_languages, language_process.spawner(config),
                                              project.language_timeout,
                                              on_failed=self._language_failed if self.serving else None)

    def _language_failed(self, lang: str, message: str) -> None:
        """Under `mkdocs serve`: a language that failed shows why on its pages, never a 404."""
        build = self.build
        problems.failure_pages(build.base, build.site_dir, lang, message)

    def _inputs(self, config) -> str:
        """The hash of this build's inputs: the site folders being written are not among them
        (a language writes into the default language's folder, which is written meanwhile)."""
        written = [config.site_dir] if self.build.main else [config.site_dir, str(Path(config.site_dir).parent)]
        return source_check.inputs(self.build.project, *written)

    @event_priority(50)  # before mkdocs-jupyter wraps notebook files: localize_files recreates File objects
    def on_files(self, files, config):
        build = self.build
        files = languages.localize_files(files, config, build.base, build.lang)
        files = notebook_pages.add_files(files, config, build.base, build.lang, build.runs, build.pages.claim_mark)
        for fmt in export.FORMATS:  # the term base for translators, at every language root
            try:
                files.append(File.generated(config, f"termbase.{fmt}", content=export.render(build.base, fmt)))
            except Exception as exc:  # noqa: BLE001 - under `mkdocs serve` (a draft record): listed, not raised
                if not self.serving:
                    raise
                log.warning("termbase: termbase.%s is not written under serve: %r", fmt, exc)
        if build.main and self.language_builds is not None:
            # Now: the site folder has been cleaned, and every notebook and block is in the cache.
            url = (config.site_url or "/").rstrip("/")
            serving = {"serve": self.problems} if self.serving else {}

            def request(lang: str) -> dict:
                return {"site_dir": os.path.join(config.site_dir, lang), "site_url": f"{url}/{lang}/", "dirty": False,
                        **serving}

            self.language_builds.start(request)
        return files

    def on_nav(self, nav, config, files):
        self.build.nav, self.build.files = nav, files
        return nav

    def on_env(self, env, config, files):
        self.build.env = env
        return env

    def on_page_markdown(self, markdown, page, config, files):
        if self.build.problems is None:
            return self._page_markdown(markdown, page, config)
        shown = self.build.project.shown(Path(page.file.abs_src_path)) if page.file.abs_src_path else ""
        try:  # under `mkdocs serve`: the page, with the problems on top (under its title)
            body = self.build.problems.unmark(shown, self._page_markdown(markdown, page, config))
            box = self.build.problems.box(shown)
            head, _, rest = body.partition("\n") if body.startswith("# ") else ("", "", body)
            return f"{head}\n\n{box}{rest}" if head else box + rest
        except Exception as exc:  # noqa: BLE001 - the page says what is wrong with it instead
            log.warning("termbase: %s could not be rendered: %s", shown, exc)
            return self.build.problems.broken(shown, exc)

    def _page_markdown(self, markdown, page, config):
        build = self.build
        english = languages.site_root(config, build.base, build.lang) + page.url
        src = page.file.src_uri
        if not notebook_pages.is_notebook_page(page, build.base):
            twin = machine_pages.expand_includes(build.project.root, build.pages.expand(markdown, src, for_machines=True))
            build.machine_pages[page.url] = machine_pages.MachinePage(page.url, "", machine_pages.plain_markdown(twin),
                                                                      entry_slug(src))
        # Material's search ranks a page's sections by their text: entries weigh more, the claims
        # list, which quotes every term, less (an entry's own name: search/names.json).
        if entry_slug(src) or src in SEARCH_BOOST:
            page.meta.setdefault("search", {}).setdefault("boost", SEARCH_BOOST.get(src, 2))
        markdown = build.pages.outdated_notice(src, english) + build.pages.expand(markdown, src)
        return markdown

    def on_page_content(self, html, page, config, files):
        if self.build.problems is None:
            return self._page_content(html, page, config)
        try:
            return self._page_content(html, page, config)
        except Exception as exc:  # noqa: BLE001 - under `mkdocs serve` the page says what is wrong
            shown = self.build.project.shown(Path(page.file.abs_src_path)) if page.file.abs_src_path else ""
            log.warning("termbase: %s could not be rendered: %s", shown, exc)
            return self.build.problems.broken(shown, exc) + html

    def _page_content(self, html, page, config):
        build = self.build
        if page.url in build.machine_pages:
            build.machine_pages[page.url].title = page.title or ""
        given = html
        stored = build.page_cache.get(page, given) if build.page_cache is not None else None
        if stored is not None:  # made before from the same HTML and inputs (termbase/site/page_cache.py)
            if stored["downloads"]:
                build.downloads[page.url] = stored["downloads"]
            return stored["html"]
        extra = config.extra["termbase"]
        repository = (extra["repository"], extra["branch"]) if extra.get("repository") else None
        html = notebook_pages.page_content(html, page, build.base, build.lang, repository)
        html = breakable_code(slim_code(mathml.to_mathml(html, where=build.project.shown(page.file.abs_src_path))))
        html, files = downloads.add_links(html, build.block_names, build.base.t("download_py", build.lang, "page"))
        if files:
            build.downloads[page.url] = files
        html = build.tooltips.add(html, page.url, entry_slug(page.file.src_uri))
        if build.page_cache is not None:
            build.page_cache.put(page, given, html, files)
        return html

    def on_page_context(self, context, page, config, nav):
        languages.set_page_links(config, self.build.base, self.build.lang, page.url)
        return context

    def on_post_page(self, output, page, config):
        return _stemmed_search(output)

    def on_pre_template(self, template, template_name, config):
        if template_name == "404.html":  # not a page: its switcher leads to each language's home
            languages.set_page_links(config, self.build.base, self.build.lang, "")
        return template

    def on_post_template(self, output_content, template_name, config):
        return _stemmed_search(output_content) if template_name == "404.html" else output_content

    def on_post_build(self, config):
        build = self.build
        if build.page_cache is not None:
            if build.page_cache.reused:
                log.info("termbase: %s: the additions to %d page(s) reused, made from the same inputs before",
                         build.lang, build.page_cache.reused)
            build.page_cache.close()
            build.page_cache = None
        machine_pages.write(config.site_dir, list(build.machine_pages.values()), build.base, build.lang,
                            config.site_url or "/")
        for url, files in build.downloads.items():
            downloads.write(config.site_dir, url, files)
        search_names.write(config.site_dir, build.base, build.lang)
        if self.build.main and self.language_builds is not None:
            # MkDocs says "Documentation built" only once every language is: say this one is.
            log.info("termbase: the %s site is written; waiting for %s", build.lang,
                     ", ".join(self.language_builds.languages))
            failed = self.language_builds.wait()
            if failed:
                raise PluginError("; ".join(failed) + " (see the errors above)")

    def on_build_error(self, error):
        build = self.build
        if build is not None:
            build.page_cache = None
        if build is None or not build.main:
            return  # a language's build reports to the main process, which decides
        if self.language_builds is not None:
            self.language_builds.wait()  # never delete a site another language is still writing
        # A failed `mkdocs build` leaves no half-built site behind for a deploy to pick up.
        # (`mkdocs serve` keeps its last good build on screen and prints the error.)
        if self.command == "build":
            shutil.rmtree(build.site_dir, ignore_errors=True)


def _stemmed_search(output: str) -> str:
    """Point Material's search at the wrapper that stems each query word before Material adds
    its trailing wildcard (lunr skips the stemmer for wildcard words). Material writes the
    worker's path once per page, in its `__config` JSON; if it stops doing so, say it."""
    if output.count(SEARCH_WORKER) != 1:
        raise PluginError("Material's page no longer names its search worker once "
                          f"('{SEARCH_WORKER}'); update termbase/site/plugin.py (_stemmed_search)")
    return output.replace(SEARCH_WORKER, "assets/javascripts/workers/search-stem.js#search.", 1)
