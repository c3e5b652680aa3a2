"""Turns term-base data into Markdown for a page: the parts of an entry that are the same in
every language (summary box, formula, code, figure, related terms, sources) and the index."""

from __future__ import annotations

import re

from termbase import status
from termbase.benchmarks_page import benchmark_table
from termbase.model import DEFAULT_LANG, LANGS, sources, t, terms, torch_version, ui

MARKER = re.compile(r"^\{\{ (\w+) \}\}$", re.M)


def entry_slug(src_uri: str) -> str | None:
    match = re.fullmatch(r"glossary/([a-z0-9-]+)\.md", src_uri)
    if match and match.group(1) != "index":
        return match.group(1)
    return None


def expand(markdown: str, slug: str | None, lang: str) -> str:
    """Replace `{{ marker }}` lines; an entry page also gets its title from the term base."""
    if slug is not None:
        markdown = f"# {terms()[slug][lang]['term'][:1].upper()}{terms()[slug][lang]['term'][1:]}\n\n{markdown}"

    def one(match: re.Match) -> str:
        name = match.group(1)
        return RENDERERS[name](slug, lang)

    return MARKER.sub(one, markdown)


def summary(slug, lang):
    term = terms()[slug]
    local = term[lang]
    lines = [f'!!! abstract "{t("short", lang)}"', "", f"    {local['short']}", ""]
    facts = [
        f"**{t('category', lang)}:** {ui()['categories'][term['category']][lang]}",
        f"**{t('level', lang)}:** {ui()['levels'][term['level']][lang]}",
    ]
    if local.get("synonyms"):
        facts.append(f"**{t('synonyms', lang)}:** " + ", ".join(local["synonyms"]))
    if local.get("avoid"):
        facts.append(f"**{t('avoid', lang)}:** " + ", ".join(f"~~{w}~~" for w in local["avoid"]))
    if local.get("english_kept"):
        facts.append(f"*{t('english_kept', lang)}*")
    lines += [f"    {fact}  " for fact in facts]
    return "\n".join(lines)


def formula(slug, lang):
    return "\n\n".join(f"$$\n{tex.strip()}\n$$" for tex in terms()[slug]["formula"])


def code_block(refs: list[str]) -> str:
    """One fenced block made of snippet sections, embedded by pymdownx.snippets."""
    body = "\n\n\n".join(f'--8<-- "{ref}"' for ref in refs)  # PEP 8's two blank lines between parts
    return f"```python\n{body}\n```"


def code(slug, lang):
    blocks = [code_block(refs) for refs in terms()[slug]["code"]]
    note = t("verified", lang).format(version=torch_version())
    return "\n\n".join(blocks) + f"\n\n<small>{note}</small>" + notebook_links(slug, lang)


def notebook_links(slug, lang):
    """The notebooks that run this entry's code step by step (`notebooks:` in the term base)."""
    from termbase.notebooks import title

    names = terms()[slug].get("notebooks") or []
    links = " · ".join(f"[{title(name, lang)}](../notebooks/{name}.ipynb)" for name in names)
    return f"\n\n**{t('notebook', lang)}:** {links}" if links else ""


def verified(slug, lang):
    """The note under embedded code on pages that are not entries (FAQ)."""
    return f"<small>{t('verified_page', lang).format(version=torch_version())}</small>"


def figure(slug, lang):
    term = terms()[slug]
    src = f"../assets/figures/{term['figure']}.svg"
    # Linked to itself: on a phone the full-size drawing is one tap away.
    return f"[![{term[lang]['figure_alt']}]({src}){{ .termbase-figure }}]({src})"


def related(slug, lang):
    return "\n".join(
        f"- [{terms()[other][lang]['term']}]({other}.md)" for other in terms()[slug]["related"]
    )


def source_line(source_id: str) -> str:
    src = sources()[source_id]
    who = f"{src['authors']} ({src['year']}). " if src.get("authors") else ""
    return f"- {who}[{src['title']}]({src['url']})"


def sources_list(slug, lang):
    return "\n".join(source_line(s) for s in terms()[slug]["sources"])


def glossary_index(slug, lang):
    """All terms side by side, the page's language first, each linked to its entry."""
    order = [lang] + [other for other in LANGS if other != lang]
    head = "| " + " | ".join(ui()["language_name"][x] for x in order) + f" | {t('category', lang)} |"
    rows = [head, "|" + "---|" * (len(order) + 1)]
    for entry_slug_, term in sorted(terms().items(), key=lambda kv: kv[1][lang]["term"].lower()):
        cells = [f"[{term[lang]['term']}]({entry_slug_}.md)"] + [term[x]["term"] for x in order[1:]]
        cells.append(ui()["categories"][term["category"]][lang])
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def translation_status(slug, lang):
    """Coverage per language, then every page whose translation lags its English source."""
    head = f"| {t('language', lang)} | {t('translated', lang)} | {t('outdated_count', lang)} |\n|---|---|---|"
    rows = [
        f"| {ui()['language_name'][other]} | {n['translated']} / {n['pages']} | {n['outdated']} |"
        for other, n in status.summary().items()
    ]
    lagging = [s for s in status.page_statuses_cached() if s.outdated or not s.exists]
    listing = "\n".join(
        f"- {ui()['language_name'][s.lang]}: `{s.page}` "
        + (f"({t('outdated_count', lang).lower()})" if s.exists else f"({t('missing', lang)})")
        for s in lagging
    ) or t("all_current", lang)
    return "\n".join([head, *rows]) + "\n\n" + listing


def outdated_notice(page_path: str, lang: str, english_url: str) -> str:
    """A notice on top of a translation older than its English source, or ''."""
    if lang == DEFAULT_LANG or not status.is_outdated(page_path, lang):
        return ""
    return f'!!! warning "{t("outdated", lang)}"\n\n    [{t("outdated_link", lang)}]({english_url})\n\n'


def exports(slug, lang):
    """Links to the term base in the three exchange formats, published at the site root."""
    # The glossary index sits one level below its language root.
    return " · ".join(f"[{label}](../termbase.{fmt})" for fmt, label in
                      (("tbx", "TBX (ISO 30042)"), ("csv", "CSV"), ("json", "JSON")))


# Pygments wraps every name and every run of spaces in a span; Material colours names
# (`.n`) with the plain code colour and leaves whitespace (`.w`) unstyled, so these spans only
# add bytes: about a fifth of an entry page.
PLAIN_CODE_SPAN = re.compile(r'<span class="[nw]">([^<]*)</span>')


def slim_code(page_html: str) -> str:
    return PLAIN_CODE_SPAN.sub(r"\1", page_html)


RENDERERS = {
    "verified": verified,
    "translation_status": translation_status,
    "exports": exports,
    "summary": summary,
    "formula": formula,
    "code": code,
    "figure": figure,
    "related": related,
    "sources": sources_list,
    "glossary_index": glossary_index,
    "benchmark_table": benchmark_table,
}
