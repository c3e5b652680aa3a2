"""The forms to avoid are found by one case-blind, whole-word regex per language, run only on
the lines that `_words_filter` lets through (termbase/core/check/language.py): the filter must
let through every line the regex matches, or a form would go unreported."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from termbase.core.check.language import _words_filter

# Letters of the three languages with their capitals, the long s (which the case-blind regex
# matches as an s), digits, and what stands between words in a phrase or a line.
LETTERS = "aesntkøæåñóéíSNTKØÆÅÑÓÉſ1"
word = st.text(LETTERS, min_size=1, max_size=4)
joint = st.sampled_from([" ", "-", "'", "’", " - ", "\u00a0", ". ", "«", "»", "`"])


def joined(draw_words, draw_joints):
    return "".join(w + j for w, j in zip(draw_words, draw_joints)) + draw_words[-1]


@st.composite
def phrase(draw):
    words = draw(st.lists(word, min_size=1, max_size=3))
    return joined(words, draw(st.lists(joint, min_size=len(words) - 1, max_size=len(words) - 1)))


@st.composite
def line(draw, phrases):
    parts = draw(st.lists(st.one_of(word, st.sampled_from(phrases), st.sampled_from(phrases).map(str.upper)),
                          min_size=1, max_size=8))
    return joined(parts, draw(st.lists(joint, min_size=len(parts) - 1, max_size=len(parts) - 1)))


def regex(phrases):
    """The regex of check_language, as it is built there."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
                      + r")(?![\w-])", re.I)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_filter_lets_through_every_line_the_regex_matches(data):
    phrases = data.draw(st.lists(phrase(), min_size=1, max_size=6, unique_by=str.lower))
    text = data.draw(line(phrases))
    if regex(phrases).search(text):
        assert _words_filter(phrases)(text), (phrases, text)


def test_the_filter_keeps_out_lines_without_a_phrases_words():
    may_match = _words_filter(["multi-head attention", "kernel fusionado"])
    assert may_match("The Multi-Head Attention layer")
    assert may_match("un KERNEL fusionado")
    assert not may_match("attention, with many heads")  # "multi" and "head" are missing
    assert not may_match("un kernel sin fusionar")
    assert _words_filter(["«»"])("any line at all")  # a phrase without a word: every line
