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


def test_every_value_of_every_column_has_a_source():
    """Each model fills every column of both tables; a value that is not null names a source of
    sources.yml (null is 'not published'), and the two tables together show every column once."""
    from termbase.site.model_table import GROUPS

    assert [column for group in GROUPS for column in group] == list(COLUMNS)
    assert {"layer_pattern", "rope_scaling", "partial_rotary", "sinks", "output_gate", "score_scale"} <= set(COLUMNS)
    for model in models(BASE):
        for column in COLUMNS:
            cell = model.get(column)
            assert isinstance(cell, dict) and "value" in cell, f"{model['id']}: {column}"
            if cell["value"] is not None:
                assert cell.get("source") in BASE.sources, f"{model['id']}: {column} = {cell['value']}"
            for lang in ("es", "da"):  # a note is written in every language, not left in English
                assert bool(cell.get("note")) == bool(cell.get(f"note_{lang}")), f"{model['id']}: {column} note_{lang}"


@pytest.mark.parametrize(("lang", "words"), [
    ("en", ["5 local : 1 full", "3 linear : 1 full", "3 chunked : 1 full", "yarn ×40", "llama3 ×16",
            "1.874/√192", "1/√168"]),
    ("es", ["5 locales : 1 completa", "3 lineales : 1 completa", "3 por trozos : 1 completa", "yarn ×40",
            "1,874/√192", "1/√168"]),
    ("da", ["5 lokale : 1 fuldt", "3 lineære : 1 fuldt", "3 chunked : 1 fuldt", "yarn ×40", "1,874/√192"]),
])
def test_the_new_columns_are_written_in_the_page_language(lang, words):
    """The layer ratio agrees with its counts in each language, a RoPE scaling is its rope_type
    and factor, and a score scale is written with the language's decimal separator."""
    from termbase.site.model_table import model_table

    table = model_table(BASE, lang, "models.md")
    for word in words:
        assert word in table, f"{lang}: {word}"
    assert table.count('<div class="termbase-models" markdown>') == 2


def test_the_checker_rejects_a_malformed_value_with_its_path_and_line(tmp_path):
    """A ratio that is not `3 linear : 1 full`, a RoPE scaling without its factor, a score scale
    that is not a factor, a share above 1 and a yes/no column with a word: each is a
    `path:line: problem - fix` error of `termbase check`."""
    import subprocess
    import sys

    from tests.site.sitetools import build_env, copy_project

    project = copy_project(tmp_path / "project", cache=False)
    path = project / "termbase" / "data" / "models.yml"
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("  - id: gpt-oss-120b")
    broken = {
        "layer_pattern": ('    layer_pattern: {value: "1 sliding, 1 full", source: gpt-oss-code}',
                          "`layer_pattern` of 'gpt-oss-120b' is '1 sliding, 1 full', not a ratio of layer kinds"),
        "rope_scaling": ("    rope_scaling: {value: yarn, source: gpt-oss-code}",
                         "`rope_scaling` of 'gpt-oss-120b' 'yarn' has no `factor` greater than 1"),
        "score_scale": ('    score_scale: {value: "1/sqrt(64)", source: gpt-oss-code}',
                        "`score_scale` of 'gpt-oss-120b' is '1/sqrt(64)', not a factor"),
        "partial_rotary": ("    partial_rotary: {value: 1.5, source: gpt-oss-code}",
                           "`partial_rotary` of 'gpt-oss-120b' is '1.5', not a share of the head below 1"),
        "sinks": ("    sinks: {value: learned, source: gpt-oss-code}",
                  "`sinks` of 'gpt-oss-120b' is 'learned', not true or false"),
    }
    expected = []
    end = lines.index("", start)  # the model's block ends at the blank line after it
    for number in range(start, end):
        key = lines[number].strip().split(":")[0]
        if key in broken:
            lines[number], message = broken.pop(key)
            expected.append(f"termbase/data/models.yml:{number + 1}: {message} - ")
    assert not broken, f"not found in models.yml: {sorted(broken)}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project, capture_output=True,
                            text=True, env=build_env())
    assert result.returncode == 1, result.stdout
    found = [line for line in result.stdout.splitlines() if line.startswith("termbase/data/models.yml:")]
    assert len(found) == len(expected), result.stdout
    for prefix in expected:
        assert any(line.startswith(prefix) for line in found), (prefix, found)
