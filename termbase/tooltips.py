"""Links the first mention of each glossary term on a page to its entry, with the term's short
definition (in the page's language) as the tooltip that Material's `content.tooltips` shows.

Matching walks the words of the page once and looks each run of words up in a table of all
term names (built once per language), so the cost per page does not grow with the glossary.
"""

from __future__ import annotations

import functools
import html
import re

from mkdocs.utils import get_relative_url

from termbase.model import terms

TAG = re.compile(r"(<[^>]+>)")
TOKEN = re.compile(r"\w+|[^\w\s]")
# Text inside these is never linked: code, links, headings, math, scripts, struck-out forms to avoid.
SKIP = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "math", "script", "style", "textarea", "del", "s"}


@functools.lru_cache(maxsize=None)
def name_table(lang: str) -> tuple[dict[tuple[str, ...], str], int]:
    """(words of a term name or synonym, lowercased) -> slug, and the longest name in words."""
    table: dict[tuple[str, ...], str] = {}
    for slug, term in sorted(terms().items()):
        for name in [term[lang]["term"], *term[lang].get("synonyms", [])]:
            words = tuple(TOKEN.findall(name.lower()))
            if words:
                table.setdefault(words, slug)
    return table, max(map(len, table), default=0)


def plain(short: str) -> str:
    """A short definition as tooltip text: Markdown emphasis and code marks go, `d_k` stays."""
    return re.sub(r"[*`]", "", short)


@functools.lru_cache(maxsize=None)
def _title(slug: str, lang: str) -> str:
    return html.escape(plain(terms()[slug][lang]["short"]), quote=True)


def _link_text(text: str, lang: str, page_url: str, linked: set[str]) -> str:
    table, longest = name_table(lang)
    words = [(m.start(), m.end(), m.group().lower()) for m in TOKEN.finditer(text)]
    out, done, i = [], 0, 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            slug = table.get(tuple(w[2] for w in words[i:i + n]))
            if slug is None:
                continue
            start, end = words[i][0], words[i + n - 1][1]
            if text[start - 1:start] == "-" or text[end:end + 1] == "-":
                break  # part of a hyphenated compound ("attention-vægte"): not the term itself
            if slug not in linked:
                linked.add(slug)
                href = get_relative_url(f"glossary/{slug}/", page_url)
                out.append(text[done:start])
                out.append(f'<a class="termbase-term" href="{href}" title="{_title(slug, lang)}">'
                           f"{text[start:end]}</a>")
                done = end
            i += n - 1  # a linked or already linked name is consumed whole
            break
        i += 1
    out.append(text[done:])
    return "".join(out)


def add_tooltips(page_html: str, page_url: str, lang: str, own_slug: str | None) -> str:
    # Terms the author already linked by hand, and the page's own term, get no link.
    linked = set(re.findall(r'href="[^"]*glossary/([a-z0-9-]+)/', page_html))
    if own_slug:
        linked.add(own_slug)
    depth = 0
    out = []
    for token in TAG.split(page_html):
        if token.startswith("<"):
            name = re.match(r"</?\s*([a-zA-Z0-9]+)", token)
            if name and name.group(1).lower() in SKIP and not token.endswith("/>"):
                depth += -1 if token.startswith("</") else 1
            out.append(token)
        elif depth > 0 or not token.strip():
            out.append(token)
        else:
            out.append(_link_text(token, lang, page_url, linked))
    return "".join(out)


def forget() -> None:
    name_table.cache_clear()
    _title.cache_clear()
