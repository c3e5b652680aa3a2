"""One MkDocs run builds the site three times: English at `/`, then Spanish and Danish under
`/es/` and `/da/`, each a complete Material site of its own.

Why not mkdocs-static-i18n: its single search index mixes languages, its 404 page is in one
language, and it drops mkdocs-jupyter's files. A build per language gives each language its
own theme strings, search index with that language's stemmer, sitemap and 404 page, while
pages keep one English slug (`glossary/x.da.md` is served as `/da/glossary/x/`).
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
from urllib.parse import urlsplit

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from termbase.model import DEFAULT_LANG, LANGS, nav_label, page_lang, t, ui

log = logging.getLogger("mkdocs.plugins.termbase")
LANG_KEY = "termbase_lang"


def current_lang(config) -> str:
    return config.extra.get(LANG_KEY, DEFAULT_LANG)


def site_root(config) -> str:
    """The URL path of the English site root, e.g. `/` or `/attention-glossary/`."""
    path = urlsplit(site_base(config)).path or "/"
    return path if path.endswith("/") else path + "/"


def site_base(config) -> str:
    """The absolute URL of the English site root (a language site's site_url ends in `<lang>/`)."""
    base = config.site_url or "/"
    if current_lang(config) != DEFAULT_LANG:
        base = base.rstrip("/").rsplit("/", 1)[0]
    return base if base.endswith("/") else base + "/"


def lang_prefix(lang: str) -> str:
    return "" if lang == DEFAULT_LANG else f"{lang}/"


def configure(config) -> None:
    """Switch a freshly loaded config to the language it builds."""
    lang = current_lang(config)
    config.theme["language"] = lang
    config.site_name = ui()["site_name"][lang]
    config.nav = _translate_nav(config.nav, lang)


def _translate_nav(items, lang):
    if items is None:
        return None
    out = []
    for item in items:
        if isinstance(item, dict):
            (label, value), = item.items()
            value = _translate_nav(value, lang) if isinstance(value, list) else value
            out.append({nav_label(label, lang): value})
        else:
            out.append(item)
    return out


def localize_files(files: Files, config) -> Files:
    """Keep this language's pages under their language-neutral path; drop other languages'."""
    lang = current_lang(config)
    kept = []
    for file in files:
        parsed = page_lang(file.src_uri)
        if parsed is None:
            kept.append(file)
        elif parsed[1] == lang:
            kept.append(File.generated(config, parsed[0], abs_src_path=file.abs_src_path))
    return Files(kept)


def alternates(page, config) -> list[dict]:
    """The same page in every language (each home page without one), as site-root-relative links."""
    root = site_root(config)
    url = page.url if page is not None else ""
    return [
        {
            "name": ui()["language_name"][lang],
            "lang": lang,
            "link": root + lang_prefix(lang) + url,
        }
        for lang in LANGS
    ]


MATERIAL_ALTERNATE = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="(\w+)">\s*')


def absolute_hreflang(output: str, page, config) -> str:
    """Material writes the switcher's site-relative links into <head>; search engines want
    absolute ones, plus x-default."""
    base = site_base(config)
    # rel=" alternate" is the same token list for search engines, but Material's script selects
    # `link[rel=alternate]` exactly and fetches `<href>/sitemap.xml` from each, expecting a
    # language root: with page URLs that is a 404 per link on every page view.
    links = [
        f'<link rel=" alternate" hreflang="{lang}" href="{base}{lang_prefix(lang)}{page.url}">'
        for lang in LANGS
    ]
    links.append(f'<link rel=" alternate" hreflang="x-default" href="{base}{page.url}">')
    output = MATERIAL_ALTERNATE.sub("", output)
    return output.replace("</head>", "\n".join(links) + "\n</head>", 1)


def language_config(config, lang: str):
    """The same mkdocs.yml, loaded again for `lang`, building into `<site_dir>/<lang>/`."""
    sub = load_config(
        config_file=config.config_file_path,
        site_dir=os.path.join(config.site_dir, lang),
        strict=config.strict,
    )
    sub.extra[LANG_KEY] = lang
    sub.site_url = (config.site_url or "/").rstrip("/") + f"/{lang}/"
    return sub


class _NameTheLanguage(logging.Filter):
    """In a language's build MkDocs says 'index.md'; the file to fix is docs/index.<lang>.md."""

    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def filter(self, record: logging.LogRecord) -> bool:
        message = re.sub(r"'([^'\s]+)\.md'", rf"'\1.{self.lang}.md'", record.getMessage())
        record.msg, record.args = f"[{self.lang}] {message}", None
        return True


_children: dict[int, str] = {}  # pid -> language, of the builds running in parallel


def start_other_languages(config) -> None:
    """Build every other language while English builds: one forked process each, so the
    languages share the imports already made and use every core. Without fork (Windows),
    they are built one after the other when English is done."""
    if not hasattr(os, "fork"):
        return
    for lang in LANGS:
        if lang == DEFAULT_LANG:
            continue
        sub = language_config(config, lang)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child builds one language and leaves, whatever happens
            code = 1
            for handler in logging.getLogger("mkdocs").handlers:
                handler.addFilter(_NameTheLanguage(lang))
            try:
                log.info("termbase: building the '%s' site", lang)
                build(sub)
                code = 0
            except BaseException as exc:  # noqa: BLE001 - reported, and the parent fails the build
                log.error("termbase: the '%s' site failed: %s", lang, exc)
            finally:
                logging.shutdown()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _children[pid] = lang


def finish_other_languages(config) -> None:
    """Wait for the language builds (or run them now, where fork is missing)."""
    if not hasattr(os, "fork"):
        for lang in LANGS:
            if lang != DEFAULT_LANG:
                log.info("termbase: building the '%s' site", lang)
                build(language_config(config, lang))
        return
    failed = []
    while _children:
        pid, status = os.wait()
        lang = _children.pop(pid, None)
        if lang and status != 0:
            failed.append(lang)
    if failed:
        raise PluginError(f"the {', '.join(failed)} site failed to build: see the errors above")


def stop_other_languages() -> None:
    """A failed English build takes its language builds down with it."""
    for pid in list(_children):
        try:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except OSError:
            pass
        _children.pop(pid, None)


def translate_404(output: str, config) -> str:
    lang = current_lang(config)
    home = site_root(config) + lang_prefix(lang)
    message = (
        f"<h1>{t('not_found', lang)}</h1>\n<p>{t('not_found_text', lang)}</p>\n"
        f'<p><a href="{home}">{ui()["site_name"][lang]}</a> · '
        f'<a href="{home}glossary/">{nav_label("Glossary", lang)}</a></p>'
    )
    output = output.replace("<h1>404 - Not found</h1>", message)
    if lang == DEFAULT_LANG:
        # Static hosts serve the root 404.html for every missing path: show the page of the
        # language the visitor asked for, from the site itself.
        prefixes = [root_lang for root_lang in LANGS if root_lang != DEFAULT_LANG]
        script = (
            "<script>(function(){var root=%r,langs=%r;"
            "var p=location.pathname;for(var i=0;i<langs.length;i++){"
            "if(p.indexOf(root+langs[i]+'/')===0){"
            "fetch(root+langs[i]+'/404.html').then(function(r){return r.text()})"
            ".then(function(h){document.open();document.write(h);document.close()});return}}"
            "})();</script>" % (site_root(config), prefixes)
        )
        output = output.replace("</head>", script + "\n</head>", 1)
    return output
