"""The forms to avoid are found by one case-blind, whole-word regex per language
(`forms_regex`), run only on the lines that `_words_filter` lets through
(termbase/core/check/language.py): the filter must let through every line the regex matches,
or a form would go unreported; and a match names its form however re.I matched it."""

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from termbase.core.check.language import UNFOLDED, _words_filter, fold, forms_regex

# Letters of the three languages with their capitals, characters that re.I matches with
# others while str.lower() or casefold() do not (ſ, the Kelvin sign, µ, ς, ẞ, İ, ı, U+0345),
# digits, and what stands between words in a phrase or a line.
LETTERS = "aesntkiøæåñóéSNTKIØÆÅÑÓÉ1" + "\u017f\u212a\u00b5\u03bc\u03c2\u03c3\u00df\u1e9e\u0130\u0131\u0345"
word = st.text(LETTERS, min_size=1, max_size=4)
joint = st.sampled_from([" ", "-", "'", "’", " - ", "\u00a0", ". ", "«", "»", "`", "_"])


def joined(words, joints):
    return "".join(w + j for w, j in zip(words, joints)) + words[-1]


@st.composite
def phrase(draw):
    words = draw(st.lists(word, min_size=1, max_size=3))
    return joined(words, draw(st.lists(joint, min_size=len(words) - 1, max_size=len(words) - 1)))


def variant(text: str) -> str:
    """`text` as re.I still matches it: each letter in another case, ſ for s, ı for i."""
    swap = {"s": "\u017f", "i": "\u0131", "I": "\u0130", "k": "\u212a", "\u03c3": "\u03c2", "\u03bc": "\u00b5",
            "\u00df": "\u1e9e"}
    return "".join(swap.get(c, c.swapcase()) for c in text)


@st.composite
def line(draw, phrases):
    parts = draw(st.lists(st.one_of(word, st.sampled_from(phrases), st.sampled_from(phrases).map(variant)),
                          min_size=1, max_size=8))
    return joined(parts, draw(st.lists(joint, min_size=len(parts) - 1, max_size=len(parts) - 1)))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_filter_lets_through_every_line_the_regex_matches(data):
    phrases = sorted({p.lower() for p in data.draw(st.lists(phrase(), min_size=1, max_size=6))},
                     key=len, reverse=True)  # as check_language makes them
    text = data.draw(line(phrases))
    matches = list(forms_regex(phrases).finditer(text))
    if matches:
        assert _words_filter(phrases)(text), (phrases, text)
    for match in matches:  # the group names the form, whatever re.I matched
        assert re.fullmatch(re.escape(phrases[int(match.lastgroup[1:])]), match.group(), re.I)


def test_the_folding_agrees_with_re_on_every_character():
    """Any two characters that re.I takes as the same fold to the same text, and UNFOLDED holds
    every character that is no word character to re but folds to one. re.I compares single
    characters by their simple case mappings: its candidates are the classes that lower(),
    upper() and casefold() link (about 2,900 cased characters)."""
    cased = [chr(cp) for cp in range(sys.maxunicode + 1)
             if (c := chr(cp)).lower() != c or c.upper() != c or c.casefold() != c]
    parent: dict[str, str] = {}

    def root(char):
        while parent.get(char, char) != char:
            char = parent[char]
        return char

    for char in cased:
        for other in (char.lower(), char.upper(), char.casefold()):
            if len(other) == 1 and root(other) != root(char):
                parent[root(char)] = root(other)
    classes: dict[str, list[str]] = {}
    for char in cased:
        classes.setdefault(root(char), []).append(char)
    apart = [(a, b) for members in classes.values() for a in members for b in members
             if a != b and re.fullmatch(re.escape(a), b, re.I) and fold(a) != fold(b)]
    assert not apart, [(hex(ord(a)), hex(ord(b))) for a, b in apart]
    becomes_word = {c for c in cased if not re.match(r"\w", c) and re.search(r"\w", fold(c))}
    assert becomes_word == set(UNFOLDED)


def test_the_filter_keeps_out_lines_without_a_phrases_words():
    may_match = _words_filter(["multi-head attention", "kernel fusionado"])
    assert may_match("The Multi-Head Attention layer")
    assert may_match("un KERNEL fusionado")
    assert may_match("un kernel fusıonado")  # re.I reads ı as i
    assert not may_match("attention, with many heads")  # "multi" and "head" are missing
    assert not may_match("un kernel sin fusionar")
    assert _words_filter(["«»"])("any line at all")  # a phrase without a word: every line
