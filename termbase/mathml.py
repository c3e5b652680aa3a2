"""Formulas rendered to MathML at build time: no script, no font, no request at reading time.

pymdownx.arithmatex (generic mode) finds the math and leaves `\\(...\\)` / `\\[...\\]` in
`<span|div class="arithmatex">`; this module swaps each for MathML, which browsers render natively.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

ARITHMATEX = re.compile(
    r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S
)


class MathError(ValueError):
    pass


def to_mathml(page_html: str, where: str = "") -> str:
    def one(match: re.Match) -> str:
        tag, opener, tex = match.groups()
        tex = html.unescape(tex)
        display = "block" if opener == "[" else "inline"
        try:
            mathml = convert(tex, display=display)
        except Exception as exc:  # latex2mathml raises many types
            raise MathError(f"{where}: cannot render formula {tex!r}: {exc} - fix the LaTeX") from exc
        mathml = mathml.replace("<math ", f'<math alttext="{html.escape(tex, quote=True)}" ', 1)
        return f'<{tag} class="termbase-math">{mathml}</{tag}>'

    return ARITHMATEX.sub(one, page_html)
