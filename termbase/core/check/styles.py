"""Rules for the style guides (termbase/data/style/<lang>.yml) as data: every key that the
language rules (language.py, wording.py) and the site (site/style_page.py, the claims page)
read has the shape they assume, every regular expression compiles as the rules compile it, and
a language whose preferred terms may be proposed has the patterns for how its pages say so.

Before this, a pattern with a typo stopped `check` with a Python traceback, and a string where
a list belongs, a "\\b" in double quotes (a backspace to YAML) or a pattern that matches the
empty text made a rule check nothing, or everything, without a word. A guide with a problem
here is left out of the language rules of its own language only (`check_styles` returns the
languages whose guides are usable); a missing proposal pattern blocks nothing."""

from __future__ import annotations

import re

from termbase.core import terminology
from termbase.core.check import wording, yamlfile
from termbase.core.model import TermBase

FIX_PATTERN = "write a Python regular expression (the `re` module) in single quotes '...'"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SHAPES = "see termbase/data/style/en.yml for the keys and their shapes"


def check_styles(base: TermBase, report) -> set[str]:
    """The languages whose style guides the language rules can use (the others' problems are
    reported here, at their lines)."""
    usable = set()
    for lang in base.languages:
        guide = _Guide(base.project.data_dir / "style" / f"{lang}.yml", report)
        guide.check(lang)
        if not guide.blocking:
            usable.add(lang)
    return usable


def quoted(pattern: str) -> str:
    """A pattern as the guide writes it: in YAML single quotes."""
    return "'" + pattern.replace("'", "''") + "'"


class _Guide:
    def __init__(self, path, report):
        self.path, self.report, self.blocking = path, report, False
        before = len(report)
        self.style, self.lines = (yamlfile.load(path, report) if path.is_file() else (None, {}))
        self.unreadable = self.style is None and len(report) > before  # not UTF-8, not YAML

    def add(self, key: tuple, what: str, fix: str, *, blocks: bool = True) -> None:
        self.report.add(self.path, yamlfile.line_of(self.lines, key), what, fix)
        self.blocking = self.blocking or blocks

    def check(self, lang: str) -> None:
        style = self.style
        if style is None:
            if lang in terminology.ATTESTED:  # missing, empty or unreadable: its rules are needed
                self.report.add(self.path, 1, f"the {lang} style guide is missing or empty, so the pages of "
                                "proposed names go unchecked", "write the guide with `typography:` rules "
                                f"holding `usage_claims` and `proposal_said` ({SHAPES})")
            self.blocking = self.unreadable
            return
        if not isinstance(style, dict):
            return self.add((), "the style guide is not a mapping", f"write it as keys: `title:`, `typography:`, ... "
                            f"({SHAPES})")
        for key in ("dictionary", "title"):
            if key in style and not isinstance(style[key], str):
                self.add((key,), f"`{key}` is {style[key]!r}, not a string", f"write `{key}: <text>`")
        self._strings(("abbreviations",), style.get("abbreviations"))
        self._articles(style.get("articles"))
        self._kept_english(style.get("kept_english"), style.get("articles"))
        self._renderings(style.get("renderings"))
        self._typography(lang, style.get("typography"))

    # -- shapes -----------------------------------------------------------------------------
    def _list(self, key: tuple, value) -> list:
        """`value` if it is a list (or absent: []), else reported: a string where a list belongs
        would be read one character at a time."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(key, f"`{key[-1]}` is {value!r}, not a list", f"write `{key[-1]}: [...]`, one item each")
            return []
        return value

    def _strings(self, key: tuple, value) -> None:
        for index, item in enumerate(self._list(key, value)):
            if not isinstance(item, str) or not item.strip():
                self.add(key + (index,), f"`{key[-1]}` holds {item!r}, not a text", "write each item as a quoted text")

    def _articles(self, articles) -> None:
        if articles is None:
            return
        if not isinstance(articles, dict):
            return self.add(("articles",), "`articles` is not a mapping of a gender to its articles",
                            "write `articles: {masculine: [el, un], feminine: [la, una]}`")
        for gender, listed in articles.items():
            if not isinstance(listed, list) or not listed or not all(isinstance(a, str) and a for a in listed):
                self.add(("articles", gender), f"the articles of '{gender}' are {listed!r}, not a list of words",
                         f"write `{gender}: [article, ...]`")

    def _kept_english(self, items, articles) -> None:
        genders = set(articles) if isinstance(articles, dict) else set()
        for index, item in enumerate(self._list(("kept_english",), items)):
            key = ("kept_english", index)
            if not isinstance(item, dict):
                self.add(key, f"a kept English term is {item!r}, not a mapping", "write `- {term: ..., forms: [...]}`")
                continue
            self._strings(key + ("forms",), item.get("forms"))
            gender = item.get("gender")
            if gender is not None and gender not in genders:
                self.add(key + ("gender",), f"gender '{gender}' is not one of `articles` ({', '.join(sorted(genders))})",
                         "use a gender that `articles` lists, or add its articles there")

    def _renderings(self, items) -> None:
        for index, item in enumerate(self._list(("renderings",), items)):
            key = ("renderings", index)
            if not isinstance(item, dict):
                self.add(key, f"a rendering is {item!r}, not a mapping", "write `- {concept: ..., write: ..., avoid: [...]}`")
                continue
            for number, form in enumerate(self._list(key + ("avoid",), item.get("avoid"))):
                where = key + ("avoid", number)
                if isinstance(form, dict):
                    if len(form) != 1 or not all(isinstance(x, str) for pair in form.items() for x in pair):
                        self.add(where, f"a form to avoid is {form!r}", "write one `phrase: replacement` per item")
                    phrase = next(iter(form), "")
                else:
                    phrase = str(form).split(": ", 1)[0] if isinstance(form, str) else ""
                if not str(phrase).strip(" …|"):
                    self.add(where, f"a form to avoid is {form!r}, which has no words", "write the phrase to avoid")

    def _typography(self, lang: str, rules) -> None:
        holders = {"usage_claims": [], "proposal_said": []}
        for index, rule in enumerate(self._list(("typography",), rules)):
            key = ("typography", index)
            if not isinstance(rule, dict):
                self.add(key, "a typography rule is plain text, which the style page does not show",
                         "write `- rule: \"...\"`")
                continue
            if "check" in rule:
                self._check(key + ("check",), rule["check"])
            self._strings(key + ("units",), rule.get("units"))
            words = rule.get("number_words")
            if words is not None and not isinstance(words, dict):
                self.add(key + ("number_words",), "`number_words` is not a mapping", "write `{two: 2, three: 3}`")
            for word, value in (words.items() if isinstance(words, dict) else ()):
                if not isinstance(value, int) or isinstance(value, bool):
                    self.add(key + ("number_words", word), f"number word '{word}' is {value!r}, not a whole number",
                             f"write `{word}: <number>`")
            for name in holders:
                if rule.get(name) is not None:
                    holders[name].append(index)
                    self._patterns(key + (name,), rule[name])
        for name, indexes in holders.items():
            for index in indexes[1:]:  # the rules read the first rule that has the key
                self.add(("typography", index, name), f"a second rule holds `{name}`, which the checker never reads",
                         f"move these patterns into the rule at line {self.lines.get(('typography', indexes[0]), 1)}")
            if lang in terminology.ATTESTED and not indexes:
                self.add(("typography",), f"no typography rule has `{name}`, so the pages of proposed {lang} names go "
                         "unchecked", f"add `{name}: ['...']` to the rule on proposed names (see the es and da guides)",
                         blocks=False)

    def _check(self, key: tuple, check) -> None:
        if not isinstance(check, dict) or "pattern" not in check:
            return self.add(key, "a rule's `check` has no `pattern`", "write `check: {pattern: '...', message: ..., fix: ...}`")
        pattern = check["pattern"]
        if not isinstance(pattern, str):
            return self.add(key + ("pattern",), f"`pattern` is {pattern!r}, not a text", FIX_PATTERN)
        self._one(key + ("pattern",), pattern, flags=0)

    # -- patterns ---------------------------------------------------------------------------
    def _patterns(self, key: tuple, value) -> None:
        """`usage_claims` or `proposal_said`: a pattern or a list of them, which the rules join
        into one case-blind regex (wording.joined): each is checked alone, then the whole."""
        items = value if isinstance(value, list) else [value]
        spots = [key + (index,) for index in range(len(items))] if isinstance(value, list) else [key]
        if not items:
            return self.add(key, f"`{key[-1]}` is empty", "write at least one pattern")
        fine = True
        for spot, pattern in zip(spots, items):
            if not isinstance(pattern, str):
                self.add(spot, f"`{key[-1]}` holds {pattern!r}, not a pattern", "write each pattern as a quoted text")
                fine = False
            else:
                fine = self._one(spot, pattern, flags=re.I, wrapped=True) and fine
        if not fine:
            return
        for count in range(1, len(items) + 1):  # the first pattern that breaks the whole
            try:
                wording.joined(items[:count])
            except re.error as exc:
                return self.add(spots[count - 1], f"{quoted(items[count - 1])} does not go with the patterns before it: "
                                f"{exc.msg}", "give each group a name of its own, or none")

    def _one(self, key: tuple, pattern: str, *, flags: int, wrapped: bool = False) -> bool:
        if CONTROL.search(pattern):
            self.add(key, f"{quoted(pattern)} holds a control character (in \"...\" YAML reads \\b as a backspace)",
                     FIX_PATTERN)
            return False
        try:
            compiled = re.compile(f"(?:{pattern})" if wrapped else pattern, flags)
        except re.error as exc:
            if wrapped and "global flags" in exc.msg:
                self.add(key, f"{quoted(pattern)}: a flag such as (?i) inside a pattern the checker joins",
                         "remove it: these patterns are matched case-blind already")
            else:
                self.add(key, f"invalid regular expression {quoted(pattern)}: {exc.msg} at position {exc.pos}",
                         FIX_PATTERN)
            return False
        if compiled.search(""):
            self.add(key, f"{quoted(pattern)} matches the empty text, so it matches everywhere",
                     "make a part of it required")
            return False
        return True
