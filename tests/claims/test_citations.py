"""The failure message of a claim names every sentence that cites it: on the pages and in the
notebooks' prose cells (docs/notebooks/*.py)."""

import pytest

from tests.claims import citations, claim


def test_citations_include_the_notebooks():
    found = citations("mha-packed-in-proj")
    assert any(line.startswith("docs/notebooks/multi-head-attention-step-by-step.py:")
               for line in found)
    assert any(line.startswith("docs/glossary/") for line in found)


def test_a_failing_claim_names_the_notebook_sentences_too():
    def broken():
        raise ValueError("pretend torch changed")

    # applied by hand, not as a decorator: `termbase check` counts decorated tests
    with pytest.raises(AssertionError, match=r"docs/notebooks/[a-z-]+\.py:\d+"):
        claim("mha-packed-in-proj")(broken)()
