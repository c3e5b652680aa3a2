"""The words of the term records' formulas (`\\text{...}`) in the page's language: ui.yml's
`formula_text` translates them, `formula_labels` lists the names kept as they are, and the check
names any other with its record and line (termbase/core/mathml.py, core/check/records.py)."""

import copy
import dataclasses
import functools
import shutil

import pytest
import yaml

from termbase.core import check, mathml
from termbase.core.check import records
from termbase.core.model import TermBase
from termbase.site.pages import Pages
from tests.site.sitetools import DEFAULT, LANGS, PROJECT

OTHERS = [lang for lang in LANGS if lang != DEFAULT]


def problems_with(edit, *, all_of_them=False) -> list[str]:
    """The record rules' problems for this project with its ui.yml edited by `edit(ui)`: those
    the edit adds (a problem the real sources already have is the next test's, not this one's),
    or `all_of_them`."""
    base = TermBase(PROJECT)
    ui = copy.deepcopy(base.ui)
    edit(ui)
    base.__dict__["ui"] = ui  # TermBase.ui is a cached property: this is what the rules read
    report = check.Report(PROJECT)
    records.check_records(base, report)
    found = [str(problem) for problem in report]
    if all_of_them:
        return found
    return [problem for problem in found if problem not in _real_problems()]


@functools.cache
def _real_problems() -> frozenset[str]:
    """The problems of the real sources (none when they are in order), computed once."""
    return frozenset(problems_with(lambda ui: None, all_of_them=True))


def test_the_real_records_pass_every_record_rule_formula_words_included():
    assert problems_with(lambda ui: None, all_of_them=True) == []


def test_a_word_in_neither_list_is_named_with_its_record_and_line():
    found = problems_with(lambda ui: ui["formula_text"].pop("otherwise"))
    line = next(i for i, text in enumerate(
        (PROJECT.data_dir / "terms" / "tree-attention.yml").read_text(encoding="utf-8").splitlines(), 1)
        if "otherwise" in text)
    assert (f"termbase/data/terms/tree-attention.yml:{line}: formula 1: \\text{{otherwise}} is shown as it is in "
            "every language - add `\"otherwise\": {es: ..., da: ...}` under `formula_text:` in "
            "termbase/data/ui.yml, or, for a name that stays the same in every language, add it to "
            "`formula_labels:` there") in found
    assert all("otherwise" in problem for problem in found)


def test_a_translation_that_breaks_the_formula_and_an_unused_entry_are_reported():
    def edit(ui):
        ui["formula_text"]["otherwise"]["es"] = "en otro {caso"
        ui["formula_text"]["nowhere"] = {"es": "en ninguna parte", "da": "ingen steder"}
        ui["formula_labels"].append("unused-label")

    found = problems_with(edit)
    assert any("tree-attention.yml" in p and "does not parse with the es words of `formula_text`" in p for p in found)
    assert any(p.startswith("termbase/data/ui.yml:") and "'nowhere' is in no formula" in p for p in found)
    assert any(p.startswith("termbase/data/ui.yml:") and "'unused-label' is in no formula" in p for p in found)


@pytest.mark.parametrize("lang", OTHERS)
def test_an_entry_shows_its_formula_words_in_the_page_language(lang):
    base = TermBase(PROJECT)
    words = base.formula_words(lang)
    shown = Pages(base, lang, status=None, home=f"/{lang}/").formula("tree-attention", "glossary/tree-attention.md")
    assert f"\\text{{{words['otherwise']}}}" in shown and f"\\text{{{words['ancestors of ']}}}" in shown
    assert "\\text{otherwise}" not in shown or words["otherwise"] == "otherwise"
    english = Pages(base, DEFAULT, status=None, home="/").formula("tree-attention", "glossary/tree-attention.md")
    assert "\\text{otherwise}" in english and "\\text{ancestors of }" in english


def test_labels_stay_and_only_whole_text_runs_are_replaced():
    words = {"or": "o", "cache": "caché"}
    tex = r"K^{\text{cache}}_{\text{model}} \ \text{ or } \ x \text{or} \mathrm{cache}"
    assert mathml.text_runs(tex) == ["cache", "model", " or ", "or"]
    assert mathml.in_language(tex, words) == r"K^{\text{caché}}_{\text{model}} \ \text{ or } \ x \text{o} \mathrm{cache}"


@pytest.mark.parametrize("tex, runs, odd, spanish", [
    (r"a \text {or} b", ["or"], 0, r"a \text{o} b"),  # a space before the brace: still a word
    (r"a \\ \text{or} b", ["or"], 0, r"a \\ \text{o} b"),  # after a line break
    (r"a \\\text{or}", ["or"], 0, r"a \\\text{o}"),
    (r"\textbf{or} \mbox{or} \textit{or}", [], 3, r"\textbf{or} \mbox{or} \textit{or}"),  # refused by the check
    (r"\text{or {x} y}", [], 1, r"\text{or {x} y}"),  # braces inside: refused
    (r"\textstyle x \text{or}", ["or"], 0, r"\textstyle x \text{o}"),  # a style, not words
])
def test_which_spellings_are_words_and_which_the_check_refuses(tex, runs, odd, spanish):
    assert mathml.text_runs(tex) == runs
    assert mathml.odd_text(tex) == odd
    assert mathml.in_language(tex, {"or": "o"}) == spanish


def test_words_written_another_way_are_refused_with_the_record_and_line():
    report = check.Report(PROJECT)
    path = PROJECT.data_dir / "terms" / "tree-attention.yml"
    records._FormulaWords(TermBase(PROJECT)).check(report, path, 7, 1, r"0 \ \textbf{otherwise}")
    assert [str(p) for p in report] == [
        "termbase/data/terms/tree-attention.yml:7: formula 1 writes words another way than \\text{...} (\\textbf, "
        "\\mbox, braces inside \\text): they would stay in English on every page - write each word as \\text{...} "
        "with no braces inside (ui.yml `formula_text` translates it)"]


def data_problems(tmp_path, edit) -> list[str]:
    """check_data's problems for a copy of ui.yml edited by `edit(ui)` (the rest of the project as it is)."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT.data_dir, data, ignore=shutil.ignore_patterns("terms", "attestations"))
    ui = yaml.safe_load((data / "ui.yml").read_text(encoding="utf-8"))
    edit(ui)
    (data / "ui.yml").write_text(yaml.safe_dump(ui, allow_unicode=True, sort_keys=False), encoding="utf-8")
    project = dataclasses.replace(PROJECT, data_dir=data)
    report = check.Report(project)
    records.check_data(TermBase(project), report)
    return [str(p) for p in report]


def test_a_translation_must_be_plain_words_and_the_table_a_mapping(tmp_path):
    def markup(ui):
        ui["formula_text"]["otherwise"]["es"] = "<b>en otro caso</b>"
        ui["formula_text"]["and"]["da"] = 3
        del ui["formula_text"]["salt"]["da"]

    found = data_problems(tmp_path, markup)
    assert any("'formula_text.\"otherwise\".es' is not plain words: '<b>en otro caso</b>'" in p for p in found)
    assert any("'formula_text.\"and\".da' is not plain words: 3" in p for p in found)
    assert any("'formula_text.salt' has no 'da' string" in p for p in found)
    found = data_problems(tmp_path / "list", lambda ui: ui.update(formula_text=["otherwise"]))
    assert any("'formula_text' is not a mapping" in p for p in found)
