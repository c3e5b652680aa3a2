"""Wording rules that a regular expression on one line cannot state, each driven by data in the
language's style guide (termbase/data/style/<lang>.yml):

- `units` (in a typography rule): a number and its unit are joined by a no-break space
  (U+00A0), so that "320 KiB" never breaks at the end of a line;
- `number_words` (in a typography rule): one sentence never writes the same count once in
  digits and once in words ("8 cabezas … ocho cabezas");
- `articles` and `kept_english[].gender`: an article right before a kept English term agrees
  with the gender the guide gives it ("en attention sink", not "et attention sink");
- forms to avoid with a gap, written with "…" in the guide ("give … til"): the words in order,
  at most GAP words apart, within one sentence;
- `usage_claims` (in a typography rule): on the page of an entry whose preferred name in the
  language is `proposed: true` (no published text attests it), no sentence says what the
  language's writers or practitioners call it ("Danske fagfolk bruger …"): the term base says
  the site found no such use;
- `proposal_said` (in the same rule): such a page says that the site proposes the name, in a
  sentence the pattern matches ("Este sitio … propone", "Dette site … foreslår").

The rules read a paragraph at a time (a sentence often spans lines in the sources) and report
the line where the offending words are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GAP = 6  # words allowed between the parts of a gapped form to avoid
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[^\w\s]*[A-ZÁÉÍÓÚÑÆØÅ¿¡])")
NBSP = "\u00a0"
# A form quoted as a word («la softmax»): at most four words between quotes. A longer quote
# is an example sentence, and its articles are checked like the rest.
QUOTED = re.compile(r"«(?:[^»\s]+\s?){1,4}»|“(?:[^”\s]+\s?){1,4}”|\"(?:[^\"\s]+\s?){1,4}\"")


@dataclass
class Paragraph:
    """Consecutive lines of one file, joined by spaces, and where each line starts."""

    path: object
    text: str
    starts: list[tuple[int, int]]  # (offset in text, line number)

    def line_at(self, offset: int) -> int:
        line = self.starts[0][1]
        for start, number in self.starts:
            if start > offset:
                break
            line = number
        return line

    def sentences(self):
        """(offset, sentence) of each sentence of the paragraph."""
        start = 0
        for match in SENTENCE_END.finditer(self.text):
            yield start, self.text[start:match.start()]
            start = match.end()
        yield start, self.text[start:]


def paragraphs(lines, attribute: str = "text") -> list[Paragraph]:
    """Group checked lines (objects with path, line and text) into paragraphs."""
    out: list[Paragraph] = []
    for item in lines:
        text = getattr(item, attribute).rstrip()
        last = out[-1] if out else None
        if last and last.path == item.path and last.starts[-1][1] == item.line - 1 and text.strip():
            last.starts.append((len(last.text) + 1, item.line))
            last.text += " " + text
        elif text.strip():
            out.append(Paragraph(item.path, text, [(0, item.line)]))
    return out


def _rule(style: dict, key: str) -> dict | None:
    """The first typography rule whose `key` is not empty: the one the rules read
    (check/styles.py names any later one)."""
    return next((rule for rule in style.get("typography") or [] if isinstance(rule, dict) and rule.get(key)), None)


def _typography(style: dict, key: str):
    return (_rule(style, key) or {}).get(key)


def unit_spacing(style: dict):
    """A checker of "320 KiB" with an ordinary space or none, from the style guide's units."""
    units = _typography(style, "units")
    if not units:
        return None
    pattern = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)([ ]?)(" + "|".join(
        re.escape(str(unit)) for unit in sorted(units, key=len, reverse=True)) + r")(?![\w])")

    def check(paragraph: Paragraph, report) -> None:
        for match in pattern.finditer(paragraph.text):
            number, space, unit = match.groups()
            shown = "no space" if not space else "an ordinary space"
            report.add(paragraph.path, paragraph.line_at(match.start()),
                       f'"{match.group()}" has {shown} between the number and its unit',
                       f"write {number}\u00a0{unit}, with a no-break space (U+00A0) (style guide: typography)")
    return check


def count_forms(style: dict):
    """A checker of one count written both as digits and as a word in one sentence: the same
    number before the same noun ("8 cabezas … ocho cabezas", "8 nøgle/værdi-hoveder … otte
    forespørgselshoveder"). Numbers that label or measure ("potencia de 2", "bredden 4") are
    not counts of a noun and are left alone."""
    words = _typography(style, "number_words")
    if not words:
        return None
    values = {str(word).lower(): int(value) for word, value in words.items()}
    noun = r"\s+\*?([a-zæøåáéíóúñü][\w/-]*)"
    word = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(values, key=len, reverse=True)))
                      + r")" + noun, re.I)
    # Digits: a whole number, not part of a name ("GQA-8"), a decimal or a product ("8 × 64").
    digits = re.compile(r"(?<![\w.,×/=+^-])(?<![.,×/=+^-] )(\d{1,3})" + noun)

    def same_noun(one: str, other: str) -> bool:
        one, other = one.lower(), other.lower()
        return one[:4] == other[:4] or (len(one) > 5 and len(other) > 5 and one[-5:] == other[-5:])

    def check(paragraph: Paragraph, report) -> None:
        for offset, sentence in paragraph.sentences():
            spelled = [(values[m.group(1).lower()], m) for m in word.finditer(sentence)]
            for match in digits.finditer(sentence):
                value = int(match.group(1))
                for other_value, other in spelled:
                    if other_value == value and same_noun(match.group(2), other.group(2)):
                        first = min(match.start(), other.start())
                        report.add(paragraph.path, paragraph.line_at(offset + first),
                                   f'the count {value} is written both as "{match.group(1)}" and as '
                                   f'"{other.group(1)}" in one sentence',
                                   "write every count of the sentence the same way (style guide: typography)")
                        break
    return check


def joined(patterns) -> re.Pattern:
    """The one case-blind regex of a rule's patterns (a string, or a list of them), as the
    rules below match them; check/styles.py compiles the guides' patterns with it too."""
    patterns = patterns if isinstance(patterns, list) else [patterns]
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns), re.I)


def _proposal_fix(rule: dict) -> str:
    return str(rule.get("fix") or "say that the site found no published use and proposes the name")


def usage_claims(style: dict, proposed: set):
    """A checker of a sentence that claims usage in the language ("På dansk bruger man …") on
    the page of an entry whose preferred name the site proposes (`proposed`: those pages'
    paths). The rule's `usage_claims` are regular expressions, matched case-insensitively."""
    rule = _rule(style, "usage_claims")
    if not rule or not proposed:
        return None
    pattern = joined(rule["usage_claims"])
    fix = _proposal_fix(rule)

    def check(paragraph: Paragraph, report) -> None:
        if paragraph.path not in proposed:
            return
        for match in pattern.finditer(paragraph.text):
            report.add(paragraph.path, paragraph.line_at(match.start()),
                       f'"{match.group()}" claims a use that the term base marks proposed (no attestation)',
                       f"{fix} (style guide: typography)")
    return check


def line_of(text: str, heading: str) -> int:
    """The number of the line of `text` that is `heading`, or 1."""
    return next((number for number, line in enumerate(text.splitlines(), 1) if line.strip() == heading), 1)


def proposal_unsaid(style: dict, proposed: set):
    """A checker of the pages in `proposed` (checked here, all their paragraphs given at once)
    that never say the site proposes the name: `proposal_said`, regular expressions (one, or a
    list) matched case-insensitively on each sentence. It reports a page at the line `lines`
    gives for it (its Origin heading), else at line 1. None when the rule has no such pattern."""
    rule = _rule(style, "proposal_said")
    if not rule or not proposed:
        return None
    said = joined(rule["proposal_said"])
    fix = _proposal_fix(rule)

    def check(paragraphs: list[Paragraph], report, lines: dict | None = None) -> None:
        pages = {paragraph.path for paragraph in paragraphs} & set(proposed)
        told = {paragraph.path for paragraph in paragraphs if paragraph.path in pages
                and any(said.search(sentence) for _, sentence in paragraph.sentences())}
        for path in sorted(pages - told, key=str):
            report.add(path, (lines or {}).get(path, 1), "the term base marks this entry's preferred name proposed "
                       "(no attestation), and the page never says that the site proposes it",
                       f"{fix} (style guide: typography)")
    return check


def article_agreement(style: dict):
    """A checker of an article before a kept English term that does not match its gender."""
    articles = style.get("articles") or {}
    wrong: dict[str, list[tuple[str, str]]] = {}  # a form -> [(article it must not take, right one)]
    for item in style.get("kept_english") or []:
        gender = item.get("gender") if isinstance(item, dict) else None
        if not gender or gender not in articles:
            continue
        right = articles[gender]
        for other, listed in articles.items():
            if other == gender:
                continue
            for position, article in enumerate(listed):
                fit = right[min(position, len(right) - 1)]
                for form in item.get("forms") or []:
                    wrong.setdefault(str(form), []).append((str(article), str(fit)))
    if not wrong:
        return None
    pairs = {(article.lower(), form.lower()): (form, fit) for form, items in wrong.items()
             for article, fit in items}
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted({re.escape(a) for a, _ in pairs}, key=len, reverse=True))
                         + r")\s+\*?(" + "|".join(sorted({re.escape(f) for _, f in pairs}, key=len, reverse=True))
                         + r")(?![\w'-])", re.I)

    def check(paragraph: Paragraph, report) -> None:
        quoted = [m.span() for m in QUOTED.finditer(paragraph.text)]  # a form quoted as a word
        for match in pattern.finditer(paragraph.text):
            key = (match.group(1).lower(), match.group(2).lower())
            if key in pairs and not any(start <= match.start() < end for start, end in quoted):
                form, fit = pairs[key]
                report.add(paragraph.path, paragraph.line_at(match.start()),
                           f'"{match.group(1)} {match.group(2)}": the style guide gives "{form}" another gender',
                           f'write "{fit} {match.group(2)}" (style guide: kept English terms)')
    return check


def gapped(phrase: str) -> re.Pattern | None:
    """The pattern of a form to avoid written with "…" between its parts, else None. A part may
    list alternatives with "|" ("giv|give|giver … til `|til SDPA"); the form is matched on the
    Markdown as written, so a backtick in a part stands for inline code."""
    if "…" not in phrase:
        return None
    def choice(text: str) -> str:  # a word ends where a word does; "til `" ends at the backtick
        return re.escape(text) + (r"(?![\w-])" if re.search(r"\w$", text) else "")

    parts = ["(?:" + "|".join(choice(alt.strip()) for alt in part.split("|") if alt.strip()) + ")"
             for part in phrase.split("…") if part.strip()]
    gap = rf"(?:\s+[^\s.!?;:]+){{0,{GAP}}}?\s+"
    return re.compile(r"(?<![\w-])" + gap.join(parts), re.I)


def shown(phrase: str) -> str:
    """A form to avoid as a reader of the style guide sees it: a gapped form by its first
    alternatives ("give … til"), without the checker's notation."""
    if "…" not in phrase:
        return phrase
    return " … ".join(part.split("|")[0].strip().rstrip("`").strip() for part in phrase.split("…"))
