"""The A–Z index: each language's alphabetical order (hand-written expected lists), every name
filed under its letter, synonyms and forms to avoid pointing to the preferred term; and the
category index, where every name is a link (so the term linker never runs inside it)."""

import re

import pytest

from termbase.core import collation
from termbase.core.model import TermBase
from termbase.core.status import Status
from termbase.site.pages import Pages
from tests.site.sitetools import LANGS, PROJECT, ROOT

BASE = TermBase(PROJECT)

# Written by hand from each language's rules: Spanish files ñ after n and ignores accents;
# Danish puts æ, ø, å after z; words sort word by word (a space or hyphen before any letter).
BY_HAND = {
    "en": ["á la carte", "alpha", "Beta", "key", "key-value", "keys", "Zeta"],
    "es": ["árbol", "n-grama", "nada", "nube", "ñandú", "ñu", "Óptimo", "oso", "zeta"],
    "da": ["abe", "abe-hoved", "zebra", "æble", "øje", "ørn", "Åben", "ål"],
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_order_of_each_language(lang):
    alphabet = BASE.t("alphabet", lang, "labels")
    shuffled = list(reversed(BY_HAND[lang]))
    assert sorted(shuffled, key=lambda word: collation.sort_key(word, alphabet)) == BY_HAND[lang]


def test_letters_a_term_is_filed_under():
    es, da = BASE.t("alphabet", "es", "labels"), BASE.t("alphabet", "da", "labels")
    assert [collation.initial(w, es) for w in ("ñandú", "Óptimo", "4-bit")] == ["Ñ", "O", "#"]
    assert [collation.initial(w, da) for w in ("ørn", "Åben", "æble")] == ["Ø", "Å", "Æ"]


def rendered(lang):
    return Pages(BASE, lang, Status(PROJECT), "/" if lang == BASE.default_language else f"/{lang}/")


# The real terms, in the order a reader of each language expects (a hand-picked subset).
REAL = {
    "en": ["attention", "attention head", "attention mask", "causal mask", "KV cache", "QK-norm",
           "self-attention", "softmax"],
    "es": ["atención", "atención aditiva", "atención multicabeza", "autoatención", "caché KV",
           "máscara causal", "softmax"],
    "da": ["additiv attention", "attention", "attention-hoved", "kausal maske", "KV-cache", "softmax"],
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_index_lists_every_name_in_order(lang):
    page = rendered(lang).az_index(None, "a-z.md")
    items = re.findall(r"^- (.*)$", page, re.M)
    preferred = [re.fullmatch(r"\[([^\]]+)\]\(glossary/[a-z0-9-]+\.md\)", item) for item in items]
    terms = [match.group(1) for match in preferred if match]
    assert sorted(terms) == sorted(term[lang]["term"] for term in BASE.terms.values())
    expected = [t for t in REAL[lang] if t in terms]
    assert len(expected) >= 5, "the hand-written list no longer matches the term base"
    assert [t for t in terms if t in expected] == expected
    for slug, term in BASE.terms.items():
        for other in [*(term[lang].get("synonyms") or []), *(term[lang].get("avoid") or [])]:
            if other.lower() != term[lang]["term"].lower():
                assert any(item.startswith((other, f"~~{other}~~")) and f"(glossary/{slug}.md)" in item
                           for item in items), f"{other} does not point to {slug}"
    # Every letter link leads to a heading of the page, and every heading has its link.
    anchors = set(re.findall(r"\{ #(letter-[a-zæøåñ]+|letter-digits) \}", page))
    assert set(re.findall(r"\]\(#(letter-[^)]+)\)", page)) == anchors and anchors


@pytest.mark.parametrize("lang", LANGS)
def test_every_name_in_the_category_index_is_a_link(lang):
    page = rendered(lang).glossary_index(None, "glossary/index.md")
    rows = [row for row in page.splitlines() if row.startswith("| ") and not row.startswith("| ---")][1:]
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")][:-1]  # the level is not a name
        if all(c.startswith(("[", "<a ")) for c in cells):
            continue
        assert cells[0] in {BASE.language_name(x) for x in LANGS}, row  # a table's heading row


@pytest.mark.parametrize("lang", LANGS)
def test_the_home_page_maps_every_entry_under_its_category(lang):
    """The home page's `{{ categories }}`: one line per category that has entries, in the
    interface's order, each entry linked once, from beginner to advanced."""
    page = rendered(lang).categories(None, "index.md")
    lines = page.splitlines()
    used = [c for c in BASE.ui["categories"] if any(t["category"] == c for t in BASE.terms.values())]
    assert len(lines) == len(used)
    levels = list(BASE.ui["levels"])
    for line, category in zip(lines, used):
        name = BASE.ui["categories"][category][lang]
        assert line.startswith(f"- **{name[:1].upper()}{name[1:]}**: ")
        slugs = re.findall(r"\]\(glossary/([a-z0-9-]+)\.md\)", line)
        assert sorted(slugs) == sorted(s for s, t in BASE.terms.items() if t["category"] == category)
        ranks = [levels.index(BASE.terms[s]["level"]) for s in slugs]
        assert ranks == sorted(ranks)
    # From a page one folder down, the links climb out of it.
    assert "](../glossary/" in rendered(lang).categories(None, "glossary/index.md")


@pytest.mark.parametrize("lang", LANGS)
def test_the_home_page_shows_the_map(lang):
    page = (ROOT / "docs" / f"index.{lang}.md").read_text(encoding="utf-8")
    assert "{{ categories }}" in page.splitlines()
