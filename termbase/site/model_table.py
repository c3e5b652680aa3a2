"""`{{ model_table }}`: which attention each well-known open model uses, rendered in the page's
language from termbase/data/models.yml, where every value has a source (or is null: not
published). The same numbers in every language; the words come from ui.yml."""

from __future__ import annotations

import re

from termbase.core.check.models import MODEL_COLUMNS as COLUMNS, MODEL_GROUPS as GROUPS
from termbase.core.model import TermBase, read_yaml


def models(base: TermBase) -> list[dict]:
    path = base.project.data_dir / "models.yml"
    return (read_yaml(path) or {}).get("models") or [] if path.is_file() else []


def _cell(base: TermBase, lang: str, cell, link) -> tuple[str, str | None, str | None]:
    """(the value as the page writes it, its footnote id, the note that qualifies it): a cell
    holds only its value and a footnote mark, so that every row stays one or two lines high."""
    words = base.ui["models"]
    if not isinstance(cell, dict) or cell.get("value") is None:
        text = words["not_published"][lang]
    else:
        value = cell["value"]
        if value == "none":
            text = words["none"][lang]
        elif isinstance(value, str) and re.fullmatch(r"\d+ [a-z]+( : \d+ [a-z]+)+", value):
            text = " : ".join(_layers(words, lang, part) for part in value.split(" : "))
        elif isinstance(cell.get("factor"), (int, float)) and not isinstance(cell.get("factor"), bool):
            text = f"{value} ×{base.number(cell['factor'], lang)}"  # rope_type and factor
        elif value is True or value is False:
            text = words["yes" if value else "no"][lang]
        elif isinstance(value, str) and re.fullmatch(r"\d+\.\d+/√\d+", value):  # a score scale such as 1.874/√192
            number, _, root = value.partition("/")
            text = f"{base.number(float(number), lang)}/{root}"
        elif isinstance(value, str) and value in base.terms:
            text = link(value)
        elif isinstance(value, str) and value in words:
            text = words[value][lang]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            text = base.number(value, lang)
        else:
            text = str(value)
    note = None
    if isinstance(cell, dict) and cell.get("note"):
        note = cell["note"] if lang == base.default_language else cell.get("note_" + lang, cell["note"])
    source = cell.get("source") if isinstance(cell, dict) and cell.get("source") in base.sources else None
    return text.replace("|", "\\|"), source, note


def _layers(words: dict, lang: str, part: str) -> str:
    """"3 linear" in the page's language: the kind's word agrees with the count (ui.yml's
    layers_<kind>_one and layers_<kind>_many)."""
    count, kind = part.split(" ")
    return f"{count} " + words[f"layers_{kind}_{'one' if count == '1' else 'many'}"][lang]


def model_table(base: TermBase, lang: str, src_uri: str) -> str:
    """The table, one row per model, each cell footnoted with its source (and, where a value
    needs one, a note in the footnote); then the entries each model's row touches."""
    depth = src_uri.count("/")
    glossary = "../" * depth + "glossary/"

    def link(slug):
        return f"[{base.name(slug, lang)}]({glossary}{slug}.md)"

    words = base.ui["models"]
    footnotes: dict[str, str] = {}
    tables = []
    for number, group in enumerate(GROUPS, 1):  # two tables, so that each fits the page's width
        head = "| " + " | ".join([words["model"][lang], *(words[c][lang] for c in group)]) + " |"
        rows = [head, "|" + "---|" * (len(group) + 1)]
        for model in models(base):
            cells = [f"**{model['name']}** ({model.get('year', '')})"]
            for column in group:
                text, source, note = _cell(base, lang, model.get(column), link)
                if note:  # a note of its own, with the source after it
                    key = f"{model['id']}-{column}"
                    footnotes[key] = note[:1].upper() + note[1:] + (". " + base.citation(source, lang) if source else "")
                    text += f" [^{key}]"
                elif source:
                    footnotes.setdefault(source, base.citation(source, lang))
                    text += f" [^{source}]"
                cells.append(text)
            rows.append("| " + " | ".join(cells) + " |")
        tables.append(f"**{words[f'table_{number}'][lang]}**\n\n"
                      '<div class="termbase-models" markdown>\n\n' + "\n".join(rows) + "\n\n</div>")
    entries = [f"- **{model['name']}**: " + ", ".join(link(slug) for slug in model.get("entries") or [] if slug in base.terms)
               for model in models(base) if model.get("entries")]
    return ("\n\n".join(tables) + f"\n\n**{words['entries'][lang]}**\n\n" + "\n".join(entries) + "\n\n"
            + "\n".join(f"[^{key}]: {text}" for key, text in footnotes.items()))


def config_keys(base: TermBase, lang: str, src_uri: str) -> str:
    """The Hugging Face configuration keys that shape attention (termbase/data/config_keys.yml),
    in alphabetical order: what each means in the page's language, and the entry that explains it."""
    keys = base.config_keys
    glossary = "../" * src_uri.count("/") + "glossary/"
    words = base.ui["models"]
    rows = [f"| {words['config_key'][lang]} | {words['meaning'][lang]} | {words['entry'][lang]} |", "|---|---|---|"]
    for key in sorted(keys):
        about = keys[key]
        link = f"[{base.name(about['entry'], lang)}]({glossary}{about['entry']}.md)"
        rows.append(f"| `{key}` | {str(about[lang]).replace('|', chr(92) + '|')} | {link} |")
    return "\n".join(rows)
