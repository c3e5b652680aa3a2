"""The style guides as data the checker reads (termbase/core/check/styles.py): every shape the
language rules and the site assume, and every pattern as the rules compile it, is checked at
its place in the guide; a problem is one line, never a traceback or a rule that silently checks
nothing (or everything); and a broken guide stops the language rules of its own language only."""

import copy
import dataclasses
import re
import shutil

import pytest

from termbase.core import check, spelling
from termbase.core.check import styles, wording
from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT


def copy_data(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PROJECT.data_dir, data, ignore=shutil.ignore_patterns("terms", "attestations"))
    return data


def edited(tmp_path, lang: str, old: str, new: str):
    """(project, lines of the guide) for a copy of the data with `old` replaced by `new`, once,
    in the guide of `lang`."""
    data = copy_data(tmp_path)
    path = data / "style" / f"{lang}.yml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return dataclasses.replace(PROJECT, data_dir=data), path.read_text(encoding="utf-8").splitlines()


def style_problems(tmp_path, lang, old, new) -> tuple[list[str], set[str], list[str]]:
    project, lines = edited(tmp_path, lang, old, new)
    report = check.Report(project)
    usable = styles.check_styles(TermBase(project), report)
    return [str(p).replace(str(project.data_dir), "termbase/data") for p in report], usable, lines


def line_with(lines: list[str], text: str) -> int:
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_the_guides_as_they_are_pass():
    report = check.Report(PROJECT)
    assert styles.check_styles(TermBase(PROJECT), report) == set(PROJECT.languages) and not report, \
        [str(p) for p in report]


# (language, text in the guide, what replaces it, the line's text after the replacement that
# the problem is reported at, what the problem says)
BROKEN = {
    "a list pattern that does not compile": (
        "da", "'\\bdette site har ikke fundet\\b'", "'\\bdette site har ikke fundet\\b('", "har ikke fundet\\b('",
        "invalid regular expression '\\bdette site har ikke fundet\\b(': missing ), unterminated subpattern"),
    "a flag in a one-pattern list": (
        "es", "    proposal_said: ['\\beste (?:sitio|glosario)\\b.*(?<!\\bno )\\bpropone\\b', ",
        "    proposal_said: ['(?i)propone este sitio']\n    # [", "(?i)propone este sitio",
        "'(?i)propone este sitio': a flag such as (?i) inside a pattern the checker joins with others - remove it"),
    "a flag in a one-string pattern": (
        "es", "    proposal_said: ['\\beste (?:sitio|glosario)\\b.*(?<!\\bno )\\bpropone\\b', ",
        "    proposal_said: '(?i)propone este sitio'\n    # [", "(?i)propone este sitio",
        "a flag such as (?i) inside a pattern the checker joins"),
    "a flag in the eighth of a list": (
        "es", "'\\bes muy frecuente\\b'", "'(?i)\\bes muy frecuente\\b'", "(?i)\\bes muy frecuente",
        "'(?i)\\bes muy frecuente\\b': a flag such as (?i) inside a pattern the checker joins"),
    "a group name used twice in a list": (
        "es", "'\\bse oye\\b'", "'(?P<w>se) oye', '(?P<w>oye)'", "(?P<w>se) oye",
        "'(?P<w>oye)' does not go with the patterns before it: redefinition of group name 'w'"),
    "\\b in double quotes": (
        "da", "'\\bdette site har ikke fundet\\b'", '"\\bdette site har ikke fundet\\b"', '"\\bdette site har ikke',
        "holds a control character (in \"...\" YAML reads \\b as a backspace)"),
    "a pattern that matches the empty text": (
        "es", "      pattern: '[.,]»'", "      pattern: '[.,]?»?'", "pattern: '[.,]?»?'",
        "'[.,]?»?' matches '', a text that says nothing, so it matches everywhere - make the words it looks for required"),
    "a check without a pattern": (
        "es", "      pattern: '[.,]»'", "      patron: '[.,]»'", ("patron:", -1),
        "a rule's `check` has no `pattern`"),
    "a pattern that is not a text": (
        "es", "      pattern: '[.,]»'", "      pattern: ['[.,]»']", "pattern: ['[.,]»']",
        "`pattern` is ['[.,]»'], not a text"),
    "units written as one text": (
        "es", "units: [", "units: KiB\n    # [", "units: KiB", "`units` is 'KiB', not a list"),
    "a number word that is no number": (
        "da", "to: 2,", "to: two,", "to: two", "number word 'to' is 'two', not a whole number"),
    "number words written as a list": (
        "da", "number_words: {to: 2,", "number_words: [to, 2]\n    # {to: 2,", "number_words: [to, 2]",
        "`number_words` is not a mapping"),
    "an article that is not a list": (
        "da", "  neuter: [et]", "  neuter: et", "neuter: et", "the articles of 'neuter' are 'et', not a list"),
    "a gender that articles does not list": (
        "da", "  - term: token\n    gender: neuter", "  - term: token\n    gender: nueter", "gender: nueter", "gender 'nueter' is not one of `articles`"),
    "a rendering that is not a mapping": (
        "en", "renderings:\n", "renderings:\n  - just a text\n", "just a text",
        "a rendering is 'just a text', not a mapping"),
    "a form to avoid with two keys": (
        "en", "renderings:\n", "renderings:\n  - {concept: x, write: y, avoid: [{a: b, c: d}]}\n", "{a: b, c: d}",
        "a form to avoid is {'a': 'b', 'c': 'd'} - write one `phrase: replacement` per item"),
    "a form to avoid with no words": (
        "en", "renderings:\n", "renderings:\n  - {concept: x, write: y, avoid: ['…']}\n", "avoid: ['…']",
        "a form to avoid is '…', which has a part with no words"),
    "a dictionary that is a list": (
        "en", "dictionary: en_US", "dictionary: [en_US]", "dictionary: [en_US]",
        "`dictionary` is ['en_US'], not a hunspell dictionary's name - write it as hunspell names it, e.g. da_DK"),
    "a dictionary written with a hyphen": (
        "da", "dictionary: da_DK", "dictionary: da-DK", "dictionary: da-DK", "`dictionary` is 'da-DK', not a hunspell"),
    "abbreviations with a number": (
        "en", "abbreviations: [", "abbreviations: [1, ", "abbreviations: [1,", "`abbreviations` holds 1, not a text"),
    "a typography rule that is plain text": (
        "en", "typography:\n", "typography:\n  - Dashes are spaced.\n", "Dashes are spaced.",
        "a typography rule is plain text, which the style page does not show"),
    "a gender written as a list": (
        "da", "  - term: token\n    gender: neuter", "  - term: token\n    gender: [neuter]", "gender: [neuter]",
        "gender ['neuter'] is not one of `articles` (common, neuter)"),
    "a pattern that backtracks without end": (
        "es", "      pattern: '[.,]»'", "      pattern: '(?:\\w+\\s?)+»'", "(?:\\w+\\s?)+»",
        "'(?:\\w+\\s?)+»' backtracks without end on long words (a repetition inside a repetition)"),
    "a proposal pattern that any sentence has": (
        "es", "    proposal_said: ['", "    proposal_said: ['(?:este sitio )?\\w', '", "(?:este sitio )?\\w",
        "'(?:este sitio )?\\w' matches 'x', a text that says nothing"),
    "a misspelled key": (
        "en", "renderings:\n  - id:", "renderings:\n  - ids: x\n    id:", "ids: x",
        "unknown key 'ids' (did you mean 'id'?), which nothing reads"),
    "a second rule with units": (
        "da", "typography:\n", "typography:\n  - rule: Enheder.\n    units: [KiB]\n", "units: [\"%\"",
        "a second rule holds `units`, which the checker never reads - move it into the rule at line"),
    "a check without a message": (
        "es", "      pattern: '[.,]»'\n      message: signo de puntuación antes de las comillas de cierre\n",
        "      pattern: '[.,]»'\n", ("pattern: '[.,]»'", -1),
        "`message` is missing - write `message: <text>`"),
    "a rendering without write": (
        "en", "renderings:\n", "renderings:\n  - {concept: x, avoid: ['dot product thing']}\n", "concept: x, avoid",
        "`write` is missing - write `write: <text>`"),
    "a numbered backreference in a list": (
        "es", "'\\bse oye\\b'", "'\\b(\\w+) \\1\\b'", "(\\w+) \\1",
        "refers to a group by number, which counts the groups of the whole list"),
    "a position inside a joined pattern": (
        "es", "'\\bse oye\\b'", "'a)b'", "'a)b'", "invalid regular expression 'a)b': unbalanced parenthesis at position 1"),
    "a form to avoid written with Markdown": (
        "en", "renderings:\n", "renderings:\n  - {concept: x, write: y, avoid: ['`scale` argument']}\n", "`scale` argument",
        "the form '`scale` argument' holds Markdown and is matched on the text without it, so it never matches"),
    "a kept English term that is a text": (
        "da", "kept_english:\n", "kept_english:\n  - token\n", "  - token", "a kept English term is 'token', not a mapping"),
}


NOT_BLOCKING = {"abbreviations with a number", "a dictionary written with a hyphen", "a misspelled key",
                "a check without a message", "a rendering without write"}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_guide_is_one_line_at_its_place_and_stops_only_its_language(tmp_path, kind):
    lang, old, new, at, expected = BROKEN[kind]
    found, usable, lines = style_problems(tmp_path, lang, old, new)
    assert len(found) == 1, found
    text, offset = at if isinstance(at, tuple) else (at, 0)
    assert found[0].startswith(f"termbase/data/style/{lang}.yml:{line_with(lines, text) + offset}: "), found
    assert expected in found[0], found
    # What only the site shows, or what only turns a rule off, is reported and blocks nothing.
    assert usable == set(PROJECT.languages) - ({lang} if kind not in NOT_BLOCKING else set())


def test_the_rules_compile_the_patterns_as_the_check_does():
    """wording.joined is what usage_claims and proposal_said compile: a one-pattern list with a
    flag, which the check reports, is indeed an error there (and not in re alone)."""
    re.compile("(?i)propone este sitio")
    with pytest.raises(re.error, match="global flags"):
        wording.joined(["(?i)propone este sitio"])
    with pytest.raises(re.error, match="global flags"):
        wording.joined("(?i)propone este sitio")
    one = wording.joined(r"\bpropone este sitio\b")  # one text is one pattern, not its characters
    assert one.search("Propone este sitio «x».") and not one.search("p")


def test_a_guide_of_a_language_with_proposed_names_needs_both_patterns_and_blocks_nothing(tmp_path):
    found, usable, lines = style_problems(tmp_path, "da", "    proposal_said:", "    # proposal_said:")
    assert usable == set(PROJECT.languages)
    assert found == [f"termbase/data/style/da.yml:{line_with(lines, 'typography:')}: no typography rule has "
                     "`proposal_said`, so the pages of proposed da names go unchecked - add `proposal_said: ['...']` "
                     "to the rule on proposed names (see the es and da guides)"], found


def test_an_empty_guide_of_such_a_language_is_named(tmp_path):
    data = copy_data(tmp_path)
    (data / "style" / "es.yml").write_text("# guía en preparación\n", encoding="utf-8")
    project = dataclasses.replace(PROJECT, data_dir=data)
    report = check.Report(project)
    assert styles.check_styles(TermBase(project), report) == set(PROJECT.languages)
    assert [str(p).replace(str(data), "termbase/data") for p in report] == [
        "termbase/data/style/es.yml:1: the es style guide is missing or empty, so the pages of proposed names go "
        "unchecked - write the guide with `typography:` rules holding `usage_claims` and `proposal_said` "
        "(the keys are listed in termbase/core/check/styles.py (KEYS))"]


def test_a_second_rule_with_the_same_patterns_is_named(tmp_path):
    found, usable, lines = style_problems(tmp_path, "es", "typography:\n",
                                          "typography:\n  - rule: x\n    usage_claims: ['\\bse dice\\b']\n")
    assert usable == set(PROJECT.languages) - {"es"}
    # The rule added first is the one the checker reads: the guide's own rule is the second.
    assert found == [f"termbase/data/style/es.yml:{line_with(lines, 'usage_claims: [' + chr(39) + chr(92) + 'bes la')}: "
                     "a second rule holds `usage_claims`, which the checker never reads - move it into "
                     f"the rule at line {line_with(lines, '  - rule: x')}"], found


def test_the_other_languages_are_still_checked_when_one_guide_is_broken(tmp_path):
    """The whole check (no spelling) on the real pages with the Spanish guide broken and an
    English form to avoid that the English pages use: the English problems are reported, the
    Spanish guide's line is, and a note says which language's rules did not run."""
    project, _ = edited(tmp_path, "es", "      pattern: '[.,]»'", "      pattern: '[.,»'")
    en = project.data_dir / "style" / "en.yml"
    en.write_text(en.read_text(encoding="utf-8").replace(
        "renderings:\n", "renderings:\n  - {concept: test, write: SDPA, avoid: ['scaled dot-product attention']}\n", 1),
        encoding="utf-8")
    report = check.run(project, spelling=False)
    lines = [str(p).replace(str(project.data_dir), "termbase/data") for p in report]
    assert any(line.startswith("termbase/data/style/es.yml:") and "invalid regular expression" in line for line in lines)
    assert any(line.startswith("docs/") and ".en.md:" in line and "scaled dot-product attention" in line
               for line in lines), lines[:5]
    assert not any(".es.md:" in line for line in lines), [line for line in lines if ".es.md:" in line][:3]
    assert [note.replace(str(project.data_dir), "termbase/data") for note in report.notes] == [
        "the language rules of es did not run: mend termbase/data/style/es.yml (above)"]


def test_an_unreadable_guide_is_one_line_and_stops_its_language(tmp_path):
    data = copy_data(tmp_path)
    (data / "style" / "es.yml").write_text("typography: [unclosed\n", encoding="utf-8")
    project = dataclasses.replace(PROJECT, data_dir=data)
    report = check.Report(project)
    assert styles.check_styles(TermBase(project), report) == set(PROJECT.languages) - {"es"}
    found = [str(p).replace(str(data), "termbase/data") for p in report]
    assert len(found) == 1 and found[0].startswith("termbase/data/style/es.yml:2: invalid YAML"), found


# Values a contributor may leave where another shape belongs.
ODD = [None, "", "x", 0, [], [[]], {"x": "y"}, [{"x": 1}]]


def _paths(style: dict) -> list[tuple]:
    """Every top-level key, and every key of the first item of each list of mappings."""
    paths = [(key,) for key in style]
    for key, value in style.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            paths += [(key, 0, name) for name in value[0]]
    return paths


def _rules(base: TermBase, lang: str) -> None:
    """What the language rules do with a guide (check/language.py, wording.py), on one
    paragraph and one page: they run whenever check_styles calls the language usable."""
    from termbase.core.check import language

    style = base.style(lang)
    if style.get("dictionary"):
        spelling.available(style["dictionary"])
    language.avoided_forms(base, lang)
    for rule in style.get("typography") or []:
        if isinstance(rule, dict) and isinstance(rule.get("check"), dict) and rule["check"].get("pattern"):
            re.compile(rule["check"]["pattern"])
    page = PROJECT.root / "docs" / "x.md"
    paragraph = wording.Paragraph(page, "Este sitio propone 8 cabezas y ocho cabezas de 3 KiB.", [(0, 1)])
    for build in (wording.unit_spacing, wording.count_forms, wording.article_agreement):
        rule = build(style)
        if rule:
            rule(paragraph, check.Report(PROJECT))
    claimed = wording.usage_claims(style, {page})
    if claimed:
        claimed(paragraph, check.Report(PROJECT))
    unsaid = wording.proposal_unsaid(style, {page})
    if unsaid:
        unsaid([paragraph], check.Report(PROJECT))


def _site(base: TermBase, lang: str) -> None:
    """What the site does with a guide (site/style_page.py, core/claims.py): it runs only when
    the check reported nothing, since a reported problem stops the build."""
    from termbase.core import claims
    from termbase.site import style_page

    style_page.style_guide(base, lang)
    claims.cited_sentences("A b, e.g. c. {{ claim:x }}", base.style(lang).get("abbreviations") or ())


@pytest.mark.parametrize("lang", sorted(PROJECT.languages))
def test_any_odd_value_anywhere_is_reported_or_harmless(tmp_path, lang):
    """The module's promise, tried on every key of the real guide (and of the first item of
    each list) with every value of ODD: either the check reports a line in that guide, or every
    reader of the guide runs without an exception."""
    import yaml

    data = copy_data(tmp_path)
    path = data / "style" / f"{lang}.yml"
    original = yaml.safe_load(path.read_text(encoding="utf-8"))
    # Two items of each list are enough to try every shape, and keep the test quick.
    original = {key: value[:2] if isinstance(value, list) else value for key, value in original.items()}
    original["typography"] = [rule for rule in yaml.safe_load(path.read_text(encoding="utf-8"))["typography"]
                              if any(name in rule for name in ("check", "usage_claims", "units", "number_words"))][:6]
    project = dataclasses.replace(PROJECT, data_dir=data)
    tried = 0
    for where in _paths(original):
        for value in ODD:
            style = copy.deepcopy(original)
            target = style
            for part in where[:-1]:
                target = target[part]
            target[where[-1]] = value
            path.write_text(yaml.dump(style, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True),
                            encoding="utf-8")
            report = check.Report(project)
            base = TermBase(project)
            usable = styles.check_styles(base, report)
            readers = ([_rules] if lang in usable else []) + ([] if len(report) else [_site])
            for reader in readers:
                try:
                    reader(base, lang)
                except Exception as exc:  # noqa: BLE001 - the test is that nothing raises
                    pytest.fail(f"{where} = {value!r}: the check let it through and {reader.__name__} raised {exc!r}")
            tried += 1
    assert tried >= len(ODD) * 10, tried
