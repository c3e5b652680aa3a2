"""The terminological description of every name of a concept (issue 29): its status, its term
type, its grammatical gender, its geographical usage, and its attestations, as TBX-Basic
(ISO 30042) defines them. A term record gives them per language under `names:`, keyed by the
name; quotations live in termbase/data/attestations/<lang>.yml, keyed by the same name."""

from __future__ import annotations

# status in a record -> TBX-Basic administrativeStatus; where the name must sit in the record
STATUSES = {
    "preferred": ("preferredTerm-admn-sts", "term"),
    "admitted": ("admittedTerm-admn-sts", "synonyms"),
    "deprecated": ("deprecatedTerm-admn-sts", "avoid"),
    "superseded": ("supersededTerm-admn-sts", "avoid"),
}
TYPES = ("fullForm", "acronym", "abbreviation", "shortForm", "variant", "phrase")  # TBX-Basic termType
# The genders each language has, and the TBX-Basic value (plus a note where the picklist lacks it).
GENDERS = {
    "es": {"masculine": ("masculine", None), "feminine": ("feminine", None)},
    "da": {"common": ("other", "fælleskøn (common gender)"), "neuter": ("neuter", None)},
}
NUMBERS = ("singular", "plural")  # a name's `number:`; singular unless it says plural


def agreement_kind(gender, number=None) -> str:
    """The key of ui.yml's `agreement` for a name: its gender, and `plural` for a plural one."""
    return f"{gender} plural" if number == "plural" else str(gender)
ATTESTED = ("es", "da")  # languages whose preferred terms need an attestation or `proposed: true`
ATTESTATION_FIELDS = ("quote", "source", "read")


def names_of(local: dict) -> list[tuple[str, str]]:
    """(name, the field it sits in) for every name of one language block, in order."""
    out = [(str(local["term"]), "term")] if local.get("term") else []
    for field in ("synonyms", "avoid"):
        out += [(str(name), field) for name in local.get(field) or []]
    return out


def described(local: dict) -> list[dict]:
    """Every name of one language block with its description (status, type, gender, usage, proposed)."""
    meta = local.get("names") or {}
    return [{"name": name, "field": field, **(meta.get(name) or {})} for name, field in names_of(local)]


def normalized(name: str) -> str:
    """A name as search compares it: lower case, hyphens as spaces ("Cross-Attention" and
    "cross attention" are one name)."""
    return " ".join(name.lower().replace("-", " ").split())
