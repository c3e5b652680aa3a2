"""The term base for translators' tools: TBX (ISO 30042, TBX-Basic), CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from xml.etree import ElementTree as ET

from termbase.core.model import TermBase

TBX_NS = "urn:iso:std:iso:30042:ed-2"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
FORMATS = ("tbx", "csv", "json")


def records(base: TermBase) -> list[dict]:
    """One flat record per concept, the shape shared by the three formats."""
    out = []
    for slug, term in sorted(base.terms.items()):
        entry = {
            "id": slug,
            "category": term["category"],
            "level": term["level"],
            "related": list(term.get("related") or []),
            "sources": [base.sources[s]["url"] for s in term.get("sources") or []],
        }
        for lang in base.languages:
            local = term[lang]
            entry[lang] = {
                "term": local["term"],
                "definition": local["short"],
                "synonyms": list(local.get("synonyms") or []),
                "avoid": list(local.get("avoid") or []),
                "english_kept": bool(local.get("english_kept")),
            }
        out.append(entry)
    return out


def to_json(base: TermBase) -> str:
    data = {"languages": list(base.languages), "concepts": records(base)}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_csv(base: TermBase) -> str:
    buffer = io.StringIO()
    columns = ["id", "category", "level"]
    for lang in base.languages:
        columns += [f"term_{lang}", f"synonyms_{lang}", f"avoid_{lang}", f"definition_{lang}"]
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for rec in records(base):
        row = [rec["id"], rec["category"], rec["level"]]
        for lang in base.languages:
            local = rec[lang]
            row += [local["term"], "; ".join(local["synonyms"]), "; ".join(local["avoid"]), local["definition"]]
        writer.writerow(row)
    return buffer.getvalue()


def _term_sec(parent, text: str, status: str, term_type: str | None = None):
    sec = ET.SubElement(parent, "termSec")
    ET.SubElement(sec, "term").text = text
    ET.SubElement(sec, "termNote", type="partOfSpeech").text = "noun"
    if term_type:
        ET.SubElement(sec, "termNote", type="termType").text = term_type
    ET.SubElement(sec, "termNote", type="administrativeStatus").text = status


def to_tbx(base: TermBase) -> str:
    ET.register_namespace("", TBX_NS)
    root = ET.Element("tbx", {"type": "TBX-Basic", "style": "dca", XML_LANG: base.default_language, "xmlns": TBX_NS})
    header = ET.SubElement(root, "tbxHeader")
    file_desc = ET.SubElement(header, "fileDesc")
    source = ET.SubElement(file_desc, "sourceDesc")
    ET.SubElement(source, "p").text = ("Attention Glossary term base: attention in transformers, "
                                       + "/".join(base.languages) + ".")
    body = ET.SubElement(ET.SubElement(root, "text"), "body")
    for rec in records(base):
        concept = ET.SubElement(body, "conceptEntry", id=rec["id"])
        subject = base.ui["categories"][rec["category"]][base.default_language]
        ET.SubElement(concept, "descrip", type="subjectField").text = subject
        for other in rec["related"]:
            ET.SubElement(concept, "ref", type="crossReference", target=other).text = other
        for lang in base.languages:
            local = rec[lang]
            lang_sec = ET.SubElement(concept, "langSec", {XML_LANG: lang})
            ET.SubElement(lang_sec, "descrip", type="definition").text = local["definition"]
            _term_sec(lang_sec, local["term"], "preferredTerm-admn-sts")
            for synonym in local["synonyms"]:
                kind = "acronym" if synonym.isupper() else "variant"
                _term_sec(lang_sec, synonym, "admittedTerm-admn-sts", kind)
            for avoided in local["avoid"]:
                _term_sec(lang_sec, avoided, "deprecatedTerm-admn-sts")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(base: TermBase, fmt: str) -> str:
    return {"tbx": to_tbx, "csv": to_csv, "json": to_json}[fmt](base)
