"""termbase.tbx is TBX-Basic as LTAC publishes it: valid against the core structure RelaxNG
schema (TBXcoreStructV03.rng) and the dialect's Schematron rules (TBX-Basic_DCA.sch, XSLT 2,
compiled by SchXslt and run by Saxon), vendored under tests/fixtures/tbx-basic/ (see its README)."""

import csv
import functools
import io
import json
from xml.etree import ElementTree as ET

import pytest
from lxml import etree
from saxonche import PySaxonProcessor

from termbase.core import export
from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT, ROOT

SCHEMAS = ROOT / "tests" / "fixtures" / "tbx-basic"
NS = {"t": "urn:iso:std:iso:30042:ed-2", "svrl": "http://purl.oclc.org/dsdl/svrl"}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


@functools.cache
def tbx() -> str:
    return export.to_tbx(TermBase(PROJECT))


def relaxng_errors(text: str) -> list[str]:
    schema = etree.RelaxNG(etree.parse(str(SCHEMAS / "TBXcoreStructV03.rng")))
    ok = schema.validate(etree.fromstring(text.encode("utf-8")))
    return [] if ok else [str(error) for error in schema.error_log]


@functools.cache
def _processor():
    return PySaxonProcessor(license=False)


def schematron_errors(text: str) -> list[str]:
    """The failed asserts of TBX-Basic_DCA.sch, as SVRL reports them."""
    proc = _processor()
    xslt = proc.new_xslt30_processor()
    compiled = xslt.transform_to_string(source_file=str(SCHEMAS / "TBX-Basic_DCA.sch"),
                                        stylesheet_file=str(SCHEMAS / "schxslt" / "pipeline-for-svrl.xsl"))
    validator = xslt.compile_stylesheet(stylesheet_text=compiled)
    svrl = ET.fromstring(validator.transform_to_string(xdm_node=proc.parse_xml(xml_text=text)))
    assert svrl.tag == "{http://purl.oclc.org/dsdl/svrl}schematron-output"
    return [f"{fail.get('location')}: {''.join(fail.itertext()).strip()}"
            for fail in svrl.iterfind("svrl:failed-assert", NS)]


def test_the_export_is_valid_tbx_basic():
    assert relaxng_errors(tbx()) == []
    assert schematron_errors(tbx()) == []


def test_the_export_carries_the_terminological_fields():
    root = ET.fromstring(tbx().encode("utf-8"))
    concept = root.find("t:text/t:body/t:conceptEntry[@id='multi-head-attention']", NS)
    secs = {s.get(XML_LANG): s for s in concept.findall("t:langSec", NS)}

    def notes(lang, term):
        sec = next(s for s in secs[lang].findall("t:termSec", NS) if s.findtext("t:term", namespaces=NS) == term)
        return {n.get("type"): n.text for n in sec.findall("t:termNote", NS)}, [n.text for n in sec.findall("t:note", NS)]

    es, es_notes = notes("es", "atención multicabezal")
    assert es == {"partOfSpeech": "noun", "termType": "fullForm", "administrativeStatus": "deprecatedTerm-admn-sts",
                  "grammaticalGender": "feminine"}
    da, da_notes = notes("da", "multi-head attention")
    assert da["grammaticalGender"] == "other" and "grammaticalGender: fælleskøn (common gender)" in da_notes
    assert da["administrativeStatus"] == "preferredTerm-admn-sts"
    assert "Proposed by this site: no published attestation found." in da_notes
    assert notes("en", "MHA")[0]["termType"] == "acronym" and "grammaticalGender" not in notes("en", "MHA")[0]
    # the record's history, from git (the suite runs in a checkout)
    events = [g.findtext("t:transac", namespaces=NS) for g in concept.findall("t:transacGrp", NS)]
    assert events[0] == "origination" and set(events) <= {"origination", "modification"}
    assert all(g.findtext("t:transacNote[@type='responsibility']", namespaces=NS)
               for g in concept.findall("t:transacGrp", NS))


def test_csv_and_json_carry_the_same_fields():
    base = TermBase(PROJECT)
    concept = next(c for c in json.loads(export.to_json(base))["concepts"] if c["id"] == "multi-head-attention")
    avoided = next(n for n in concept["es"]["names"] if n["term"] == "atención multicabezal")
    assert avoided == {"term": "atención multicabezal", "status": "deprecated", "type": "fullForm",
                       "gender": "feminine", "number": None, "usage": None, "proposed": False, "attestations": []}
    row = next(r for r in csv.DictReader(io.StringIO(export.to_csv(base))) if r["id"] == "multi-head-attention")
    assert "atención multicabezal [deprecated, fullForm, feminine]" in row["names_es"]
    assert "multi-head attention [preferred, fullForm, common, proposed]" in row["names_da"]
    # a plural name says so in both, and in TBX as a note (TBX-Basic has no grammatical number)
    weights = next(c for c in json.loads(export.to_json(base))["concepts"] if c["id"] == "attention-weights")
    assert next(n for n in weights["es"]["names"] if n["term"] == "pesos de atención")["number"] == "plural"
    row = next(r for r in csv.DictReader(io.StringIO(export.to_csv(base))) if r["id"] == "attention-weights")
    assert "pesos de atención [preferred, fullForm, masculine, plural" in row["names_es"]
    assert "<note>grammaticalNumber: plural</note>" in export.to_tbx(base)


BROKEN = {
    # the dialect's picklists are Schematron rules: the core RelaxNG schema leaves values free
    "a status outside the picklist": ("<termNote type=\"administrativeStatus\">preferredTerm-admn-sts<",
                                      "<termNote type=\"administrativeStatus\">recommendedTerm-admn-sts<",
                                      "schematron", "/administrativeStatus/ type may be"),
    "Danish common gender written as such": ("<termNote type=\"grammaticalGender\">other<",
                                             "<termNote type=\"grammaticalGender\">common<",
                                             "schematron", "/grammaticalGender/ type may be"),
    # the structure is the RelaxNG schema's
    "a term section without its term": ("<term>atención multicabeza</term>", "", "relaxng", "term"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_tbx_fails_validation(kind):
    old, new, validator, message = BROKEN[kind]
    assert old in tbx()
    broken = tbx().replace(old, new, 1)
    errors = (schematron_errors if validator == "schematron" else relaxng_errors)(broken)
    assert any(message in error for error in errors), errors



def test_a_misplaced_status_fails_both_schemas():
    """A status given to a language section instead of a term: the core structure has no termNote
    there, and the dialect allows termNote only at term level."""
    definition = '<descrip type="definition">'
    broken = tbx().replace(definition, '<termNote type="administrativeStatus">preferredTerm-admn-sts</termNote>'
                           + definition, 1)
    assert broken != tbx()
    assert relaxng_errors(broken)
    assert any("only allowed at the termSec level" in error for error in schematron_errors(broken))
