"""The style guides as data the checker reads (termbase/core/check/styles.py): a pattern that
does not compile, a rule's `check` without a pattern, a number word that is no number, or a
Spanish or Danish guide without the patterns for proposed names is one line at its place in
the guide, never a traceback or a rule that silently checks nothing."""

import dataclasses
import shutil

import pytest

from termbase.core import check
from termbase.core.check import styles
from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT


def style_problems(tmp_path, lang: str, old: str, new: str) -> tuple[list[str], bool, list[str]]:
    """check_styles' lines and verdict for a copy of the data with `old` replaced by `new` in
    the guide of `lang`, and the lines of the guide (to find where a problem must be)."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT.data_dir, data, ignore=shutil.ignore_patterns("terms", "attestations"))
    path = data / "style" / f"{lang}.yml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    project = dataclasses.replace(PROJECT, data_dir=data)
    report = check.Report(project)
    usable = styles.check_styles(TermBase(project), report)
    shown = [line.replace(str(data), "termbase/data") for line in map(str, report)]
    return shown, usable, path.read_text(encoding="utf-8").splitlines()


def line_with(lines: list[str], text: str) -> int:
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_the_guides_as_they_are_pass(tmp_path):
    report = check.Report(PROJECT)
    assert styles.check_styles(TermBase(PROJECT), report) and not report, [str(p) for p in report]


@pytest.mark.parametrize("lang, old, new, expected", [
    ("da", "'\\bdette site har ikke fundet\\b'", "'\\bdette site har ikke fundet\\b('",
     "invalid regular expression '\\\\bdette site har ikke fundet\\\\b(': missing ), unterminated subpattern"),
    ("es", "'\\bes muy frecuente\\b'", "'(?i)\\bes muy frecuente\\b'",
     "invalid regular expression '(?:\\\\bes la traducción habitual"),
])
def test_a_pattern_that_does_not_compile_is_named_at_its_line(tmp_path, lang, old, new, expected):
    found, usable, lines = style_problems(tmp_path, lang, old, new)
    assert not usable
    assert len(found) == 1 and expected in found[0], found
    assert found[0].startswith(f"termbase/data/style/{lang}.yml:{line_with(lines, new)}: "), found
    assert found[0].endswith(styles.FIX_PATTERN)


def test_a_check_without_a_pattern_and_a_number_word_that_is_no_number(tmp_path):
    found, usable, lines = style_problems(tmp_path, "es", "      pattern: '[.,]»'", "      patron: '[.,]»'")
    assert not usable and found == [
        f"termbase/data/style/es.yml:{line_with(lines, 'patron:') - 1}: a rule's `check` has no `pattern` - "
        "write `check: {pattern: '...', message: ..., fix: ...}`"], found
    found, usable, lines = style_problems(tmp_path / "2", "da", "to: 2", "to: two")
    assert not usable and found == [f"termbase/data/style/da.yml:{line_with(lines, 'to: two')}: number word 'to' is "
                                    "'two', not a whole number - write `to: <number>`"], found


def test_a_guide_of_a_language_with_proposed_names_needs_both_patterns(tmp_path):
    found, usable, lines = style_problems(tmp_path, "da", "    proposal_said:", "    said_proposal:")
    assert not usable
    assert found == [f"termbase/data/style/da.yml:{line_with(lines, 'typography:')}: no typography rule has "
                     "`proposal_said`, so the pages of proposed da names go unchecked - add `proposal_said: ['...']` "
                     "to the rule on proposed names (see the es and da guides)"], found
