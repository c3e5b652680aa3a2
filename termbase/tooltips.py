"""Links the first mention of each glossary term on a page to its entry, with the term's short
definition (in the page's language) as the tooltip that Material's `content.tooltips` shows."""

from __future__ import annotations

import html
import re

from mkdocs.utils import get_relative_url

from termbase.model import terms

TAG = re.compile(r"(<[^>]+>)")
# Text inside these is never linked: code, links, headings, math, the entry's own title box.
SKIP = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "math", "script", "style", "textarea"}


def _plain(markdown_text: str) -> str:
    return re.sub(r"[*_`]", "", markdown_text)


def _patterns(lang: str, own_slug: str | None):
    names = []
    for slug, term in terms().items():
        if slug == own_slug:
            continue
        for name in [term[lang]["term"], *term[lang].get("synonyms", [])]:
            names.append((name, slug))
    names.sort(key=lambda item: -len(item[0]))  # longest first: "multi-head attention" before "attention"
    return names


def add_tooltips(page_html: str, page_url: str, lang: str, own_slug: str | None) -> str:
    patterns = _patterns(lang, own_slug)
    if not patterns:
        return page_html
    regex = re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(name) for name, _ in patterns) + r")(?![\w-])",
        re.IGNORECASE,
    )
    by_name = {name.lower(): slug for name, slug in patterns}
    # Terms the author already linked by hand get no second link.
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
            continue
        if depth > 0 or not token.strip():
            out.append(token)
            continue

        def link(match: re.Match) -> str:
            slug = by_name[match.group(1).lower()]
            if slug in linked:
                return match.group(0)
            linked.add(slug)
            href = get_relative_url(f"glossary/{slug}/", page_url)
            title = html.escape(_plain(terms()[slug][lang]["short"]), quote=True)
            return f'<a class="termbase-term" href="{href}" title="{title}">{match.group(1)}</a>'

        out.append(regex.sub(link, token))
    return "".join(out)
