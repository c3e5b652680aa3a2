"""Glossary tooltips: which mentions become links, in the page's language."""

from termbase.core.model import TermBase
from termbase.site import tooltips
from tests.site.sitetools import PROJECT

BASE = TermBase(PROJECT)
TABLES = {lang: tooltips.Tooltips(BASE, lang) for lang in BASE.languages}


def terms():
    return BASE.terms


def add(html, url, lang, slug):
    return TABLES[lang].add(html, url, slug)


def links(html):
    import re
    return re.findall(r'<a class="termbase-term" href="([^"]+)" title="([^"]*)">([^<]+)</a>', html)


def test_first_mention_of_each_term_links_to_its_entry_with_the_short_definition():
    html = "<p>softmax here, softmax again; <em>multi-head attention</em> and attention.</p>"
    found = links(add(html, "faq/x/", "en", None))
    assert [(href, text) for href, _, text in found] == [
        ("../../glossary/softmax/", "softmax"),
        ("../../glossary/multi-head-attention/", "multi-head attention"),
        ("../../glossary/attention/", "attention"),
    ]
    assert found[0][1] == tooltips.plain(terms()["softmax"]["en"]["short"]).replace("'", "&#x27;")


def test_in_the_page_language_only():
    da = links(add("<p>opmærksomhedsmaske og kausal maske</p>", "x/", "da", None))
    assert [text for _, _, text in da] == ["opmærksomhedsmaske", "kausal maske"]
    assert not links(add("<p>kausal maske</p>", "x/", "en", None))


def test_never_inside_code_headings_links_struck_forms_or_compounds():
    html = ("<h2>softmax</h2><pre><code>softmax</code></pre><p><del>atención propia</del> "
            "<a href='x'>softmax</a> attention-vægte self-attention</p>")
    found = links(add(html, "x/", "en", None))
    assert [text for _, _, text in found] == ["self-attention"]
    assert "<h2>softmax</h2>" in add(html, "x/", "en", None)


def test_not_the_page_own_term_nor_a_term_the_author_linked():
    html = '<p>softmax and <a href="../attention/">see</a> attention</p>'
    own = links(add(html.replace("../attention/", "../../glossary/attention/"),
                                      "glossary/softmax/", "en", "softmax"))
    assert own == []


def test_no_link_inside_the_names_in_other_languages_or_the_hidden_synonyms():
    for lang in BASE.languages:
        for slug, term in terms().items():
            others = " · ".join(f'{other}: <em lang="{other}">{term[other]["term"]}</em>'
                                for other in BASE.languages if other != lang)
            html = (f"<p><strong>Other languages:</strong> {others} <span class=\"termbase-search-terms\" hidden>"
                    f"{', '.join(term[lang].get('synonyms') or [])}</span></p>")
            assert not links(add(html, f"glossary/{slug}/", lang, slug)), (lang, slug)


def test_no_link_inside_the_pages_own_names_in_any_language():
    for lang in BASE.languages:
        for slug, term in terms().items():
            names = [term[other]["term"] for other in BASE.languages]
            html = "<p>" + ". ".join(names) + ".</p>"
            assert not links(add(html, f"glossary/{slug}/", lang, slug)), (lang, slug, names)
    # the same words on another page are linked as usual
    assert links(add("<p>multi-head attention</p>", "glossary/softmax/", "en", "softmax"))
