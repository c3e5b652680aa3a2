"""Claims: sentences on the site that say how PyTorch behaves, each asserted by one test here.

A page cites a claim right after the sentence with `{{ claim:<id> }}`; the build renders a
small "tested on torch <version>" mark there. Each id has exactly one test, decorated with
`@claim("<id>")`. When a claim stops holding (after a torch upgrade, say), its test fails
with the pages and lines of every sentence that cites it: those sentences became false.
"""

from __future__ import annotations

import functools
from pathlib import Path

from termbase.core import markdown

ROOT = Path(__file__).resolve().parents[2]


def citations(claim_id: str) -> list[str]:
    """`docs/<page>:<line>: <text>` for every line of every page, and of every notebook source
    (docs/notebooks/*.py, whose prose cells cite claims too), that cites `claim_id`."""
    found = []
    pages = sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "docs" / "notebooks").glob("*.py"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        lines = text.splitlines()
        for number in sorted({n for n, cited in markdown.citations(text) if cited == claim_id}):
            found.append(f"{page.relative_to(ROOT)}:{number}: {markdown.strip_citations(lines[number - 1]).strip()}")
    return found


def claim(claim_id: str):
    """Mark a test as the one that asserts claim `claim_id`."""

    def decorate(test):
        @functools.wraps(test)
        def asserted(*args, **kwargs):
            try:
                return test(*args, **kwargs)
            except Exception as exc:
                import torch

                cited = citations(claim_id) or ["(no page cites it)"]
                raise AssertionError(
                    f"claim '{claim_id}' does not hold on torch {torch.__version__}; "
                    "these sentences are now false:\n  " + "\n  ".join(cited)
                ) from exc

        asserted.claim_id = claim_id
        return asserted

    return decorate
