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
    pass


def _braces(tex: str) -> str | None:
    depth = 0
    for i, ch in enumerate(tex):
        if ch in "{}" and i and tex[i - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return "a '}' closes no '{'"
    return f"{depth} '{{' never closed" if depth else None


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
        raise FormulaError(broken)
    try:
        mathml = convert(tex, display=display)
    except Exception as exc:  # latex2mathml raises many types, some without a message
        raise FormulaError(_reason(exc)) from None
    unknown = UNKNOWN_COMMAND.search(mathml)
    if unknown:
        raise FormulaError(f"unknown command {unknown.group(1)}")
    return mathml.replace("<math ", f'<math alttext="{html.escape(tex, quote=True)}" ', 1)


def problem(tex: str) -> str | None:
    """Why `tex` cannot be rendered, or None."""
    try:
        convert_tex(tex)
    except FormulaError as exc:
        return str(exc)
    return None


LINE_BREAK = "\x00\x00"  # stands in for a line break (two backslashes) while the patterns run


def text_runs(tex: str) -> list[str]:
    """What each `\\text{...}` of `tex` holds, in order."""
    return TEXT.findall(tex.replace("\\\\", LINE_BREAK))


def odd_text(tex: str) -> int:
    """How many word commands of `tex` are not a plain `\\text{...}` (see OTHER_TEXT)."""
    return len(OTHER_TEXT.findall(tex.replace("\\\\", LINE_BREAK))) - len(text_runs(tex))


def in_language(tex: str, words: dict[str, str]) -> str:
    """`tex` with each `\\text{...}` that `words` has (English -> the page's language) replaced."""
    if not words:
        return tex
    masked = tex.replace("\\\\", LINE_BREAK)
    swapped = TEXT.sub(lambda m: "\\text{" + words.get(m.group(1), m.group(1)) + "}", masked)
    return swapped.replace(LINE_BREAK, "\\\\")
