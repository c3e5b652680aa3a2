"""The terminology page of one language ({{ terminology_table }}): every name of every entry in
that language, with its status, term type, gender and attestation (issue 29). The statuses are
explained in the page's own prose (docs/terminology.<lang>.md)."""

from __future__ import annotations

import html

from termbase.core import collation, terminology
from termbase.core.model import TermBase


def status_words(base: TermBase, lang: str, local: dict, name: str, in_lang: str) -> str:
    """'preferred, attested' for one name of `lang`, in the words of `in_lang`."""
    meta = (local.get("names") or {}).get(name) or {}
    words = []
    if meta.get("status") in terminology.STATUSES:
        words.append(base.t(meta["status"], in_lang, "terminology"))
    if base.attestations(lang).get(name):
        words.append(base.t("attested", in_lang, "terminology"))
    elif meta.get("proposed"):
        words.append(base.t("proposed", in_lang, "terminology"))
    if lang == in_lang:  # the words agree with the name they follow (ui.yml `agreement`)
        kind = terminology.agreement_kind(meta.get("gender"), meta.get("number"))
        forms = ((base.ui.get("agreement") or {}).get(lang) or {}).get(kind) or {}
        words = [forms.get(word, word) for word in words]
    return ", ".join(words)


def _evidence(base: TermBase, lang: str, name: str, meta: dict) -> str:
    quotes = []
    for item in base.attestations(lang).get(name) or []:
        if not isinstance(item, dict):
            continue
        source = html.escape(str(item.get("source", "")))
        if item.get("url"):
            source = f'<a href="{html.escape(str(item["url"]))}">{source}</a>'
        quotes.append(f"«{html.escape(str(item.get('quote', '')))}» ({source}; "
                      f"{base.t('read', lang, 'terminology')} {item.get('read')})")
    if quotes:
        return "<br>".join(quotes)
    if meta.get("proposed"):
        return f"*{base.t('proposed', lang, 'terminology')}*"
    return "—"


def terminology_table(base: TermBase, lang: str) -> str:
    t = lambda key: base.t(key, lang, "terminology")  # noqa: E731
    has_gender = lang in terminology.GENDERS
    columns = [t("term"), t("entry"), t("status"), t("type")] + ([t("gender")] if has_gender else []) + [t("evidence")]
    rows = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    alphabet = base.t("alphabet", lang)
    entries = sorted(base.terms.items(), key=lambda kv: collation.sort_key(kv[1][lang]["term"], alphabet))
    for slug, record in entries:
        local = record[lang]
        for item in terminology.described(local):
            name = item["name"]
            anchor = f'<span id="{slug}"></span>' if item["field"] == "term" else ""
            cells = [anchor + (f"**{html.escape(name)}**" if item["field"] == "term" else html.escape(name)),
                     f"[{html.escape(local['term'])}](glossary/{slug}.md)",
                     status_words(base, lang, local, name, lang),
                     t(item["type"]) if item.get("type") in terminology.TYPES else ""]
            if has_gender:
                cells.append(t(item["gender"]) if item.get("gender") in terminology.GENDERS[lang] else "")
            cells.append(_evidence(base, lang, name, item))
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"
