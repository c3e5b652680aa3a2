"""What a reader takes away: any term, typed in any of the site's languages, finds its entry in
the page's own language; each code block downloads as a .py holding exactly what its copy button
copies; each notebook page opens in Colab from the hosted repository."""

import re

import pytest

from termbase.core import notebook_source
from termbase.core.model import TermBase
from tests.browser.test_reading import lang_of, prefix, search
from tests.site.sitetools import LANGS, PROJECT

BASE = TermBase(PROJECT)
LOOKUP = "cross-attention"  # its names differ in every language
KEY = "head_dim"  # a config.json key that no prose of its entry (attention-head) mentions
ENTRY = "glossary/multi-head-attention/"


def names(slug: str, lang: str) -> list[str]:
    local = BASE.terms[slug][lang]
    return [local["term"], *[s for s in local.get("synonyms") or [] if not s.isupper()][:1]]


@pytest.mark.parametrize("lang", LANGS)
def test_a_term_typed_in_any_language_finds_the_entry_in_the_page_language(reader, page, lang):
    # One page load (and one search index) per language, every name typed into its box in turn,
    # then a config.json key.
    with reader.watch(f"searches on the {lang} site"):
        reader.goto(prefix(lang))
        for typed_in in LANGS:
            for query in names(LOOKUP, typed_in):
                results = search(page, query)
                assert results, f"{lang}: '{query}' ({typed_in}) finds nothing"
                assert all(lang_of(p) == lang for p in results), \
                    f"{lang}: '{query}' finds other languages' pages: {results}"
                assert results[0] == f"{prefix(lang)}glossary/{LOOKUP}/", \
                    f"{lang}: '{query}' ({typed_in}) lists {results[:3]}"
                page.keyboard.press("Escape")
        # a key met in a model's config.json leads to the entry that explains it
        entry = BASE.config_keys[KEY]["entry"]
        results = search(page, KEY)
        assert results and results[0] == f"{prefix(lang)}glossary/{entry}/", f"{lang}: '{KEY}' lists {results[:3]}"
        page.keyboard.press("Escape")


@pytest.mark.parametrize("lang", LANGS)
def test_each_block_downloads_as_exactly_what_its_copy_button_copies(reader, page, lang):
    with reader.watch("downloads"):
        reader.goto(prefix(lang) + ENTRY)
        blocks = page.locator("div.language-python.highlight")
        assert blocks.count() >= 1
        for i in range(blocks.count()):
            block = blocks.nth(i)
            link = block.locator("a.termbase-download")
            assert link.count() == 1, f"block {i}: no download link"
            assert re.fullmatch(r"[a-z0-9-]+\.py", link.get_attribute("download"))
            page.evaluate("navigator.clipboard.writeText('(nothing copied)')")
            block.locator("button.md-code__button[data-md-type=copy]").click()
            copied = page.evaluate("navigator.clipboard.readText()")
            downloaded = page.evaluate("href => fetch(href).then(r => r.text())", link.evaluate("a => a.href"))
            assert downloaded.removesuffix("\n") == copied.removesuffix("\n"), f"block {i}: the download differs"
            assert copied.strip(), f"block {i}: nothing copied"


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_pages_open_in_colab_from_the_repository(crawl, lang):
    """On the buttons the crawl read on each notebook page (tests/browser/crawl.py)."""
    pages = crawl.language(lang)
    label = BASE.t("open_in_colab", lang, "page")
    for path in notebook_source.source_paths(PROJECT):
        url = prefix(lang) + f"notebooks/{path.stem}/"
        assert url in pages, f"the crawl did not visit {url}"
        colab = [button for button in pages[url]["buttons"] if label in button["text"]]
        assert len(colab) == 1, f"{lang}/{path.stem}: {len(colab)} Colab links ({pages[url]['buttons']})"
        assert colab[0]["href"] == (f"https://colab.research.google.com/github/{REPOSITORY}/blob/main/"
                                    f"notebooks/{lang}/{path.stem}.ipynb")
        assert (PROJECT.root / "notebooks" / lang / f"{path.stem}.ipynb").is_file()


REPOSITORY = "attention-glossary/attention-glossary"
