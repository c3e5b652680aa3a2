"""The one grammar of the site's Markdown: what this project adds to it (markers, claim
citations, snippet includes, entry links) and the Markdown it must see through to find them
(front matter, fenced code, display math, code spans).

The checker, the page renderer, the machine pages, the block runner, the notebooks, the prose
checks and the claim tests all read pages through this module, so a marker the check accepts
is by construction a marker the renderer expands: both ask `tokens()` and act only on a token
whose `problem` is None.

- A marker is a line that is exactly `{{ name }}`: at the start of the line, one space inside
  each pair of braces, nothing else on the line but trailing blanks. Any other spelling
  (`{{summary}}`, an indented marker, words beside it) is a token with a problem and a fix,
  and the renderer leaves it alone; the check fails on it.
- A claim citation is `{{ claim:<id> }}` anywhere in prose, `<id>` lowercase with hyphens.
- Text in a fence, in a code span, in display math or in the front matter holds no token: a
  page may show the forms in code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from termbase.core.code_spans import blank_code, code_spans  # noqa: F401  (part of this grammar)

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
ENTRY_PAGE = re.compile(rf"glossary/({SLUG.pattern})\.md")

# An opening fence as pymdownx.superfences reads it: a language, then attributes in braces or
# `name="value"` options; any other text after the fence makes it no fence.
FENCE_OPEN = re.compile(r"""^(?P<indent>\s*)(?P<mark>`{3,}|~{3,})
    (?:[ \t]*\.?(?P<lang>[\w\#.+-]+)(?=[ \t]|$))?
    (?:[ \t]*\{[^\n]*\}|(?P<options>(?:[ \t]*[a-zA-Z]\w*(?:=(?:"[^"]*"|'[^']*'))?(?=[ \t]|$))+))?[ \t]*$""", re.X)
# The options superfences (with Pygments) takes after the language, each with a valid value; any
# other word there makes the line no fence. A bare word is read as `word="word"`.
FENCE_OPTION = re.compile(r"""(?P<key>[a-zA-Z]\w*)(?:=(?P<quote>"|')(?P<value>.*?)(?P=quote))?""")
FENCE_OPTION_VALUES = {"hl_lines": re.compile(r"\d+(?:-\d+)?(?:[ \t]+\d+(?:-\d+)?)*$"),
                       "linenums": re.compile(r"[\d]+(?:[ \t]+[\d]+)?(?:[ \t]+[\d]+)?"),
                       "title": None, "title_mode": None}
# Blocks that end a paragraph on the line they start (Python-Markdown looks for them anywhere in a
# block: headings, quotes, admonitions, tabs, footnote and abbreviation definitions); a list item
# starts a block only after a blank line, so it ends only a list item's text.
# An abbreviation's definition (the `abbr` extension) is taken out of the text and becomes the
# plain-text tooltip of each use: nothing in it is Markdown, not even a code span.
ABBREVIATION = re.compile(r"^\*\[[^\]]*\][ ]*:")
DEFINITION = rf"^ {{0,3}}\[\^[^\]]*\]:|{ABBREVIATION.pattern}"  # a footnote's or an abbreviation's
INTERRUPTS = re.compile(rf"^\s*(?:#|>|!!!|\?\?\?|===)|{DEFINITION}")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]\s|\d+\.\s)")
# A heading, a title or a definition: the next line starts a new paragraph.
ONE_LINE_BLOCK = re.compile(rf"^\s*(?:#|!!!|\?\?\?|===)|{DEFINITION}")
BRACES = re.compile(r"\{\{(.*?)\}\}")
MARKER_NAME = re.compile(r"[a-z_]+")
CLAIM = re.compile(r"\s*claim\s*:(.*)", re.S)
CITATION = re.compile(rf"\{{\{{ claim:({SLUG.pattern}) \}}\}}")  # the one spelling of a citation
# A snippet include as pages, records and notebooks write it: --8<-- "snippets/<file>.py:<section>".
REFERENCE = re.compile(r'--8<--\s+"([^"]+)"')
INCLUDE_LINE = re.compile(r'^(?P<indent>[ \t]*)--8<--\s+"(?P<ref>[^"]+)"[ \t]*$')
NOTEBOOK_INCLUDE = re.compile(r'^\s*#\s*--8<--\s+"(?P<ref>[^"]+)"\s*$')  # in a notebook's code cell
# A link to a page (the text is None where it is not plain, as around an image).
LINK = re.compile(r"(?:\[(?P<text>[^\[\]]*))?\]\((?P<target>[^)\s#]+\.md)(?P<anchor>#[^)]*)?\)")
PYTHON = ("python", "py", "pycon", "python3")

FRONT, FENCE, CODE, MATH, FORMULA, TEXT = "front", "fence", "code", "math", "formula", "text"


def entry_slug(neutral: str) -> str | None:
    """The slug of a glossary entry from its language-neutral path (`glossary/<slug>.md`)."""
    match = ENTRY_PAGE.fullmatch(neutral)
    return match.group(1) if match and match.group(1) != "index" else None


@dataclass
class Fence:
    start: int  # line of the opening fence
    lang: str  # lowercased info word, '' when none
    indent: str
    mark: str  # the opening run of backticks or tildes
    body: list[tuple[int, str]] = field(default_factory=list)
    end: int | None = None  # line of the closing fence; None when never closed

    @property
    def refs(self) -> tuple[str, ...]:
        return tuple(ref for _, line in self.body for ref in REFERENCE.findall(line))

    @property
    def is_python(self) -> bool:
        return self.lang in PYTHON


def opens_fence(line: str) -> re.Match | None:
    """The opening of a fence, or None. A fence that no line closes is no fence: Python-Markdown
    shows it and every line after it as text (no later fence opens), and so does `scan`
    (`_fence_end`)."""
    match = FENCE_OPEN.match(line)
    if match and match["options"]:
        for option in FENCE_OPTION.finditer(match["options"]):
            key, value = option["key"], option["value"] if option["value"] is not None else option["key"]
            if key not in FENCE_OPTION_VALUES or not (FENCE_OPTION_VALUES[key] is None
                                                      or FENCE_OPTION_VALUES[key].match(value)):
                return None
    return match


def _fence_end(bare: list[str], index: int, match: re.Match) -> tuple[str, int]:
    """How pymdownx.superfences ends the fence that opens on bare[index]: ("closed", index of its
    closing line), ("broken", index of a line indented less than the fence, which ends it as
    no fence) or ("open", len(bare)): never closed, so it and every line after it are text.
    The closing line is the same run of backticks or tildes at the fence's own indentation."""
    indent, mark = len(match["indent"]), match["mark"]
    for later in range(index + 1, len(bare)):
        line = bare[later]
        if not line.strip():
            continue
        if len(line) - len(line.lstrip(" \t")) < indent:
            return "broken", later
        content = line[indent:]
        if content.startswith(mark) and not content[len(mark):].strip(" \t"):
            return "closed", later
    return "open", len(bare)


def _math_block(bare: list[str], index: int, front_end: int) -> bool:
    """Whether the `$$` on bare[index] opens display math as pymdownx.arithmatex reads it: the
    formula is a block of its own, so a blank line (or a heading, or the page's start) comes
    before the opening `$$`, no blank line before the closing one, and a blank line (or the end)
    after it. The opening `$$` starts its line (arithmatex matches it at the block's start; an
    indented one is a paragraph). Otherwise the lines are text, and the check says so. (Math
    indented inside an admonition or a list is not modelled: no page has display math of its
    own, formulas come from the term records; such math is reported as a stray '$'.)"""
    before = bare[index - 1] if index > front_end else ""
    if before.strip() and not re.match(r"^\s*#", before):
        return False
    for later in range(index + 1, len(bare)):
        if not bare[later].strip():
            return False
        if bare[later].strip() == "$$":
            return later + 1 == len(bare) or not bare[later + 1].strip()
    return False


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    kind: str  # FRONT, FENCE (an opening or closing fence), CODE, MATH ($$), FORMULA, TEXT
    end: str = "\n"  # the line break that followed it ('' for a last line without one)
    fence: Fence | None = None


def scan(text: str) -> list[Line]:
    """Every line of a page with its kind."""
    raw = text.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in raw]
    out: list[Line] = []
    front_end = 0
    if bare and bare[0] == "---":
        close = next((i for i, line in enumerate(bare[1:], 1) if line == "---"), None)
        front_end = close + 1 if close is not None else 0
    fence: Fence | None = None
    closing = -1  # index of the open fence's closing line
    text_until = -1  # lines up to this index are text: a fence that superfences drops
    math = False
    for index, (line, full) in enumerate(zip(bare, raw)):
        number, end = index + 1, full[len(line):]
        if index < front_end:
            kind = FRONT
        elif fence is not None:
            if index == closing:
                fence.end, kind = number, FENCE
            else:
                fence.body.append((number, line))
                kind = CODE
            out.append(Line(number, line, kind, end, fence))
            if kind == FENCE:
                fence = None
            continue
        elif math:
            kind = MATH if line.strip() == "$$" else FORMULA
            math = kind != MATH
        elif index <= text_until:
            kind = TEXT
        elif match := opens_fence(line):
            how, stop = _fence_end(bare, index, match)
            if how == "closed":
                lang = match.group("lang") or next(iter(re.findall(r"\{\s*\.([\w#+-]+)", line)), "")
                fence = Fence(number, lang.lower(), match.group("indent"), match.group("mark"))
                closing = stop
                out.append(Line(number, line, FENCE, end, fence))
                continue
            kind, text_until = TEXT, stop
        elif line.rstrip() == "$$" and _math_block(bare, index, front_end):
            kind, math = MATH, True
        else:
            kind = TEXT
        out.append(Line(number, line, kind, end))
    return out


def fences(text: str) -> list[Fence]:
    seen: list[Fence] = []
    for line in scan(text):
        if line.kind == FENCE and (not seen or seen[-1] is not line.fence):
            seen.append(line.fence)
    return seen


def prose(text: str) -> list[tuple[Line, str]]:
    """Each prose line with its code spans blanked. A code span may run over the lines of one
    paragraph, as Python-Markdown reads it; a blank line, display math, a heading, a quote, an
    admonition or a tab ends the paragraph (a list item ends only another item's), and a heading
    or an admonition's title is a paragraph of one line. A fence does not: superfences stores
    it and leaves one placeholder line, with no backtick, in its place, so a code span can run
    across it."""
    out: list[tuple[Line, str]] = []
    paragraph: list[Line | None] = []  # None: a fence's placeholder

    def close():
        if paragraph:
            joined = "\n".join(PLACEHOLDER if line is None else line.text for line in paragraph)
            out.extend((line, blanked) for line, blanked in zip(paragraph, blank_code(joined).split("\n"))
                       if line is not None)
            paragraph.clear()

    for line in scan(text):
        if line.kind in (FENCE, CODE):
            if line.fence is not None and line.number == line.fence.start:
                paragraph.append(None)
            continue
        in_item = bool(paragraph) and paragraph[0] is not None and LIST_ITEM.match(paragraph[0].text)
        if (line.kind != TEXT or not line.text.strip() or INTERRUPTS.match(line.text)
                or (in_item and LIST_ITEM.match(line.text))):
            close()
        if line.kind == TEXT:
            paragraph.append(line)
            if ONE_LINE_BLOCK.match(line.text):
                close()
    close()
    return out


PLACEHOLDER = "\x02wzxhzdk:0\x03"  # Python-Markdown's stash placeholder, as superfences leaves it


def text_lines(text: str) -> list[tuple[int, str]]:
    """(number, line) of the prose lines: outside front matter, fences and display math."""
    return [(line.number, line.text) for line in scan(text) if line.kind == TEXT]


@dataclass(frozen=True)
class Token:
    """`{{ ... }}` in prose: a marker or a claim citation, as written."""
    line: int
    column: int  # 0-based
    raw: str
    kind: str  # "marker" or "claim"
    name: str  # the marker's name or the claim's id, spaces stripped
    problem: str | None = None  # None: the renderer expands it
    fix: str | None = None


def tokens(line: str, number: int = 0, blanked: str | None = None, crowded: bool = False) -> list[Token]:
    """The markers and claim citations of one prose line, in order (`blanked`: the line with
    its code spans blanked, when they run over lines; see `prose`; `crowded`: the line has text
    right before or after it, `crowded_lines`)."""
    if ABBREVIATION.match(line):  # a tooltip's plain text: no marker or citation is expanded there
        return [Token(number, match.start(), match.group(), "marker", match.group(1).strip(),
                      f"'{match.group()}' in an abbreviation's definition, which becomes a tooltip's plain text",
                      "write the definition without markers or claim citations")
                for match in BRACES.finditer(line)]
    found = []
    for match in BRACES.finditer(blank_code(line) if blanked is None else blanked):
        raw, inner = match.group(), match.group(1)
        claim = CLAIM.fullmatch(inner)
        if claim:
            name = claim.group(1).strip()
            good = f"{{{{ claim:{name} }}}}"
            if CITATION.fullmatch(raw):
                problem = fix = None
            elif not SLUG.fullmatch(name):
                problem, fix = (f"malformed claim citation '{raw}'",
                                "write `{{ claim:<id> }}` with a lowercase-with-hyphens id")
            else:
                problem, fix = f"malformed claim citation '{raw}'", f"write `{good}`"
            found.append(Token(number, match.start(), raw, "claim", name, problem, fix))
            continue
        name = inner.strip()
        good = f"{{{{ {name} }}}}"
        if line.rstrip() != raw and line.strip() == raw:
            problem, fix = f"marker '{raw}' is indented", f"start the line with `{good}`"
        elif line.strip() != raw:
            problem, fix = f"marker '{raw}' is not alone on its line", "put each `{{ marker }}` on a line of its own"
        elif raw != good or not MARKER_NAME.fullmatch(name):
            problem, fix = (f"marker '{raw}' is not written `{good}`",
                            f"write `{good}`: one space inside each pair of braces, a lowercase name")
        elif crowded:
            problem, fix = f"marker '{raw}' is not a paragraph of its own", "leave a blank line before and after it"
        else:
            problem = fix = None
        found.append(Token(number, match.start(), raw, "marker", name, problem, fix))
    return found


def page_tokens(text: str) -> list[Token]:
    """Every marker and claim citation of a page's prose."""
    crowded = crowded_lines(text)
    return [token for line, blanked in prose(text)
            for token in tokens(line.text, line.number, blanked, line.number in crowded)]


def crowded_lines(text: str) -> set[int]:
    """Lines with a line of text, code or a fence right before or after them. A marker expands
    into blocks of its own; on such a line it would change how the lines around it read (a list
    that starts after it, a code span that no longer closes), so the check refuses it there."""
    lines = scan(text)
    filled = [line.kind != FRONT and bool(line.text.strip()) for line in lines]
    return {line.number for index, line in enumerate(lines)
            if (index and filled[index - 1]) or (index + 1 < len(lines) and filled[index + 1])}


def stray_braces(blanked: str) -> bool:
    """Whether a prose line (code spans blanked) has a `{{` that no `}}` closes."""
    return "{{" in BRACES.sub("", blanked)


def marker_line(line: str, blanked: str | None = None, crowded: bool = False) -> str | None:
    """The name of the marker that is this whole line, when it is written as the renderer expands it."""
    found = tokens(line, 0, blanked, crowded)
    if len(found) == 1 and found[0].kind == "marker" and found[0].problem is None:
        return found[0].name
    return None


def citations(text: str) -> list[tuple[int, str]]:
    """(line, claim id) of every well-formed claim citation of a page's prose, in order."""
    return [(t.line, t.name) for t in page_tokens(text) if t.kind == "claim" and t.problem is None]


def render(text: str, marker, claim) -> str:
    """The page with each marker line replaced by `marker(name)` (when it returns a string) and
    each claim citation by `claim(id)`: exactly the tokens that have no problem."""
    out = []
    blanked = {line.number: blank for line, blank in prose(text)}
    crowded = crowded_lines(text)
    for line in scan(text):
        if line.kind != TEXT:
            out.append(line.text + line.end)
            continue
        found = [t for t in tokens(line.text, line.number, blanked[line.number]) if t.problem is None]
        name = marker_line(line.text, blanked[line.number], line.number in crowded)
        if name is not None:
            replaced = marker(name)
            if replaced is not None:
                out.append(replaced + line.end)
                continue
        new = line.text
        for token in reversed([t for t in found if t.kind == "claim"]):
            new = new[:token.column] + claim(token.name) + new[token.column + len(token.raw):]
        out.append(new + line.end)
    return "".join(out)


def strip_citations(text: str) -> str:
    """The text without its claim citations (and the space before each): notebooks for Colab."""
    out = []
    blanked = {line.number: blank for line, blank in prose(text)}
    for line in scan(text):
        new = line.text
        if line.kind == TEXT:
            found = tokens(new, line.number, blanked[line.number])
            for token in reversed([t for t in found if t.kind == "claim" and t.problem is None]):
                start = token.column - 1 if token.column and new[token.column - 1] == " " else token.column
                new = new[:start] + new[token.column + len(token.raw):]
        out.append(new + line.end)
    return "".join(out)


def expand_includes(text: str, section) -> str:
    """Each `--8<-- "file.py:section"` line of the page replaced by `section(ref)`, at the line's
    indentation, as pymdownx.snippets pastes it (blank lines stay empty)."""
    out = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        match = INCLUDE_LINE.match(bare)
        if match:
            body = section(match.group("ref")).strip("\n")
            indent = match.group("indent")
            out.append("\n".join(indent + x if x else x for x in body.splitlines()) + line[len(bare):])
        else:
            out.append(line)
    return "".join(out)
