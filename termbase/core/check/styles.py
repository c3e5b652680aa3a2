"""Rules for the style guides (termbase/data/style/<lang>.yml) as data: every key that the
language rules (language.py, wording.py) and the site (site/style_page.py, the claims page)
read is a key they know (`KEYS`) with the shape they assume, every regular expression compiles
as the rules compile it and neither matches text that says nothing nor backtracks without end,
and a language whose preferred terms may be proposed has the patterns for how its pages say so.

Before this, a pattern with a typo stopped `check` with a Python traceback, and a misspelled
key, a string where a list belongs, a "\\b" in double quotes (a backspace to YAML) or a pattern
that matches anything made a rule check nothing, or everything, without a word. A guide with a
problem that the rules would trip on is left out of the language rules of its own language only
(`check_styles` returns the languages whose guides are usable); a problem in what only the site
shows (a title, a note) or a missing proposal pattern blocks nothing."""

from __future__ import annotations

import difflib
import re
import time

from termbase.core import spelling, terminology
from termbase.core.check import wording, yamlfile
from termbase.core.model import TermBase

# The keys each level of a guide may hold; what the checker and the site read, nothing else.
KEYS = {
    "guide": ("title", "dictionary", "abbreviations", "intro", "register", "articles", "kept_english",
              "renderings", "typography", "examples", "translation"),
    "kept_english": ("term", "forms", "gender", "note"),
    "renderings": ("id", "concept", "write", "avoid", "note"),
    "typography": ("rule", "check", "units", "number_words", "usage_claims", "proposal_said", "fix"),
    "check": ("pattern", "message", "fix"),
}
SITE_ONLY = ("title", "intro", "register", "examples", "translation", "abbreviations", "note", "concept", "id")
FIX_PATTERN = "write a Python regular expression (the `re` module) in single quotes '...'"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Texts that say nothing: a pattern that matches one would match (or pass) every line.
NOTHING = ("", " ", "x", "a b", "Ab cd ef.")
SCHEMA = "the keys are listed in termbase/core/check/styles.py (KEYS)"
MARKDOWN = re.compile(r"[`*«»\"“”]")
DICTIONARY = re.compile(r"[a-z]{2,3}(?:_[A-Z]{2})?")


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


def backtracks(compiled: re.Pattern) -> bool:
    """True when searching grows exponentially with the length of a word (a repetition inside
    a repetition), measured on texts far too short to hang, 10 and 20 characters long: such a
    pattern takes a thousand times longer on the longer ones, any other about twice. Measured
    twice, so that a pause of the machine is not taken for it."""
    def worst(n: int, stop: float = float("inf")) -> float:
        longest = 0.0
        for text in ("a" * n + "!", "a " * n + "!", "1" * n + "!", "1 " * n + "!", "Aa " * n, "a-" * n + "!"):
            start = time.perf_counter()
            compiled.search(text)
            longest = max(longest, time.perf_counter() - start)
            if longest > stop:  # enough to tell: the other texts would only take longer to say so
                break
        return longest
    for _ in range(2):
        small = worst(10)
        bound = max(2e-3, 100 * max(small, 2e-6))
        if worst(20, stop=bound) <= bound:
            return False
    return True


class _Guide:
    def __init__(self, path, report):
        self.path, self.report, self.blocking = path, report, False
        before = len(report)
        self.style, self.lines = (yamlfile.load(path, report) if path.is_file() else (None, {}))
        self.unreadable = self.style is None and len(report) > before  # not UTF-8, not YAML

    def add(self, key: tuple, what: str, fix: str, *, blocks: bool = True) -> None:
        """Report a problem; `blocks`: the language rules would trip on it (what only the site
        shows, SITE_ONLY, never blocks: the report already stops the build)."""
        self.report.add(self.path, yamlfile.line_of(self.lines, key), what, fix)
        site_only = any(part in SITE_ONLY for part in key if isinstance(part, str))
        self.blocking = self.blocking or (blocks and not site_only)

    def check(self, lang: str) -> None:
        style = self.style
        if style is None:
            self.blocking = self.unreadable
            if lang in terminology.ATTESTED and not self.unreadable:  # its proposal rules are needed
                self.report.add(self.path, 1, f"the {lang} style guide is missing or empty, so the pages of "
                                "proposed names go unchecked", "write the guide with `typography:` rules "
                                f"holding `usage_claims` and `proposal_said` ({SCHEMA})")
            return
        if not isinstance(style, dict):
            return self.add((), "the style guide is not a mapping", f"write it as keys: `title:`, `typography:`, ... "
                            f"({SCHEMA})")
        self._known((), style, "guide")
        for key in ("title", "intro", "register", "examples", "translation"):
            self._text((key,), style.get(key))
        dictionary = style.get("dictionary")
        # A hunspell name (a language is configuration: any such name, installed or not, will do;
        # one that is not installed is a note of the spelling rule, not a problem).
        if dictionary is not None and not (isinstance(dictionary, str) and DICTIONARY.fullmatch(dictionary)):
            self.add(("dictionary",), f"`dictionary` is {dictionary!r}, not a hunspell dictionary's name",
                     f"write it as hunspell names it, e.g. {', '.join(sorted(spelling.PACKAGES))}",
                     blocks=not isinstance(dictionary, str))
        self._strings(("abbreviations",), style.get("abbreviations"))
        genders = self._articles(style.get("articles"))
        self._kept_english(style.get("kept_english"), genders)
        self._renderings(style.get("renderings"))
        self._typography(lang, style.get("typography"))

    # -- shapes -----------------------------------------------------------------------------
    def _known(self, key: tuple, mapping: dict, level: str) -> None:
        for name in mapping:
            if name not in KEYS[level]:
                near = difflib.get_close_matches(str(name), KEYS[level], n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                self.add(key + (name,), f"unknown key '{name}'{hint}, which nothing reads",
                         f"use one of: {', '.join(KEYS[level])}", blocks=False)

    def _text(self, key: tuple, value, *, required: bool = False) -> None:
        if value is None and not required:
            return
        if not isinstance(value, str) or not value.strip():
            what = "is missing" if value is None else f"is {value!r}, not a text"
            self.add(key, f"`{key[-1]}` {what}", f"write `{key[-1]}: <text>`", blocks=False)

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

    def _articles(self, articles) -> set | None:
        if articles is None:
            return set()
        if not isinstance(articles, dict):
            self.add(("articles",), "`articles` is not a mapping of a gender to its articles",
                     "write `articles: {masculine: [el, un], feminine: [la, una]}`")
            return None  # the genders of the terms are not checked against it: one line, not one per term
        for gender, listed in articles.items():
            if not isinstance(gender, str):
                self.add(("articles", gender), f"gender {gender!r} is not a word", "name each gender by a word")
            elif not isinstance(listed, list) or not listed or not all(isinstance(a, str) and a for a in listed):
                self.add(("articles", gender), f"the articles of '{gender}' are {listed!r}, not a list of words",
                         f"write `{gender}: [article, ...]`")
        return {gender for gender in articles if isinstance(gender, str)}

    def _mappings(self, level: str, items, what: str, example: str):
        """(key, item) of each item of the list `level` that is a mapping of known keys; the
        others are reported."""
        for index, item in enumerate(self._list((level,), items)):
            key = (level, index)
            if not isinstance(item, dict):
                self.add(key, f"{what} is {item!r}, not a mapping", f"write `- {example}`")
                continue
            self._known(key, item, level)
            yield key, item

    def _kept_english(self, items, genders: set | None) -> None:
        for key, item in self._mappings("kept_english", items, "a kept English term", "{term: ..., forms: [...]}"):
            self._text(key + ("term",), item.get("term"), required=True)
            self._text(key + ("note",), item.get("note"))
            self._strings(key + ("forms",), item.get("forms"))
            gender = item.get("gender")
            if gender is not None and genders is not None and (not isinstance(gender, str) or gender not in genders):
                listed = ", ".join(sorted(genders)) or "none: the guide has no `articles`"
                self.add(key + ("gender",), f"gender {gender!r} is not one of `articles` ({listed})",
                         "write the one gender, of those `articles` lists, that the site uses for it")

    def _renderings(self, items) -> None:
        for key, item in self._mappings("renderings", items, "a rendering", "{concept: ..., write: ..., avoid: [...]}"):
            for name in ("concept", "note", "id"):
                self._text(key + (name,), item.get(name))
            forms = self._list(key + ("avoid",), item.get("avoid"))
            own = [isinstance(form, dict) or (isinstance(form, str) and ": " in form) for form in forms]
            self._text(key + ("write",), item.get("write"), required=not all(own))
            for number, form in enumerate(forms):
                self._form(key + ("avoid", number), form)

    def _form(self, where: tuple, form) -> None:
        if isinstance(form, dict):
            if len(form) != 1 or not all(isinstance(x, str) and x.strip() for pair in form.items() for x in pair):
                return self.add(where, f"a form to avoid is {form!r}", "write one `phrase: replacement` per item")
            phrase = next(iter(form))
        elif isinstance(form, str):
            phrase = form.split(": ", 1)[0]
        else:
            return self.add(where, f"a form to avoid is {form!r}, not a phrase", "write the phrase as a quoted text")
        gapped = "…" in phrase  # wording.gapped: parts between "…", alternatives within by "|"
        parts = [part for part in phrase.split("…") if part.strip()] if gapped else [phrase]
        alternatives = [alt for part in parts for alt in (part.split("|") if gapped else [part]) if alt.strip()]
        if (gapped and len(parts) < 2) or any(not re.search(r"\w", alt) for alt in alternatives) or \
                (gapped and any(not any(a.strip() for a in part.split("|")) for part in parts)) or not alternatives:
            self.add(where, f"a form to avoid is {form!r}, which has a part with no words", "write the words to avoid")
        elif not gapped and MARKDOWN.search(phrase):
            self.add(where, f"the form {phrase!r} holds Markdown and is matched on the text without it, so it never "
                     "matches", "drop the Markdown, or write a gapped form (`a … b`), which is matched as written")

    def _typography(self, lang: str, rules) -> None:
        holders = {"usage_claims": [], "proposal_said": [], "units": [], "number_words": []}
        for index, rule in enumerate(self._list(("typography",), rules)):
            key = ("typography", index)
            if not isinstance(rule, dict):
                self.add(key, "a typography rule is plain text, which the style page does not show",
                         "write `- rule: \"...\"`")
                continue
            self._known(key, rule, "typography")
            self._text(key + ("rule",), rule.get("rule"), required=True)
            self._text(key + ("fix",), rule.get("fix"))
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
                    if rule[name]:
                        holders[name].append(index)
                    if name in ("usage_claims", "proposal_said"):
                        self._patterns(key + (name,), rule[name])
        for name, indexes in holders.items():
            for index in indexes[1:]:  # the rules read only the first (wording._rule)
                self.add(("typography", index, name), f"a second rule holds `{name}`, which the checker never reads",
                         f"move it into the rule at line {self.lines.get(('typography', indexes[0]), 1)}")
            if lang in terminology.ATTESTED and name in ("usage_claims", "proposal_said") and not indexes:
                self.add(("typography",), f"no typography rule has `{name}`, so the pages of proposed {lang} names go "
                         "unchecked", f"add `{name}: ['...']` to the rule on proposed names (see the es and da guides)",
                         blocks=False)

    def _check(self, key: tuple, check) -> None:
        if isinstance(check, str):
            return self.add(key, "`check` is a text, not a mapping", "write `check: {pattern: '...', message: ..., fix: ...}`")
        if not isinstance(check, dict) or "pattern" not in check:
            return self.add(key, "a rule's `check` has no `pattern`", "write `check: {pattern: '...', message: ..., fix: ...}`")
        self._known(key, check, "check")
        for name in ("message", "fix"):
            self._text(key + (name,), check.get(name), required=True)
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
            elif len(items) > 1 and re.search(r"\\[1-9]", pattern):
                self.add(spot, f"{quoted(pattern)} refers to a group by number, which counts the groups of the whole "
                         "list once the checker joins it", "use a named group: (?P<w>...)(?P=w), unique in the list")
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
            compiled = re.compile(pattern, flags)  # alone first: positions are the guide's own
            if wrapped:
                compiled = re.compile(f"(?:{pattern})", flags)
        except re.error as exc:
            if wrapped and "global flags" in exc.msg:
                self.add(key, f"{quoted(pattern)}: a flag such as (?i) inside a pattern the checker joins with others",
                         "remove it (the patterns are matched case-blind already), or scope it: (?s:...)")
            elif wrapped and exc.pattern != pattern:
                self.add(key, f"{quoted(pattern)} cannot stand inside (?:...), as the checker joins it: {exc.msg}",
                         "balance its parentheses")
            else:
                self.add(key, f"invalid regular expression {quoted(pattern)}: {exc.msg} at position {exc.pos}",
                         FIX_PATTERN)
            return False
        except (OverflowError, RecursionError):
            self.add(key, f"{quoted(pattern)} has too large a repetition or is nested too deeply", FIX_PATTERN)
            return False
        said = next((text for text in NOTHING if compiled.search(text)), None)
        if said is not None:
            self.add(key, f"{quoted(pattern)} matches {said!r}, a text that says nothing, so it matches everywhere",
                     "make the words it looks for required")
            return False
        if backtracks(compiled):
            self.add(key, f"{quoted(pattern)} backtracks without end on long words (a repetition inside a repetition)",
                     "make the inner part fixed, e.g. (?:\\w+\\s)*\\w+ rather than (?:\\w+\\s?)+")
            return False
        return True
