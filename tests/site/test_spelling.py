"""Spelling: every language's prose is checked with hunspell and the dictionary its style guide
names. Without hunspell the checker only notes that it skipped spelling, so that a reader can
serve the site with Python alone; CI must spell-check, so there a missing dictionary fails."""

import os

import pytest

from termbase.core import spelling
from termbase.core.model import TermBase
from tests.site.sitetools import LANGS, PROJECT

BASE = TermBase(PROJECT)


@pytest.mark.parametrize("lang", LANGS)
def test_every_language_is_spell_checked_in_ci(lang):
    dictionary = BASE.style(lang).get("dictionary")
    assert dictionary, f"termbase/data/style/{lang}.yml names its hunspell dictionary"
    missing = spelling.available(dictionary)
    if missing and os.environ.get("CI") != "true":
        pytest.skip(missing)
    assert missing is None, missing


def test_words_are_found_as_the_checker_spells_them():
    assert spelling.words("The query's d_model-wide vector, GQA's 513th key, and “dvs.”") == (
        "The", "query", "wide", "vector", "key", "and", "dvs.")


@pytest.mark.parametrize("lang", LANGS)
def test_the_models_pages_notes_are_checked_as_prose(lang):
    """A note of termbase/data/models.yml is read like every other text a reader sees (spelling,
    avoided forms, typography), at its own line: `note` in the default language, `note_<lang>`
    in the others. Before this, "uden rotation" and a thousands separator without a no-break
    space reached the page unchecked."""
    from termbase.core.check import language

    field = "note" if lang == BASE.default_language else f"note_{lang}"
    path = PROJECT.data_dir / "models.yml"
    source = path.read_text(encoding="utf-8").splitlines()
    checked = [item for item in language._lines(BASE, {}, lang) if item.path == path]
    expected = sum(line.count(f"{field}: ") for line in source)
    assert expected > 10 and len(checked) == expected
    for item in checked:
        assert f"{field}: " in source[item.line - 1], f"models.yml:{item.line} holds no {field}"


def test_hunspells_answers_are_kept_between_runs_per_dictionary_and_word_list(tmp_path, monkeypatch):
    """spelling.unknown with a folder: a later process asks hunspell only about words no run
    asked about, with the same answers; another word list, or a broken file, starts afresh."""
    dictionary = BASE.style("en").get("dictionary")
    if spelling.available(dictionary):
        pytest.skip(spelling.available(dictionary))
    asked = []
    ask = spelling._hunspell
    monkeypatch.setattr(spelling, "_hunspell", lambda d, args, lines, personal=(): asked.append(lines) or ask(
        d, args, lines, personal))
    monkeypatch.setattr(spelling, "_answers", {})
    words = frozenset({"attention", "atention", "softmax"})
    first = spelling.unknown(dictionary, words, ("softmax",), tmp_path)
    assert first == {"atention"} and asked == [["atention", "attention", "softmax"]]
    monkeypatch.setattr(spelling, "_answers", {})  # a new process
    assert spelling.unknown(dictionary, words | {"keyz"}, ("softmax",), tmp_path) == {"atention", "keyz"}
    assert asked[1:] == [["keyz"]]
    monkeypatch.setattr(spelling, "_answers", {})
    assert spelling.unknown(dictionary, words, (), tmp_path) == {"atention", "softmax"}  # another word list
    assert asked[2:] == [["atention", "attention", "softmax"]]
    for stored in tmp_path.glob("*.json"):
        stored.write_text("{", encoding="utf-8")
    monkeypatch.setattr(spelling, "_answers", {})
    assert spelling.unknown(dictionary, words, ("softmax",), tmp_path) == {"atention"}
    assert len(asked) == 4
