"""The term base for translators' tools: TBX (ISO 30042, TBX-Basic), CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from xml.etree import ElementTree as ET

from termbase.core import terminology
from termbase.core.model import TermBase

TBX_NS = "urn:iso:std:iso:30042:ed-2"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
FORMATS = ("tbx", "csv", "json")


def history(base: TermBase) -> dict[str, list[dict]]:
    """slug -> the record's origination and last modification (date, author) from git, one
    `git log` for the whole folder; empty without git history (an exported or copied tree)."""
    folder = base.project.terms_dir
    try:
        log = subprocess.run(["git", "log", "--format=@%as|%an", "--name-only", "--no-renames", "--", "."],
                             cwd=folder, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    commits: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in log.splitlines():
        if line.startswith("@"):
            current = tuple(line[1:].split("|", 1))
        elif line.endswith(".yml") and current:
            commits.setdefault(line.rsplit("/", 1)[-1][:-4], []).append(current)
    out = {}
    for slug, dated in commits.items():  # newest first
        events = [{"type": "origination", "date": dated[-1][0], "responsibility": dated[-1][1]}]
        if len(dated) > 1:
            events.append({"type": "modification", "date": dated[0][0], "responsibility": dated[0][1]})
        out[slug] = events
    return out


def records(base: TermBase) -> list[dict]:
    """One flat record per concept, the shape shared by the three formats."""
    out = []
    changes = history(base)
    for slug, term in sorted(base.terms.items()):
        entry = {
            "id": slug,
            "history": changes.get(slug, []),
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
                "names": [_name(base, lang, item) for item in terminology.described(local)],
            }
        out.append(entry)
    return out


def _name(base: TermBase, lang: str, item: dict) -> dict:
    """One name with its description and its attestations, the same fields in every format."""
    attestations = [{key: str(a[key]) for key in ("quote", "source", "url", "read") if a.get(key)}
                    for a in base.attestations(lang).get(item["name"]) or [] if isinstance(a, dict)]
    return {"term": item["name"], "status": item.get("status"), "type": item.get("type"),
            "gender": item.get("gender"), "number": item.get("number"), "usage": item.get("usage"),
            "proposed": bool(item.get("proposed")), "attestations": attestations}


def to_json(base: TermBase) -> str:
    data = {"languages": list(base.languages), "concepts": records(base)}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_csv(base: TermBase) -> str:
    buffer = io.StringIO()
    columns = ["id", "category", "level"]
    for lang in base.languages:
        columns += [f"term_{lang}", f"synonyms_{lang}", f"avoid_{lang}", f"definition_{lang}", f"names_{lang}"]
    columns.append("history")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for rec in records(base):
        row = [rec["id"], rec["category"], rec["level"]]
        for lang in base.languages:
            local = rec[lang]
            row += [local["term"], "; ".join(local["synonyms"]), "; ".join(local["avoid"]), local["definition"],
                    "; ".join(_csv_name(n) for n in local["names"])]
        row.append("; ".join(f"{e['type']} {e['date']} ({e['responsibility']})" for e in rec["history"]))
        writer.writerow(row)
    return buffer.getvalue()


def _csv_name(name: dict) -> str:
    """`term [status, type, gender, number, usage, proposed|attested: source <url> read date]` in one cell."""
    facts = [name[key] for key in ("status", "type", "gender", "number", "usage") if name.get(key)]
    if name["proposed"]:
        facts.append("proposed")
    for a in name["attestations"]:
        facts.append("attested: " + " ".join(filter(None, (a.get("source"), a.get("url"), a.get("read")))))
    return f"{name['term']} [{', '.join(facts)}]"


def _term_sec(parent, lang: str, name: dict):
    """One termSec as TBX-Basic defines it: termNotes, then the contexts with their sources."""
    sec = ET.SubElement(parent, "termSec")
    ET.SubElement(sec, "term").text = name["term"]
    ET.SubElement(sec, "termNote", type="partOfSpeech").text = "noun"
    if name["type"]:
        ET.SubElement(sec, "termNote", type="termType").text = name["type"]
    if name["status"] in terminology.STATUSES:
        ET.SubElement(sec, "termNote", type="administrativeStatus").text = terminology.STATUSES[name["status"]][0]
    gender = terminology.GENDERS.get(lang, {}).get(name["gender"])
    if gender:
        ET.SubElement(sec, "termNote", type="grammaticalGender").text = gender[0]
    if name["usage"]:
        ET.SubElement(sec, "termNote", type="geographicalUsage").text = name["usage"]
    for a in name["attestations"]:
        group = ET.SubElement(sec, "descripGrp")
        ET.SubElement(group, "descrip", type="context").text = a["quote"]
        source = ", ".join(filter(None, (a.get("source"), a.get("url"))))
        ET.SubElement(group, "admin", type="source").text = f"{source} (read {a['read']})"
    notes = []
    if gender and gender[1]:
        notes.append(f"grammaticalGender: {gender[1]}")
    if name["number"] == "plural":  # TBX-Basic has no grammatical number: a note, as for the gender above
        notes.append("grammaticalNumber: plural")
    if name["proposed"]:
        notes.append("Proposed by this site: no published attestation found.")
    for text in notes:
        ET.SubElement(sec, "note").text = text


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
        for event in rec["history"]:
            group = ET.SubElement(concept, "transacGrp")
            ET.SubElement(group, "transac", type="transactionType").text = event["type"]
            ET.SubElement(group, "date").text = event["date"]
            ET.SubElement(group, "transacNote", type="responsibility").text = event["responsibility"]
        subject = base.ui["categories"][rec["category"]][base.default_language]
        ET.SubElement(concept, "descrip", type="subjectField").text = subject
        for other in rec["related"]:
            ET.SubElement(concept, "ref", type="crossReference", target=other).text = other
        for lang in base.languages:
            local = rec[lang]
            lang_sec = ET.SubElement(concept, "langSec", {XML_LANG: lang})
            ET.SubElement(lang_sec, "descrip", type="definition").text = local["definition"]
            for name in local["names"]:
                _term_sec(lang_sec, lang, name)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(base: TermBase, fmt: str) -> str:
    return {"tbx": to_tbx, "csv": to_csv, "json": to_json}[fmt](base)
