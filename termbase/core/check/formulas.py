"""One formula, checked the same way wherever it is written (a page, a record, a data file, a
notebook): it renders (core/mathml.py), and its numbers follow the rule of mathml's numbers
section (thin-space groups from five digits, four digits alone, the page's decimal sign)."""

from __future__ import annotations

from termbase.core import mathml

# A record's formula is shown on every page: it writes English's decimal point, and each page
# writes its own sign (mathml.in_language).
RECORD_SIGN = "a record's formula writes English's decimal point, and each page shows its own sign"


def check_formula(report, path, line: int, where: str, tex: str, decimal: str, sign_why: str | None = None) -> None:
    """`where`: how the problem names the formula ("a formula", "formula 2"); `line`: the line
    of the formula's first line of LaTeX. A fault with a place is reported on its own line."""
    reason, on = mathml.located(tex.strip())
    if reason:
        skipped = tex[:len(tex) - len(tex.lstrip())].count("\n")  # blank lines before the LaTeX
        report.add(path, line + skipped + on - 1, f"{where} does not parse: {reason}", "fix the LaTeX")
    for raw, want, why in mathml.number_problems(tex, decimal, sign_why):
        report.add(path, line, f"{where} writes the number {raw}: {why}", f"write {want}")
