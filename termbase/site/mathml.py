"""Formulas rendered to MathML at build time: no script, no font, no request at reading time.

pymdownx.arithmatex (generic mode) finds the math and leaves `\\(...\\)` / `\\[...\\]` in
`<span|div class="arithmatex">`; each is swapped for MathML, which browsers render natively,
with the converter the checker uses (termbase/core/mathml.py), so a formula that reaches this
point has already been found to render.
"""

from __future__ import annotations

import html
import re

from mkdocs.exceptions import PluginError

from termbase.core.mathml import FormulaError, convert_tex, explain

ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S)


def to_mathml(page_html: str, where: str) -> str:
    def one(match: re.Match) -> str:
        tag, opener, tex = match.groups()
        tex = html.unescape(tex)
        try:
            mathml = convert_tex(tex, display="block" if opener == "[" else "inline")
        except FormulaError as exc:
            raise PluginError(f"{where}: formula {tex!r} does not parse: {explain(exc, tex)} - fix the LaTeX") from None
        return f'<{tag} class="termbase-math">{mathml}</{tag}>'

    return ARITHMATEX.sub(one, page_html)
