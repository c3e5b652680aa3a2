"""The claims page quotes, for each claim, the sentences that cite it: whole sentences, so a
reader sees what is claimed without opening the page it comes from."""

import re

import pytest

from termbase.core import claims
from termbase.core.model import TermBase
from tests.site.sitetools import LANGS, PROJECT

BASE = TermBase(PROJECT)


@pytest.mark.parametrize(("lang", "text", "sentence"), [
    ("en", "Vaswani et al. (2017) scale it, e.g. by 1/8, as SDPA does. {{ claim:x }}",
     "Vaswani et al. (2017) scale it, e.g. by 1/8, as SDPA does."),
    ("da", "Det er to FLOP pr. multiplikation og addition, dvs. fire i alt. {{ claim:x }}",
     "Det er to FLOP pr. multiplikation og addition, dvs. fire i alt."),
    ("es", "Con otras: si se pasa a flex_attention, se produce un error. {{ claim:x }}",
     "Con otras: si se pasa a flex_attention, se produce un error."),
    ("en", "One sentence. Another one ends here. {{ claim:x }}", "Another one ends here."),
    ("en", "- A list item: it ends here.\n- `nn.Linear` stores W transposed\n  as it says. {{ claim:x }}",
     "`nn.Linear` stores W transposed as it says."),
    ("en", "Then 257 becomes 256 and 1001 becomes\n1000. {{ claim:x }}", "Then 257 becomes 256 and 1001 becomes 1000."),
])
def test_a_cited_sentence_is_whole_across_abbreviations_colons_and_semicolons(lang, text, sentence):
    abbreviations = BASE.style(lang).get("abbreviations")
    assert abbreviations, f"termbase/data/style/{lang}.yml lists its abbreviations"
    assert [(c, s) for _, c, s in claims.cited_sentences(text, abbreviations)] == [("x", sentence)]


def test_no_cited_sentence_on_the_site_is_a_fragment():
    """A fragment starts with a lower-case word ("multiplikation og addition ..."); a sentence
    may start with code, math or a name written in lower case, such as bfloat16."""
    fragments = []
    for lang in LANGS:
        abbreviations = BASE.style(lang).get("abbreviations") or ()
        for path in sorted(PROJECT.docs.rglob(f"*.{lang}.md")):
            for line, claim_id, sentence in claims.cited_sentences(path.read_text(encoding="utf-8"), abbreviations):
                first = re.match(r"[*_\[(«“\"¿¡]*([`$]|\w+)", sentence)
                if not first or (first.group(1).isalpha() and first.group(1)[0].islower()):
                    fragments.append(f"{PROJECT.shown(path)}:{line}: {claim_id}: {sentence[:60]!r}")
    assert not fragments, "\n".join(fragments)


@pytest.mark.parametrize(("translated", "line", "hint"), [
    ([(5, "a"), (9, "c")], 9, "the first difference: 'b', cited at line 12 of the en text"),  # b replaced
    ([(5, "a")], 5, "the first difference: 'b', cited at line 12 of the en text"),  # b missing at the end
    ([], 1, "the first difference: 'a', cited at line 4 of the en text"),  # none cited
    ([(5, "a"), (8, "b"), (9, "z")], 9, "'z' is not cited in the en text"),  # one too many
])
def test_a_translation_citing_other_claims_is_named_at_its_first_difference(translated, line, hint):
    """The rule that every language cites the same claims in the same order names the line of
    the translation's first differing citation and the line of the English one it should match."""
    from termbase.core import check
    from termbase.core.check import claims as claim_rules

    report = check.Report(PROJECT)
    paths = {"en": PROJECT.docs / "x.en.md", "es": PROJECT.docs / "x.es.md"}
    claim_rules._same_in_every_language(PROJECT, paths, {"en": [(4, "a"), (12, "b")], "es": translated}, report)
    assert [(p.shown, p.line) for p in report] == [("docs/x.es.md", line)]
    assert report[0].what.endswith(hint) and "cites the claims" in report[0].what
