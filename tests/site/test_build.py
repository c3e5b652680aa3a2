"""The strict build of the whole site, and what every page carries in every language."""

import json
import re
from html import unescape

from termbase.core.model import TermBase
from tests.site.sitetools import DEFAULT, LANGS, PROJECT, page_for, prefix

BASE = TermBase(PROJECT)


def terms():
    return BASE.terms


def ui():
    return BASE.ui


def test_strict_build_prints_no_warning(built_site):
    _, result = built_site
    log = result.stdout + result.stderr
    assert "WARNING" not in log, log
    for lang in LANGS:
        if lang != DEFAULT:
            assert f"termbase: building the '{lang}' site" in log


def test_every_page_exists_with_the_same_slug_in_every_language(built_site):
    site, _ = built_site
    for url in ["", "glossary/", *[f"glossary/{slug}/" for slug in terms()]]:
        for lang in LANGS:
            assert page_for(site, lang, url).is_file(), (lang, url)


def test_html_lang_switcher_and_hreflang_point_at_the_same_page(built_site):
    site, _ = built_site
    url = "glossary/multi-head-attention/"
    for lang in LANGS:
        html = page_for(site, lang, url).read_text(encoding="utf-8")
        assert f'<html lang="{lang}"' in html
        switcher = dict((l, h) for h, l in re.findall(r'<a href="([^"]+)" hreflang="(\w+)" lang="\w+" class="md-select__link"', html))
        assert switcher == {other: f"/{prefix(other)}{url}" for other in LANGS}
        for other in LANGS:
            assert f'<link rel=" alternate" hreflang="{other}" href="http://127.0.0.1:8000/{prefix(other)}{url}">' in html
        # every language and x-default, no duplicates, and none of Material's own root-level links
        assert html.count('rel=" alternate"') == len(LANGS) + 1 and 'rel="alternate"' not in html


def test_navigation_and_theme_strings_are_in_the_page_language(built_site):
    site, _ = built_site
    html = page_for(site, "da", "glossary/multi-head-attention/").read_text(encoding="utf-8")
    tabs = re.findall(r'class="md-tabs__link[^"]*">\s*([^<]+?)\s*<', html)
    assert tabs[:2] == ["Forside", "Ordliste"]
    assert "Glossary" not in tabs and "Home" not in tabs
    for english in ui()["sections"].values():
        assert f">{english['en']}<" not in html or english["en"] == english["da"]
    assert "Indholdsfortegnelse" in html  # Material's own strings in Danish


def test_search_index_per_language_with_its_stemmer(built_site):
    site, _ = built_site
    for lang in LANGS:
        index = json.loads((site / prefix(lang) / "search" / "search_index.json").read_text(encoding="utf-8"))
        assert index["config"]["lang"] == [lang]
        locations = [doc["location"] for doc in index["docs"]]
        assert locations and not any(loc.startswith(tuple(f"{x}/" for x in LANGS)) for loc in locations)
        html = page_for(site, lang, "").read_text(encoding="utf-8")
        config = json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html).group(1))
        assert config["base"] == "."  # each language loads its own index


def test_missing_pages_get_a_404_in_their_language(built_site):
    site, _ = built_site
    assert "<h1>Siden blev ikke fundet</h1>" in (site / "da" / "404.html").read_text(encoding="utf-8")
    spanish = (site / "es" / "404.html").read_text(encoding="utf-8")
    assert "<h1>Página no encontrada</h1>" in spanish
    switcher = re.findall(r'<a href="([^"]+)" hreflang="\w+" lang="\w+" class="md-select__link"', spanish)
    assert switcher == ["/", "/es/", "/da/"], "a missing page's switcher leads to each home page"
    root = (site / "404.html").read_text(encoding="utf-8")
    assert "<h1>Page not found</h1>" in root
    # the one /404.html a static host serves for every path hands /es/ and /da/ to their own page
    data = json.loads(re.search(r'<script id="termbase-not-found" type="application/json">(.*?)</script>', root).group(1))
    assert data == {"root": "/", "languages": [x for x in LANGS if x != DEFAULT]}
    assert '<script src="/assets/javascripts/not-found.js">' in root
    assert "fetch(folder + \"404.html\")" in (site / "assets" / "javascripts" / "not-found.js").read_text(encoding="utf-8")
    assert "termbase-not-found" not in spanish, "a language site's own 404 page redirects nowhere"


def test_formulas_are_mathml_not_raw_latex(built_site):
    site, _ = built_site
    for lang in LANGS:
        html = page_for(site, lang, "glossary/multi-head-attention/").read_text(encoding="utf-8")
        assert html.count("<math") >= 2
        body = html.split('<article', 1)[1]
        assert "\\(" not in body and "$$" not in body and "\\operatorname" not in re.sub(r'alttext="[^"]*"', "", body)


def test_no_page_requests_a_third_party_host(built_site):
    site, _ = built_site
    external = re.compile(r'<(?:script|img|iframe|source|video|audio)[^>]+src="(?:https?:)?//|'
                          r'<link[^>]+rel="(?:stylesheet|preconnect|preload|icon|manifest)"[^>]+href="(?:https?:)?//')
    for page in site.rglob("*.html"):
        assert not external.search(page.read_text(encoding="utf-8")), page
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        assert not re.search(r"url\(['\"]?(?:https?:)?//|@import\s+['\"]?(?:url\()?['\"]?https?:", text), css


def _structure(html):
    article = html.split("<article", 1)[1].split("</article>", 1)[0]
    sections = len(re.findall(r"<h2[ >]", article))
    display_math = re.findall(r'<div class="termbase-math">(.*?)</div>', article, re.S)
    figures = len(re.findall(r'class="termbase-figure"', article))
    return sections, display_math, figures


# A decimal comma in MathML, as latex2mathml writes `0{,}1`: the Spanish and Danish formulas
# write the decimal sign of their language (core/mathml.py in_language).
DECIMAL_COMMA = re.compile(r"<mn>(\d+)</mn><mrow><mo>&#x0002C;</mo></mrow><mn>(\d+)</mn>")
DECIMAL_POINT = re.compile(r"<mn>\d+\.\d+</mn>")


def _without_words(mathml: str) -> str:
    """A formula's MathML without its words (`\\text{...}`, <mtext>) and its LaTeX (alttext),
    which are in the page's language (ui.yml `formula_text`), its decimal commas written as points."""
    mathml = DECIMAL_COMMA.sub(r"<mn>\1.\2</mn>", mathml)
    return re.sub(r"<mtext>[^<]*</mtext>", "<mtext/>", re.sub(r' alttext="[^"]*"', "", mathml))


def test_entries_have_the_same_sections_formulas_and_figures_in_every_language(built_site):
    site, _ = built_site
    english_words = {lang: {w.strip() for w, per in BASE.ui["formula_text"].items() if per[lang].strip() != w.strip()}
                     for lang in LANGS if lang != DEFAULT}  # the words a language writes otherwise
    for slug in terms():
        url = f"glossary/{slug}/"
        en = _structure(page_for(site, "en", url).read_text(encoding="utf-8"))
        assert en[0] >= 7 and en[1], f"{slug}: an entry has its sections and at least one formula"
        for lang in (x for x in LANGS if x != DEFAULT):
            here = _structure(page_for(site, lang, url).read_text(encoding="utf-8"))
            assert (here[0], [_without_words(m) for m in here[1]], here[2]) == \
                (en[0], [_without_words(m) for m in en[1]], en[2]), f"{lang}/{url}"
            shown = {unescape(w).replace("\xa0", " ").strip()
                     for m in here[1] for w in re.findall(r"<mtext>([^<]*)</mtext>", m)}
            assert not shown & english_words[lang], f"{lang}/{url}: English words in its formulas"
            assert not any(DECIMAL_POINT.search(m) for m in here[1]), f"{lang}/{url}: a decimal point in its formulas"
    decimals = [slug for slug in terms() if any(DECIMAL_POINT.search(m) for m in
                                                _structure(page_for(site, "en", f"glossary/{slug}/").read_text(encoding="utf-8"))[1])]
    assert decimals, "some entry's formula has a decimal number (rope-scaling: t = 0.1 ln s + 1)"
    with_figure = sum(bool(terms()[slug].get("figure")) for slug in terms())
    assert with_figure * 2 >= len(terms()), "at least half of the entries have a picture"


def test_each_language_lists_every_name_of_every_entry_for_its_search(built_site):
    """search/names.json, which the search worker reads to put a named entry first: each
    language's site maps the names of all three languages to its own entry's address."""
    site, _ = built_site
    for lang in LANGS:
        names = json.loads((site / prefix(lang) / "search" / "names.json").read_text(encoding="utf-8"))
        for slug, record in terms().items():
            for other in LANGS:
                term = " ".join(record[other]["term"].lower().replace("-", " ").split())
                # a clash goes to the page language's own term; no name may lead nowhere
                assert names[term] in {f"glossary/{s}/" for s in terms()}, (lang, other, term)
            own = " ".join(record[lang]["term"].lower().replace("-", " ").split())
            assert names[own] == f"glossary/{slug}/", (lang, slug)
        # the keys an entry explains are on its page, so that search finds it (names.json ranks it)
        html = page_for(site, lang, "glossary/rotary-position-embedding/").read_text(encoding="utf-8")
        html = html.replace("<wbr>", "")  # break points in long inline code
        assert "<code>rope_theta</code>" in html and "<code>partial_rotary_factor</code>" in html, lang


def test_search_takes_a_config_key_to_its_entry_and_no_key_is_a_name():
    """A reader who types a key met in a model's config.json (rope_theta) lands on the entry
    that explains it (config_keys.yml), in every language; the key is not one of the entry's
    names, which the term base exports as synonyms."""
    from termbase.site import search_names

    keys = BASE.config_keys
    assert "rope_theta" in keys and keys["rope_theta"]["entry"] == "rotary-position-embedding"
    for lang in LANGS:
        names = search_names.names(BASE, lang)
        for key, about in keys.items():
            assert names[search_names.normalized(key)] == f"glossary/{about['entry']}/", (lang, key)
    for slug, record in terms().items():
        for lang in LANGS:
            named = {record[lang]["term"], *(record[lang].get("synonyms") or []), *(record[lang].get("names") or {})}
            assert not named & set(keys), (slug, lang, named & set(keys))


def test_pages_for_machines_llms_txt_and_each_page_as_markdown(built_site):
    site, _ = built_site
    for lang in LANGS:
        llms = (site / prefix(lang) / "llms.txt").read_text(encoding="utf-8")
        assert llms.startswith(f"# {BASE.ui['site_name'][lang]}\n")
        for slug, term in terms().items():
            line = next((x for x in llms.splitlines() if f"/{prefix(lang)}glossary/{slug}/index.md)" in x), None)
            assert line and " ".join(str(term[lang]["short"]).split()) in line, (lang, slug)
        page = (site / prefix(lang) / "glossary" / "attention-mask" / "index.md").read_text(encoding="utf-8")
        assert "--8<--" not in page and "{{" not in page, "every marker and include is expanded"
        assert "def masked_attention(" in page, "the code blocks are in the Markdown, as tested"
        assert "<a " not in page and "<span" not in page
        html = page_for(site, lang, "glossary/attention-mask/").read_text(encoding="utf-8")
        for code in re.findall(r"```python\n(.*?)```", page, re.S):
            assert code.strip() in unescape(re.sub(r"<[^>]+>", "", html)), "the same code as the page"


def test_sources_are_listed_in_the_page_language_where_they_have_a_translated_title(built_site):
    """A description of a source (a config file, a documentation page) is translated; a
    paper's title is not. Each entry lists its sources with the title of its language."""
    site, _ = built_site
    translated = [sid for sid, src in BASE.sources.items() if isinstance(src["title"], dict)]
    assert translated, "descriptive sources have titles per language in sources.yml"
    for slug, record in terms().items():
        for lang in LANGS:
            text = unescape(page_for(site, lang, f"glossary/{slug}/").read_text(encoding="utf-8"))
            for sid in record["sources"]:
                assert BASE.source_title(sid, lang) in text, f"{lang}/glossary/{slug}/: source {sid}"
                title = BASE.sources[sid]["title"]
                if isinstance(title, dict) and lang != DEFAULT and title.get(lang):
                    assert title[DEFAULT] not in text, f"{lang}/glossary/{slug}/ shows {sid} in English"
