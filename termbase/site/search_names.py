"""search/names.json: every name of every entry, in every language, and the entry it names,
and every `config.json` key of termbase/data/config_keys.yml with the entry that explains it.

Search ranks pages by their words, so a page that quotes a term often (a notebook about it, a
longer entry whose name contains it) can come before the entry itself. The search worker
(docs/assets/javascripts/workers/search-stem.js) reads this file and puts the entry first when
the query is one of its names, typed in any of the site's languages, or a key a reader met in a
model's configuration (a key is a setting, not a name of the concept: the term base does not
list it among the names)."""

from __future__ import annotations

import json
from pathlib import Path

from termbase.core.model import TermBase
from termbase.core.terminology import normalized  # as the worker compares names


def names(base: TermBase, lang: str) -> dict[str, str]:
    """name -> the entry's location in this language's site. The page language's own terms win
    a clash, then the other languages' terms, then synonyms, then config.json keys."""
    order = [lang] + [other for other in base.languages if other != lang]
    out: dict[str, str] = {}
    for field in ("term", "synonyms"):
        for other in order:
            for slug, record in sorted(base.terms.items()):
                local = record.get(other) or {}
                found = [local.get("term")] if field == "term" else list(local.get("synonyms") or [])
                for name in found:
                    if name:
                        out.setdefault(normalized(str(name)), f"glossary/{slug}/")
    for key, about in sorted(base.config_keys.items()):
        if isinstance(about, dict) and about.get("entry") in base.terms:
            out.setdefault(normalized(key), f"glossary/{about['entry']}/")
    return out


def write(site_dir: str, base: TermBase, lang: str) -> None:
    target = Path(site_dir) / "search" / "names.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(names(base, lang), ensure_ascii=False, sort_keys=True), encoding="utf-8")
