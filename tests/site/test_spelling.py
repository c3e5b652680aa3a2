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
    assert spelling.words("The query's d_model-wide vector, GQA's 513th key, and “dvs.”") == [
        "The", "query", "wide", "vector", "key", "and", "dvs."]
