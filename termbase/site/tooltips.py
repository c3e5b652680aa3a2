"""Links the first mention of each glossary term on a page to its entry, with the term's short
definition (in the page's language) as the tooltip that Material's `content.tooltips` shows.

Matching walks the words of the page once and looks each run of words up in a table of all
term names (built once per language), so the cost per page does not grow with the glossary.
"""

from __future__ import annotations

import html
import re

from mkdocs.utils import get_relative_url

from termbase.core.model import TermBase

TAG = re.compile(r"(<[^>]+>)")
TOKEN = re.compile(r"\w+|[^\w\s]")
# Text inside these is never linked: code, links, headings, math, scripts, struck-out forms to avoid.
SKIP = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "math", "script", "style", "textarea", "del", "s"}
# Nor inside an element in another language (the names on the "In other languages" line) or a
# hidden one (the search index's synonyms).
FOREIGN = re.compile(r"\s(?:lang=|hidden[\s>=])")


def plain(short: str) -> str:
    """A short definition as tooltip text: Markdown emphasis and code marks go, `d_k` stays."""
    return re.sub(r"[*`]", "", short)


class Tooltips:
    """The names of one language's terms, looked up while walking a page's words once."""

    def __init__(self, base: TermBase, lang: str):
        self.lang = lang
        table: dict[tuple[str, ...], str] = {}
        for slug, term in sorted(base.terms.items()):
            for name in [term[lang]["term"], *term[lang].get("synonyms", [])]:
                words = tuple(TOKEN.findall(name.lower()))
                if words:
                    table.setdefault(words, slug)
        self.table = table
        self.longest = max(map(len, table), default=0)
        self.titles = {slug: html.escape(plain(term[lang]["short"]), quote=True) for slug, term in base.terms.items()}
        # A term's own names, in every language: on its page no word inside them is linked.
        self.own = {slug: {tuple(TOKEN.findall(str(name).lower())) for other in base.languages
                           for name in [term[other]["term"], *(term[other].get("synonyms") or [])]}
                    for slug, term in base.terms.items()}

    def _link_text(self, text: str, page_url: str, linked: set[str], own=frozenset()) -> str:
        words = [(m.start(), m.end(), m.group().lower()) for m in TOKEN.finditer(text)]
        out, done, i = [], 0, 0
        longest = max(self.longest, *map(len, own)) if own else self.longest
        while i < len(words):
            for n in range(min(longest, len(words) - i), 0, -1):
                run = tuple(w[2] for w in words[i:i + n])
                if run in own:  # the page's own term, whole: nothing inside it is another term
                    i += n - 1
                    break
                slug = self.table.get(run)
                if slug is None:
                    continue
                start, end = words[i][0], words[i + n - 1][1]
                if text[start - 1:start] == "-" or text[end:end + 1] == "-":
                    break  # part of a hyphenated compound ("attention-vægte"): not the term itself
                if slug not in linked:
                    linked.add(slug)
                    href = get_relative_url(f"glossary/{slug}/", page_url)
                    out.append(text[done:start])
                    out.append(f'<a class="termbase-term" href="{href}" title="{self.titles[slug]}">'
                               f"{text[start:end]}</a>")
                    done = end
                i += n - 1  # a linked or already linked name is consumed whole
                break
            i += 1
        out.append(text[done:])
        return "".join(out)

    def add(self, page_html: str, page_url: str, own_slug: str | None) -> str:
        # Terms the author already linked by hand, and the page's own term, get no link.
        linked = set(re.findall(r'href="[^"]*glossary/([a-z0-9-]+)/', page_html))
        if own_slug:
            linked.add(own_slug)
        own = self.own.get(own_slug, set())
        depth = 0
        foreign: list[str] = []  # open elements in another language or hidden, by tag name
        out = []
        for token in TAG.split(page_html):
            if token.startswith("<"):
                name = re.match(r"</?\s*([a-zA-Z0-9]+)", token)
                tag = name.group(1).lower() if name else ""
                if name and tag in SKIP and not token.endswith("/>"):
                    depth += -1 if token.startswith("</") else 1
                if token.startswith("</"):
                    if foreign and foreign[-1] == tag:
                        foreign.pop()
                elif name and not token.endswith("/>") and (FOREIGN.search(token) or (foreign and foreign[-1] == tag)):
                    foreign.append(tag)
                out.append(token)
            elif depth > 0 or foreign or not token.strip():
                out.append(token)
            else:
                out.append(self._link_text(token, page_url, linked, own))
        return "".join(out)
