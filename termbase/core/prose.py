"""The prose of a Markdown page, line by line, as the language checks read it: code, math,
URLs, link targets, HTML, entry markers, struck-out forms and quoted words are blanked out
(replaced by spaces, so columns and line numbers stay), and what is left is what a reader
reads as sentences in the page's language.
"""

from __future__ import annotations

import re

from termbase.core import markdown

BLANKED = [
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$"),  # display math on one line
    re.compile(r"(?<![\\$])\$(?![\s$])[^$\n]*?(?<![\s\\])\$(?!\$)"),  # inline math
    re.compile(r"\{\{[^}]*\}\}"),  # entry markers, claim marks
    re.compile(r"\]\([^)]*\)"),  # link targets (the link text stays)
    re.compile(r"\{\s*[:.#][^}]*\}"),  # attribute lists
    re.compile(r"^\s*(?:!!!|\?\?\?\+?|===)\s+[\w-]*(?:\s*\"[^\"]*\")?"),  # admonition/tab markers
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r"https?://\S+"),
    re.compile(r"~~[^~\n]*~~"),  # forms to avoid, struck out
    re.compile(r"\{[a-z_]+\}"),  # the fields of an interface string ({version})
    re.compile(r"(?<![\w.])\.[a-z]+\b"),  # file extensions (.ipynb)
    re.compile(r"\b[\w./-]+\.(?:md|py|ipynb|txt|yml|json|svg|html)\b"),  # file names (index.md)
]
PAIRS = {"«": "»", "“": "”", "»": "«", "„": "“", '"': '"'}
QUOTED = [re.compile(p) for p in (r"«[^»\n]*»", r"“[^”\n]*”", r"»[^«\n]*«", r"„[^“\n]*“", r'"[^"\n]*"')]
ITALIC = [re.compile(r"(?<![*\w])\*(?!\s)[^*\n]+?(?<!\s)\*(?![*\w])"), re.compile(r"(?<!\w)_(?!\s)[^_\n]+?(?<!\s)_(?!\w)")]


def _blank(line: str, patterns) -> str:
    for pattern in patterns:
        line = pattern.sub(lambda m: " " * len(m.group()), line)
    return line


def markdown_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the page outside front matter, fenced code and display math."""
    return markdown.text_lines(text)


def prose(line: str, *, quotes: bool = False, italics: bool = True) -> str:
    """A line with everything that is not prose in the page's language blanked out."""
    line = _blank(line, BLANKED)
    if not quotes:
        line = _blank(line, QUOTED)
    if not italics:
        line = _blank(line, ITALIC)
    return line


def unquoted(lines: list[str]) -> list[str]:
    """The lines of one paragraph-ordered text with every quoted span blanked, also a quotation
    that opens on one line and closes on a later one (a title wrapped in «...», say)."""
    out = []
    closing = None  # the quote mark that ends the span we are in
    for line in lines:
        chars = list(line)
        for i, ch in enumerate(line):
            if closing is not None:
                chars[i] = " "
                if ch == closing:
                    closing = None
            elif ch in PAIRS and (ch != '"' or _opens(line, i)):
                chars[i] = " "
                closing = PAIRS[ch]
        out.append("".join(chars))
        if not line.strip():
            closing = None  # a quotation never runs past its paragraph
    return out


# An italic span wrapped onto the next line of its paragraph (Markdown reads it as one span):
# an opening mark at the end of one line's text, the closing one on the next.
ITALIC_WRAPPED = [re.compile(r"(?<![*\w])\*(?![\s*])[^*\n]*\n[ \t]*[^*\s][^*\n]*?(?<!\s)\*(?![*\w])"),
                  re.compile(r"(?<!\w)_(?![\s_])[^_\n]*\n[ \t]*[^_\s][^_\n]*?(?<!\s)_(?!\w)")]
# A line that starts a block of its own (a list item, a table row, a heading, a quotation) and
# one that a block ends with (a heading, a table row): no emphasis runs across them.
STARTS_BLOCK = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|\||#|>)")
ENDS_BLOCK = re.compile(r"\s*(?:\||#)")


def unitalic(lines: list[str], numbers: list[int]) -> list[str]:
    """The lines of a page (`numbers`: their line numbers) with each italic span that runs from
    one line into the next of its paragraph blanked; spans within a line are left to
    `prose(..., italics=False)`. Only lines that follow each other in the file, in one paragraph,
    are read together; a line may itself hold line breaks (a YAML value) and comes back whole."""
    out: list[str] = []
    start = 0
    for end in range(1, len(lines) + 1):
        if end < len(lines) and numbers[end] == numbers[end - 1] + 1 and lines[end].strip() \
                and not STARTS_BLOCK.match(lines[end]) and not ENDS_BLOCK.match(lines[end - 1]):
            continue
        text = "\n".join(lines[start:end])
        for pattern in ITALIC_WRAPPED:  # blanking keeps every offset: the lines are cut out again below
            text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        at = 0
        for line in lines[start:end]:
            out.append(text[at:at + len(line)])
            at += len(line) + 1
        start = end
    return out


def _opens(line: str, i: int) -> bool:
    """A straight quote that starts a quotation (not an inch sign or a stray mark)."""
    return i + 1 < len(line) and not line[i + 1].isspace()


def unbalanced_dollar(line: str) -> bool:
    """True when a line of prose has a `$` that opens or closes no inline formula."""
    line = _blank(line, [BLANKED[0], BLANKED[1], BLANKED[3], BLANKED[4]])
    line = re.sub(r"\\\$", "  ", line)
    line = BLANKED[2].sub(lambda m: " " * len(m.group()), line)
    return "$" in line


def inline_formulas(line: str) -> list[str]:
    """The LaTeX of each inline `$...$` and one-line `$$...$$` formula of a Markdown line."""
    line = _blank(line, [BLANKED[0]])
    found = [m.group()[2:-2] for m in BLANKED[1].finditer(line)]
    found += [m.group()[1:-1] for m in BLANKED[2].finditer(BLANKED[1].sub("", line))]
    return found
