"""Alphabetical order in a language, as a glossary reader expects it: the language's alphabet
(`labels.alphabet` in termbase/data/ui.yml) decides the letters and their order, so Spanish puts
ñ after n and Danish puts æ, ø, å after z; accents outside the alphabet are ignored (á sorts as
a), case is ignored, and words sort word by word (a space or a hyphen before any letter)."""

from __future__ import annotations

import unicodedata


def sort_key(text: str, alphabet: str) -> tuple:
    """A key that orders `text` in the language whose letters, in order, are `alphabet`."""
    rank = {letter: number for number, letter in enumerate(alphabet)}
    letters = []
    for char in text.lower():
        if char in rank:
            letters.append((2, rank[char]))
            continue
        base = unicodedata.normalize("NFD", char)[0]
        if base in rank:
            letters.append((2, rank[base]))
        elif base.isdigit():
            letters.append((1, int(base)))
        elif base in " -/":
            letters.append((0, 0))
        # anything else (quotes, parentheses, apostrophes) does not change the order
    return tuple(letters), text


def initial(text: str, alphabet: str) -> str:
    """The letter a term is filed under: its first letter of the alphabet, or '#' (digits)."""
    for char in text.lower():
        if char in alphabet:
            return char.upper()
        base = unicodedata.normalize("NFD", char)[0]
        if base in alphabet:
            return base.upper()
        if base.isdigit():
            return "#"
    return "#"
