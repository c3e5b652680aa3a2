"""`{{ model_table }}`: which attention each well-known open model uses, rendered in the page's
language from termbase/data/models.yml, where every value has a source (or is null: not
published). The same numbers in every language; the words come from ui.yml."""

from __future__ import annotations

from termbase.core.model import TermBase, read_yaml

COLUMNS = ("attention", "query_heads", "kv_heads", "head_dim", "positions", "rope_theta", "sliding_window",
           "soft_capping", "qk_norm")


def models(base: TermBase) -> list[dict]:
    path = base.project.data_dir / "models.yml"
    return (read_yaml(path) or {}).get("models") or [] if path.is_file() else []


def _cell(base: TermBase, lang: str, column: str, cell, link) -> str:
    words = base.ui["models"]
    if not isinstance(cell, dict) or cell.get("value") is None:
        text = words["not_published"][lang]
    else:
        value = cell["value"]
        if value == "none":
            text = words["none"][lang]
        elif value is True or value is False:
            text = words["yes" if value else "no"][lang]
        elif isinstance(value, str) and value in base.terms:
            text = link(value)
        elif isinstance(value, str) and value in words:
            text = words[value][lang]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            text = base.number(value, lang)
        else:
            text = str(value)
    if isinstance(cell, dict) and cell.get("note"):
        text += f" ({cell['note']})" if lang == base.default_language else f" ({cell.get('note_' + lang, cell['note'])})"
    if isinstance(cell, dict) and cell.get("source") in base.sources:
        text += f" [^{cell['source']}]"
    return text.replace("|", "\\|")


def model_table(base: TermBase, lang: str, src_uri: str) -> str:
    """The table, one row per model, each cell footnoted with its source; links to the entries."""
    depth = src_uri.count("/")
    glossary = "../" * depth + "glossary/"

    def link(slug):
        return f"[{base.name(slug, lang)}]({glossary}{slug}.md)"

    words = base.ui["models"]
    head = "| " + " | ".join([words["model"][lang], *(words[c][lang] for c in COLUMNS), words["entries"][lang]]) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 2)]
    used = []
    for model in models(base):
        cells = [f"**{model['name']}** ({model.get('year', '')})"]
        for column in COLUMNS:
            cell = model.get(column)
            cells.append(_cell(base, lang, column, cell, link))
            if isinstance(cell, dict) and cell.get("source") in base.sources and cell["source"] not in used:
                used.append(cell["source"])
        cells.append(", ".join(link(slug) for slug in model.get("entries") or [] if slug in base.terms))
        rows.append("| " + " | ".join(cells) + " |")
    notes = []
    for source_id in used:
        src = base.sources[source_id]
        who = f"{src['authors']} ({src['year']}). " if src.get("authors") else ""
        notes.append(f"[^{source_id}]: {who}[{base.source_title(source_id, lang)}]({src['url']})")
    return "\n".join(rows) + "\n\n" + "\n".join(notes)
