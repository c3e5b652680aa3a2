"""One MkDocs run builds the site once per language: the default language at `/`, each other
language under `/<code>/`, each a complete Material site with its own theme strings, search
index (that language's stemmer), sitemap and 404 page. Pages keep one slug in every language
(`glossary/x.da.md` is served as `/da/glossary/x/`).

Why not mkdocs-static-i18n: its single search index mixes languages, its 404 page is in one
language, and it drops mkdocs-jupyter's files.

This module is the configuration of one language's build, and nothing else: the other
languages build in processes of their own (termbase/site/language_process.py), watched by
termbase/site/supervisor.py.
"""

from __future__ import annotations

import logging
import os
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
