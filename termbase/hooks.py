"""MkDocs hooks (loaded by mkdocs.yml): wires the term base into every build.

Order of a build: check the sources (fail before anything is written), run the notebooks,
then build English while each other language builds into `site/<lang>/` in a forked process.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # MkDocs adds only termbase/

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402

from termbase import check, export, i18n, mathml, model, notebooks, render, status, tooltips  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

_top_level_site_dir: list[str] = []
_command: list[str] = []


def on_startup(command, dirty):
    _command[:] = [command]


@event_priority(100)  # before the search plugin reads the theme language
def on_config(config):
    if i18n.current_lang(config) == i18n.DEFAULT_LANG:
        # A new build re-reads the sources; the language builds forked from it reuse what it read.
        model.forget()
        status.forget()
        tooltips.forget()
        export.render.cache_clear()
    i18n.configure(config)
    notebooks.configure(config)
    if i18n.current_lang(config) == i18n.DEFAULT_LANG:
        _top_level_site_dir[:] = [config.site_dir]
    return config


def on_pre_build(config):
    if i18n.current_lang(config) != i18n.DEFAULT_LANG:
        return  # checked once, before the English build
    problems = check.run()
    if problems:
        for problem in problems:
            i18n.log.error(str(problem))
        raise PluginError(
            f"termbase check found {len(problems)} problem(s); fix them (listed above) and rebuild"
        )


@event_priority(50)  # before mkdocs-jupyter wraps notebook files: localize_files recreates File objects
def on_files(files, config):
    files = i18n.localize_files(files, config)
    files = notebooks.add_files(files, config)  # executed (or cached) notebooks of this language
    for fmt in export.FORMATS:  # the term base for translators, at every language root
        files.append(File.generated(config, f"termbase.{fmt}", content=export.render(fmt)))
    if i18n.current_lang(config) == i18n.DEFAULT_LANG:
        # Now: after the site directory is cleaned and the notebooks have run (and are cached).
        i18n.start_other_languages(config)
    return files


def on_page_markdown(markdown, page, config, files):
    slug = render.entry_slug(page.file.src_uri)
    lang = i18n.current_lang(config)
    notice = render.outdated_notice(page.file.src_uri, lang, i18n.site_root(config) + page.url)
    return notice + render.expand(markdown, slug, lang)


def on_page_content(html, page, config, files):
    html = notebooks.page_content(html, page, config)
    html = render.slim_code(mathml.to_mathml(html, where=page.file.abs_src_path))
    slug = render.entry_slug(page.file.src_uri)
    return tooltips.add_tooltips(html, page.url, i18n.current_lang(config), slug)


def on_page_context(context, page, config, nav):
    config.extra["alternate"] = i18n.alternates(page, config)
    return context


def _stemmed_search(output: str) -> str:
    """Point Material's search at the wrapper that stems each query word before Material adds
    its trailing wildcard (lunr skips the stemmer for wildcard words)."""
    return output.replace("assets/javascripts/workers/search.", "assets/javascripts/workers/search-stem.js#search.", 1)


def on_post_page(output, page, config):
    return _stemmed_search(i18n.absolute_hreflang(output, page, config))


def on_pre_template(template, template_name, config):
    if template_name == "404.html":  # not a page: its switcher leads to each language's home
        config.extra["alternate"] = i18n.alternates(None, config)
    return template


def on_post_template(output_content, template_name, config):
    if template_name == "404.html":
        return _stemmed_search(i18n.translate_404(output_content, config))
    return output_content


def on_post_build(config):
    if i18n.current_lang(config) == i18n.DEFAULT_LANG:
        i18n.finish_other_languages(config)


def on_build_error(error):
    i18n.stop_other_languages()
    # A failed `mkdocs build` leaves no half-built site behind for a deploy to pick up.
    # (`mkdocs serve` keeps its last good build on screen and prints the error.)
    if _command != ["build"]:
        return
    for site_dir in _top_level_site_dir:
        shutil.rmtree(site_dir, ignore_errors=True)
