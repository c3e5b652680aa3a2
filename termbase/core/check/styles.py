"""Rules for the style guides (termbase/data/style/<lang>.yml) as data the other rules read:
every regular expression they hold compiles, and a language whose preferred terms may be
proposed has the patterns that check how its pages say so (core/check/wording.py).

Without this, a pattern with a typo stopped `check` with a Python traceback, and a guide
without `proposal_said` let a page that never says it proposes its name pass in silence."""

from __future__ import annotations

import re

from termbase.core import terminology
from termbase.core.check import yamlfile
from termbase.core.model import TermBase

FIX_PATTERN = "write a Python regular expression (the `re` module); inside '...' a backslash is written once"


def check_styles(base: TermBase, report) -> bool:
    """The style guides' shape and patterns; False when one cannot be used by the language
    rules (not a mapping, or a pattern that does not compile)."""
    usable = True
    for lang in base.languages:
        path = base.project.data_dir / "style" / f"{lang}.yml"
        if not path.is_file():
            continue
        before = len(report)
        style, lines = yamlfile.load(path, report)
        if style is not None and not isinstance(style, dict):
            report.add(path, 1, "the style guide is not a mapping", "see docs of termbase/data/style/")
        elif isinstance(style, dict):
            _typography(base, lang, path, style, lines, report)
        usable = usable and len(report) == before
    return usable


def _typography(base: TermBase, lang: str, path, style: dict, lines: dict, report) -> None:
    rules = style.get("typography") or []
    if not isinstance(rules, list):
        report.add(path, yamlfile.line_of(lines, ("typography",)), "'typography' is not a list of rules",
                   "write each rule as `- rule: ...`, with `check:` where the checker enforces it")
        return
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue  # a rule that is only text: the style page shows it, nothing checks it
        check = rule.get("check")
        if check is not None:
            if not isinstance(check, dict) or not isinstance(check.get("pattern"), str):
                report.add(path, yamlfile.line_of(lines, ("typography", index, "check")),
                           "a rule's `check` has no `pattern`",
                           "write `check: {pattern: '...', message: ..., fix: ...}`")
            else:
                _compiles(path, lines, ("typography", index, "check", "pattern"), check["pattern"], report)
        for key in ("usage_claims", "proposal_said"):
            value = rule.get(key)
            if value is None:
                continue
            patterns = value if isinstance(value, list) else [value]
            where = [("typography", index, key) + ((at,) if isinstance(value, list) else ())
                     for at in range(len(patterns))]
            fine = all([_compiles(path, lines, spot, pattern, report) if isinstance(pattern, str) else
                        _not_a_pattern(path, lines, spot, key, pattern, report)
                        for spot, pattern in zip(where, patterns)])
            if fine and len(patterns) > 1:
                # The rules join them into one pattern: a flag inside one, valid alone, breaks the whole.
                _compiles(path, lines, ("typography", index, key), "|".join(f"(?:{p})" for p in patterns), report)
        words = rule.get("number_words")
        for word, value in (words.items() if isinstance(words, dict) else ()):
            if not isinstance(value, int) or isinstance(value, bool):
                report.add(path, yamlfile.line_of(lines, ("typography", index, "number_words", word)),
                           f"number word '{word}' is {value!r}, not a whole number", f"write `{word}: <number>`")
    if lang in terminology.ATTESTED:
        for key in ("usage_claims", "proposal_said"):
            if not any(isinstance(rule, dict) and rule.get(key) for rule in rules):
                report.add(path, yamlfile.line_of(lines, ("typography",)),
                           f"no typography rule has `{key}`, so the pages of proposed {lang} names go unchecked",
                           f"add `{key}: ['...']` to the rule on proposed names (see the es and da guides)")


def _compiles(path, lines: dict, where: tuple, pattern: str, report) -> bool:
    try:
        re.compile(pattern)
        return True
    except re.error as exc:
        report.add(path, yamlfile.line_of(lines, where),
                   f"invalid regular expression {pattern!r}: {exc.msg} at position {exc.pos}", FIX_PATTERN)
        return False


def _not_a_pattern(path, lines: dict, where: tuple, key: str, value, report) -> bool:
    report.add(path, yamlfile.line_of(lines, where), f"`{key}` holds {value!r}, not a pattern",
               "write each pattern as a quoted string")
    return False
