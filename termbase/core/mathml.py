"""LaTeX to MathML, the one converter: the build renders every formula with it and the checker
renders every formula of every record and page with it first, so a formula that would break
the build is a `path:line` problem instead.

latex2mathml accepts some broken input silently (a missing closing brace, an unknown command
it prints as text), so those are refused here with a reason a contributor can act on.
"""

from __future__ import annotations

import functools
import html
import re

from latex2mathml.converter import convert

UNKNOWN_COMMAND = re.compile(r"<m[io]>(\\[A-Za-z]+)</m[io]>")
# The words of a formula, `\text{...}`. A term record's formula is shared by every language, so
# its words are written in English and each language's are in ui.yml (`formula_text`); a
# `\text{}` that names something (`d_{\text{model}}`, `\text{MoBA:}`) stays as it is in every
# language (`formula_labels`). The check reads the same pattern (core/check/records.py).
TEXT = re.compile(r"(?<!\\)\\text\s*\{([^{}]*)\}")
# Every other way LaTeX writes words (\textbf, \textit, \textrm, \mbox, a \text{} with braces
# inside): the check refuses them in a record's formula, as they would stay in English.
OTHER_TEXT = re.compile(r"(?<!\\)\\(?:text(?!style)[a-z]*|mbox)\b")
# What a formula word may not hold: LaTeX's special characters, and the HTML ones latex2mathml
# copies into <mtext> unescaped.
NOT_IN_WORDS = set("{}\\$<>&%#^_~")


class FormulaError(ValueError):
    """Why a formula does not render; `at`: the index in the formula of the character at fault,
    where the reason has one (an unmatched brace)."""

    def __init__(self, reason: str, at: int | None = None):
        super().__init__(reason)
        self.at = at


def _braces(tex: str) -> FormulaError | None:
    opened = []  # where each '{' still open is
    for i, ch in enumerate(tex):
        if ch in "{}" and _escaped(tex, i):
            continue
        if ch == "{":
            opened.append(i)
        elif ch == "}":
            if not opened:
                return FormulaError("a '}' closes no '{'", i)
            opened.pop()
    # The first brace left open: a brace opened after it and left open is inside it.
    return FormulaError(f"{len(opened)} '{{' never closed", opened[0]) if opened else None


def _escaped(tex: str, i: int) -> bool:
    """True when the character at `i` follows an odd number of backslashes: `\\{` is a brace
    character, while `\\\\{` is a line break and then a group."""
    slashes = len(tex[:i]) - len(tex[:i].rstrip("\\"))
    return slashes % 2 == 1


def fault_line(tex: str, at: int) -> int:
    """The line of `tex` (1 = its first, not counting the line breaks it starts with, as the
    build's display formulas do) that holds the character at `at`."""
    return tex[:at].lstrip("\n").count("\n") + 1


def _where(tex: str, at: int) -> str:
    """The character at `at` named by what comes before it on its line (`the '}' after
    `x_{i}``), and by that line's number when the formula has more than one."""
    lines = tex[:at].split("\n")
    before = lines[-1].strip()
    number = fault_line(tex, at)
    line = f" on line {number} of the formula" if "\n" in tex.strip("\n") else ""
    if not before:
        return f"the '{tex[at]}' at the start of the formula" if not line else \
            f"the '{tex[at]}' at the start of line {number} of the formula"
    shown = before if len(before) <= 16 else "..." + before[-16:]
    return f"the '{tex[at]}' after `{shown}`{line}"


def _reason(exc: Exception) -> str:
    text = str(exc).strip()
    if text:
        return text
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", type(exc).__name__.removesuffix("Error")).lower()
    return words.replace("left", "\\left").replace("right", "\\right")


@functools.lru_cache(maxsize=4096)
def convert_tex(tex: str, display: str = "inline") -> str:
    """MathML for `tex` (with the LaTeX as alttext), or FormulaError with the reason."""
    broken = _braces(tex)
    if broken:
        raise broken
    try:
        mathml = convert(tex, display=display)
    except Exception as exc:  # latex2mathml raises many types, some without a message
        raise FormulaError(_reason(exc)) from None
    unknown = UNKNOWN_COMMAND.search(mathml)
    if unknown:
        raise FormulaError(f"unknown command {unknown.group(1)}")
    return mathml.replace("<math ", f'<math alttext="{html.escape(tex, quote=True)}" ', 1)


def problem(tex: str) -> str | None:
    """Why `tex` cannot be rendered, with the character at fault where there is one, or None."""
    return located(tex)[0]


def located(tex: str) -> tuple[str | None, int]:
    """`problem(tex)`, and the line of `tex` the fault is on (1 where it names no place)."""
    try:
        convert_tex(tex)
    except FormulaError as exc:
        return explain(exc, tex), (1 if exc.at is None else fault_line(tex, exc.at))
    return None, 1


def explain(exc: FormulaError, tex: str) -> str:
    """The reason of `exc`, raised for `tex`, with the character at fault where there is one."""
    return str(exc) if exc.at is None else f"{exc}: {_where(tex, exc.at)}"


LINE_BREAK = "\x00\x00"  # stands in for a line break (two backslashes) while the patterns run


def text_runs(tex: str) -> list[str]:
    """What each `\\text{...}` of `tex` holds, in order."""
    return TEXT.findall(tex.replace("\\\\", LINE_BREAK))


def odd_text(tex: str) -> int:
    """How many word commands of `tex` are not a plain `\\text{...}` (see OTHER_TEXT)."""
    return len(OTHER_TEXT.findall(tex.replace("\\\\", LINE_BREAK))) - len(text_runs(tex))


def in_language(tex: str, words: dict[str, str], decimal: str = ".") -> str:
    """`tex` with each `\\text{...}` that `words` has (English -> the page's language) replaced,
    and each decimal point written as the page's `decimal` sign (ui.yml decimal_separator)."""
    masked = tex.replace("\\\\", LINE_BREAK)
    if words:
        masked = TEXT.sub(lambda m: "\\text{" + words.get(m.group(1), m.group(1)) + "}", masked)
    if decimal != ".":  # the numbers as the check reads them: not \text{v0.3}, not \hspace{0.5em}
        sign = "{" + decimal + "}"  # braced: a bare comma is punctuation to LaTeX, with a space after it
        out, at = [], 0
        for start, end, raw in numbers(masked):  # a LINE_BREAK holds no digit
            if raw.count(".") == 1:  # a decimal point (1.2.3 is no number: number_problems)
                out += [masked[at:start], raw.replace(".", sign)]
                at = end
        masked = "".join(out) + masked[at:]
    return masked.replace(LINE_BREAK, "\\\\")


# --- numbers ------------------------------------------------------------------------------------
# A formula groups the digits of a whole number in threes with a thin space, `\,`, from five
# digits on (65\,504, 1\,081\,344), and leaves four digits alone (8192): ISO 80000-1's way,
# the same in every language, because a term record's formula is one string shown in all of
# them. The decimal sign is the page's: a record and an English page write `0.1`, and the
# Spanish and Danish pages `0{,}1` (in_language writes it into a record's formula for them).
# The check (number_problems) and the renderer (in_language) find numbers with `numbers`.

# Words and names, whose digits are not numbers: \text{v0.3}, \mathrm{Llama3.1}, \operatorname{...}.
NAMES = re.compile(r"(?<!\\)\\(?:text|math[a-z]+|operatorname)\s*\{[^{}]*\}")
# Control words are blanked before numbers are read: `\times10000` holds the number 10000.
COMMAND = re.compile(r"\\[A-Za-z]+")
# Digit runs joined by a thin space `\,`, a braced comma `{,}`, a point, or a comma that groups
# thousands (three digits after it); any other comma separates a list, a tuple or indices
# ((0,1), M_{1,1}). Digits before a TeX unit are a length (\hspace{0.5em}), not a number.
NUMBER = re.compile(r"(?<![\w.])\d+(?:(?:\\,|\{,\}|\.|,(?=\d{3}(?!\d)))\d+)*"
                    r"(?!\d|\s*(?:em|ex|mu|pt|pc|in|cm|mm|bp|dd|cc|sp)\b)")
SEPARATOR = re.compile(r"\{,\}|[.,]")  # a point or comma between digits (a thin space aside)
GROUPED = "the digits are grouped in threes with a thin space, \\,, from five digits on"


def numbers(tex: str) -> list[tuple[int, int, str]]:
    """(start, end, as written) of each number of `tex`, words, names and commands left out."""
    masked = tex.replace("\\\\", "  ")
    for pattern in (NAMES, COMMAND):
        masked = pattern.sub(lambda m: " " * len(m.group()), masked)
    return [(m.start(), m.end(), m.group()) for m in NUMBER.finditer(masked)]


def _grouped(digits: str) -> str:
    if len(digits) < 5:
        return digits
    head = len(digits) % 3 or 3
    return "\\,".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


def number_problems(tex: str, decimal: str = ".", sign_why: str | None = None) -> list[tuple[str, str, str]]:
    """(number as written, as it should be written, why) for each number of `tex` not written as
    the comment above says; `decimal` is the page's decimal sign, `.` or `,`, and `sign_why` says
    why a decimal must be written with it."""
    sign = "." if decimal == "." else "{,}"
    sign_why = sign_why or "the decimal sign of this page is " + ("a point" if sign == "." else "a comma, written {,}")
    found = []
    for _, _, raw in numbers(tex):
        bare = raw.replace("\\,", "")
        marks = SEPARATOR.findall(bare)
        parts = SEPARATOR.split(bare)
        if len(marks) > 1:
            if len(set(marks)) > 1 or marks[0] == sign or any(len(part) != 3 for part in parts[1:]):
                continue  # 1.2.3: no number this rule can read
            want, why = _grouped("".join(parts)), GROUPED  # thousands written with points or commas
        elif marks and marks[0] == sign:
            want, why = _grouped(parts[0]) + sign + parts[1], GROUPED
        elif marks and marks[0] == "," and sign == "." and parts[0] != "0":
            want, why = _grouped("".join(parts)), GROUPED  # 65,504 on an English page: thousands
        elif marks and len(parts[1]) == 3 and parts[0] != "0" and marks[0] != "{,}":
            # 65.504 on a Danish page: a whole number written with a thousands point, or a decimal?
            want = f"{_grouped(''.join(parts))} (a whole number) or {_grouped(parts[0])}{sign}{parts[1]} (a decimal)"
            why = "a point or comma between digits is neither a thin space nor this page's decimal sign"
        elif marks:
            want, why = _grouped(parts[0]) + sign + parts[1], sign_why
        else:
            want, why = _grouped(bare), "four digits take no separator" if len(bare) == 4 else GROUPED
        if want != raw:
            found.append((raw, want, why))
    return found
