"""Plain text and addresses written into the site's Markdown so that they render exactly as
written: a source's authors, title and URL in a citation (TermBase.citation)."""

from __future__ import annotations

import re

# Inline Markdown that the site's Markdown (mkdocs.yml: Python-Markdown with pymdownx.tilde and
# pymdownx.arithmatex) reads as syntax: emphasis, code, images, attribute lists, math,
# strike-through and subscript. Each is escaped with a backslash (all are in that Markdown's
# ESCAPED_CHARS: tests/site/test_grammar.py). Brackets become entities: Python-Markdown finds a
# reference definition (`[\\]: url`) before it reads escapes. So do `<` and an `&` that would
# start an entity. At the start of the text, what would open a block (`# `, `1. `, `- `, `> `) is
# escaped too: a citation may open a list item's text.
INLINE_SYNTAX = "\\`*_$~{}!"
_INLINE_SYNTAX = re.compile("([" + re.escape(INLINE_SYNTAX) + "])")
_ENTITIES = re.compile(r"&(?=#|[A-Za-z][A-Za-z0-9]*;)|[<\[\]]")
_BLOCK_START = re.compile(r"^(\s*)(?:([#>])|(\d+)([.)])(?=\s|$)|([-+])(?=\s|$))")


def literal(text: str) -> str:
    """`text` as inline Markdown that renders exactly as written: a source's title such as
    "modeling_rope_utils.py (__init__, factor ** 2)" must not turn into bold or a link."""
    text = _INLINE_SYNTAX.sub(r"\\\1", _ENTITIES.sub(lambda m: f"&#{ord(m[0])};", text))
    return _BLOCK_START.sub(lambda m: m[1] + (f"{m[3]}\\{m[4]}" if m[3] else "\\" + (m[2] or m[5])), text)


def link_target(url: str) -> str:
    """`url` as a Markdown link's target: the characters that would end it early or start a
    title (a parenthesis, a space, a quote) percent-encoded, which leaves the address the same."""
    return "".join({"(": "%28", ")": "%29", " ": "%20", '"': "%22", "<": "%3C", ">": "%3E"}.get(ch, ch) for ch in url)
