"""The models page: one table per language from termbase/data/models.yml, every number written
as the page's language writes numbers, every cell footnoted with its source."""

from html import unescape

import pytest

from termbase.core.model import TermBase
from termbase.site.model_table import COLUMNS, models
from tests.site.sitetools import LANGS, PROJECT, page_for

BASE = TermBase(PROJECT)


@pytest.mark.parametrize(("value", "en", "es", "da"), [
    (4096, "4,096", "4096", "4.096"),  # Spanish groups from five digits (RAE), Danish from four
    (65504, "65,504", "65\u00a0504", "65.504"),
    (1000000.0, "1,000,000", "1\u00a0000\u00a0000", "1.000.000"),
    (50.0, "50", "50", "50"),
    (0.25, "0.25", "0,25", "0,25"),
    (128, "128", "128", "128"),
])
def test_numbers_are_written_as_each_language_writes_them(value, en, es, da):
    assert [BASE.number(value, lang) for lang in ("en", "es", "da")] == [en, es, da]


def test_the_table_has_every_model_with_its_numbers_in_the_page_language(built_site):
    site, _ = built_site
    rows = models(BASE)
    assert len(rows) >= 10
    for lang in LANGS:
        text = unescape(page_for(site, lang, "models/").read_text(encoding="utf-8"))
        for model in rows:
            assert model["name"] in text, f"{lang}: {model['name']}"
            for column in COLUMNS:
                cell = model.get(column) or {}
                value = cell.get("value") if isinstance(cell, dict) else None
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    assert BASE.number(value, lang) in text, f"{lang}: {model['id']} {column} = {value}"
        if lang == "es":  # a plain space never separates thousands on a Spanish page
            assert "4 096" not in text and "1 024" not in text
        for source_id in {c["source"] for m in rows for c in m.values() if isinstance(c, dict) and "source" in c}:
            assert BASE.source_title(source_id, lang) in text, f"{lang}: footnote for {source_id}"


@pytest.mark.parametrize("lang", LANGS)
def test_the_key_index_explains_every_key_and_links_its_entry(lang):
    """The models page's index of config.json keys comes from termbase/data/config_keys.yml, the
    one home of the key -> entry mapping (the config explainer reads it too)."""
    from termbase.core.model import read_yaml
    from termbase.site.model_table import config_keys

    keys = read_yaml(PROJECT.data_dir / "config_keys.yml")["keys"]
    table = config_keys(BASE, lang, "models.md")
    rows = [row for row in table.splitlines()[2:]]
    assert [row.split("`")[1] for row in rows] == sorted(keys)
    for row, key in zip(rows, sorted(keys)):
        entry = keys[key]["entry"]
        assert f"(glossary/{entry}.md)" in row and f"[{BASE.name(entry, lang)}]" in row, row
