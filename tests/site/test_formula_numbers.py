"""Numbers in formulas (termbase/core/mathml.py NUMBER): thin-space groups from five digits,
four digits alone, the page's decimal sign; the check names every other spelling with its file,
line and the number to write, and a record's formula (one string for every language) shows each
language's decimal sign."""

import dataclasses
import shutil

import pytest

from termbase.core import check, mathml
from termbase.core.check import records
from termbase.core.check.pages import PageText, _check_page
from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT

BASE = TermBase(PROJECT)


@pytest.mark.parametrize("tex, decimal, wanted", [
    ("557056 / 1024 = 544", ".", [("557056", "557\\,056")]),
    ("128 \\times 576 = 73\\,728", ".", []),
    ("L = S = 1\\,024", ".", [("1\\,024", "1024")]),
    ("-998\\,244\\,352", ".", []),
    ("\\ln 65\\,504 \\approx 11.09", ".", []),
    ("(1000, 1001, 1002)", ".", []),  # a list, not a grouped number
    ("65,504", ".", [("65,504", "65\\,504")]),
    ("0,125", ".", [("0,125", "0.125")]),
    ("0{,}1", ".", [("0{,}1", "0.1")]),
    ("x_{10000}", ".", [("10000", "10\\,000")]),
    ("\\text{v0.3 of 12345}", ".", []),  # words are not numbers
    # the Danish thousands point: a whole number, or a decimal written with the English point?
    ("65.504 \\cdot 1.024", ",", [("65.504", "65\\,504 (a whole number) or 65{,}504 (a decimal)"),
                                  ("1.024", "1024 (a whole number) or 1{,}024 (a decimal)")]),
    ("0.1 \\ln s + 2.5", ",", [("0.1", "0{,}1"), ("2.5", "2{,}5")]),
    ("\\tanh(1{,}5) = 16\\,777\\,216 / 98\\,304 \\approx 170{,}7", ",", []),
    # a decimal keeps its value: its whole part is grouped, its fraction stays (the thin space's comma is no sign)
    ("65\\,504.5", ",", [("65\\,504.5", "65\\,504{,}5")]),
    ("65504.25", ",", [("65504.25", "65\\,504{,}25")]),
    ("1\\,024.5", ".", [("1\\,024.5", "1024.5")]),
    ("12\\,34", ".", [("12\\,34", "1234")]),
    # indices, tuples and sets are not numbers with a decimal comma
    ("M_{1,1} + (0,1) + (1,2,3) + \\{0,1\\}^d", ",", []),
    # numbers right after a command are numbers; lengths and names are not
    ("2\\times10000 \\approx65504", ".", [("10000", "10\\,000"), ("65504", "65\\,504")]),
    ("\\hspace{0.5em} \\kern0.5em \\mathrm{v0.3} \\operatorname{Llama3.1}", ",", []),
    # three digits after a point on a Spanish or Danish page: thousands or a decimal, both offered
    ("1.125", ",", [("1.125", "1125 (a whole number) or 1{,}125 (a decimal)")]),
    ("1,000,000", ".", [("1,000,000", "1\\,000\\,000")]),
    ("1.2.3", ",", []),  # not a number this rule can read
])
def test_numbers_are_grouped_with_thin_spaces_and_use_the_pages_decimal_sign(tex, decimal, wanted):
    assert [(raw, want) for raw, want, _ in mathml.number_problems(tex, decimal)] == wanted


def test_a_records_decimal_point_becomes_the_pages_decimal_sign_where_the_check_reads_a_number():
    tex = r"t = 0.1 \ln s + 1 \quad \text{v0.3} \hspace{0.5em} \mathrm{v1.5} \times2.5"
    shown = mathml.in_language(tex, {}, ",")
    assert shown == r"t = 0{,}1 \ln s + 1 \quad \text{v0.3} \hspace{0.5em} \mathrm{v1.5} \times2{,}5"
    assert mathml.in_language(tex, {}, ".") == tex
    assert mathml.in_language(r"1.2.3 + 0.5", {}, ",") == r"1.2.3 + 0{,}5"
    assert mathml.problem(shown) is None and mathml.number_problems(shown, ",") == []


def test_a_page_formula_is_checked_with_its_languages_decimal_sign():
    path = PROJECT.docs / "glossary" / "softmax.da.md"
    report = check.Report(PROJECT)
    text = "# Softmax\n\nMed $L = 1.024$ og $t = 0.1$ bliver det\n\n$$\n65504 / 8\n$$\n"
    _check_page(BASE, PageText(path, "glossary/softmax.md", "da", text), {"glossary/softmax.md"}, report)
    found = [str(p) for p in report if "writes the number" in str(p)]
    assert found == [
        "docs/glossary/softmax.da.md:3: a formula writes the number 1.024: a point or comma between digits is neither "
        "a thin space nor this page's decimal sign - write 1024 (a whole number) or 1{,}024 (a decimal)",
        "docs/glossary/softmax.da.md:3: a formula writes the number 0.1: the decimal sign of this page is a comma, "
        "written {,} - write 0{,}1",
        # a display formula's problems name its first line of LaTeX, after the $$ line
        "docs/glossary/softmax.da.md:6: a formula writes the number 65504: the digits are grouped in threes with a "
        "thin space, \\,, from five digits on - write 65\\,504"], found


def test_a_record_formula_is_checked_with_the_decimal_point_and_named_by_its_line(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PROJECT.data_dir, data)
    record = data / "terms" / "positional-encoding.yml"
    text = record.read_text(encoding="utf-8")
    assert "{10\\,000}^" in text
    record.write_text(text.replace("{10\\,000}^", "{10000}^", 1).replace("x_p' = x_p", "x_p' = 0{,}5 x_p", 1),
                      encoding="utf-8")
    line = next(i for i, row in enumerate(record.read_text(encoding="utf-8").splitlines(), 1) if "{10000}^" in row)
    report = check.Report(PROJECT)
    records.check_records(TermBase(dataclasses.replace(PROJECT, data_dir=data)), report)
    found = [(p.line, p.what) for p in report if p.shown.endswith("positional-encoding.yml")]
    assert found == [
        (line, "formula 2 writes the number 10000: the digits are grouped in threes with a thin space, \\,, "
               "from five digits on"),
        (line, "formula 2 writes the number 0{,}5: a record's formula writes English's decimal point, and each page "
               "shows its own sign")], found


def test_the_formulas_of_data_files_and_notebooks_are_checked_in_their_language():
    """Notes of the models page, the config keys and the notebooks' text have formulas too; the
    language rules read them with their file and line (check/language.py)."""
    from pathlib import Path

    from termbase.core.check import language

    report = check.Report(PROJECT)
    item = language.Line(Path(PROJECT.data_dir / "models.yml"), 7, "", source=r"by $0.1 \ln(65504)$ and $\frac{1}{$")
    language._formulas(item, ",", report)
    assert [p.what for p in report] == [
        "a formula writes the number 0.1: the decimal sign of this page is a comma, written {,}",
        "a formula writes the number 65504: the digits are grouped in threes with a thin space, \\,, from five "
        "digits on",
        "a formula does not parse: 1 '{' never closed: the '{' after `\\frac{1}`"], [p.what for p in report]
    lines = language._lines(BASE, {}, "da")
    sources = {item.path.name for item in lines if "$" in item.source}
    assert {"models.yml", "config_keys.yml"} <= sources and any(name.endswith(".py") for name in sources), sources
