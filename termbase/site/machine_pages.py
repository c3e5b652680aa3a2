"""Pages for machines: each page's Markdown with every marker and every code block expanded
(the code exactly as tested), published beside its HTML as `index.md`, and `llms.txt` at each
language's root listing the pages with their short definitions (https://llmstxt.org).

Why not mkdocs-llmstxt: it converts each page's HTML back to Markdown, so its code blocks are a
conversion of the highlighted HTML rather than the tested source, and it is configured once per
mkdocs.yml, where this site needs one file per language build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from termbase.core import markdown as grammar
from termbase.core import sections
from termbase.core.model import TermBase

HTML_TAG = re.compile(r"</?(?:small|span|a)\b[^>]*>")
SEARCH_ONLY = re.compile(r' ?<span class="termbase-search-terms" hidden>[^<]*</span>')
ATTRIBUTES = re.compile(r"\{ lang=\"[a-z]+\" \}")


@dataclass
class MachinePage:
    url: str
    title: str
    markdown: str
    slug: str | None


def expand_includes(root: Path, markdown: str) -> str:
    """Each `--8<-- "file.py:section"` line replaced by that section, at the line's indentation,
    exactly as pymdownx.snippets pastes it into the page."""
    return grammar.expand_includes(markdown, lambda ref: sections.text(root, ref))


def plain_markdown(markdown: str) -> str:
    """The few HTML tags the site's markers write, reduced to their text."""
    return HTML_TAG.sub("", ATTRIBUTES.sub("", SEARCH_ONLY.sub("", markdown)))


def write(site_dir: str, pages: list[MachinePage], base: TermBase, lang: str, site_url: str) -> None:
    root = Path(site_dir)
    for page in pages:
        target = root / page.url / "index.md" if page.url else root / "index.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.markdown, encoding="utf-8")
    url = site_url if site_url.endswith("/") else site_url + "/"
    entries = sorted((p for p in pages if p.slug in base.terms), key=lambda p: p.title.lower())
    others = [p for p in pages if p.slug not in base.terms]
    lines = [f"# {base.ui['site_name'][lang]}", "", f"> {base.t('llms_description', lang, 'page')}", "",
             f"## {base.nav_label('Glossary', lang)}", ""]
    for page in entries:
        short = " ".join(str(base.terms[page.slug][lang]["short"]).split())
        lines.append(f"- [{page.title}]({url}{page.url}index.md): {short}")
    lines += ["", f"## {base.t('llms_pages', lang, 'page')}", ""]
    lines += [f"- [{page.title}]({url}{page.url}index.md)" for page in others]
    (root / "llms.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
