"""The "Verified" note is always true: a block that raises or prints anything but its declared
output never reaches site/; the build names the snippet section, the pages and the first line
that differs. Also the set-up: the tool outside its environment says how to set up."""

import subprocess
import sys

import pytest

from termbase.core.model import TermBase
from termbase.site.pages import Pages
from tests.site.sitetools import PROJECT, ROOT, demo_line, mkdocs_build


def line_of(code: str) -> int:
    """The line of snippets/softmax.py that holds `code` (where a broken demo raises)."""
    lines = (ROOT / "snippets" / "softmax.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if code in line)


def break_demo(project, old, new):
    module = project / "snippets" / "softmax.py"
    text = module.read_text(encoding="utf-8")
    assert old in text, old
    module.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("old,new,expected", [
    ("ones = torch.ones(2)\n", "ones = torch.ones(2) * 2\n",
     "snippets/softmax.py:demo: block 'demo' of snippets/softmax.py printed other than its expected output, "
     "line 4: expected 'rows sum to 1: True', printed 'rows sum to 1: False' - fix the code or "
     f"tests/test_softmax.py:{demo_line()} (EXPECTED_OUTPUT['demo'])"),
    ("ones = torch.ones(2)\n", "ones = torch.ones(3) @ torch.ones(2)\n",
     f"snippets/softmax.py:demo (line {line_of('ones = torch.ones(2)')}): block 'demo' of snippets/softmax.py "
     "raised: RuntimeError"),
], ids=["prints False", "raises"])
def test_a_block_that_does_not_do_what_its_test_declares_never_reaches_the_site(mini_project, tmp_path, old, new,
                                                                               expected):
    project = mini_project
    break_demo(project, old, new)
    site = tmp_path / "site"
    built = mkdocs_build(project, site)
    log = built.stdout + built.stderr
    assert built.returncode != 0
    assert expected in log, log
    assert "docs/glossary/softmax.en.md" in log and "docs/glossary/softmax.da.md" in log, "it names the pages"
    assert "nothing unverified is published" in log
    assert not site.exists()


def test_under_serve_the_page_shows_the_failure_instead_of_the_block():
    base = TermBase(PROJECT)
    refs = tuple(base.terms["softmax"]["code"][0])
    pages = Pages(base, "da", status=None, home="/da/", failed_blocks={refs: "snippets/softmax.py:demo: printed False"})
    markdown = pages.code_block(list(refs))
    assert markdown.startswith('!!! failure "') and "printed False" in markdown and "```python" not in markdown


def test_outside_its_environment_the_tool_says_how_to_set_up():
    # -S: no site-packages, as with a python that has none of the requirements installed.
    result = subprocess.run([sys.executable, "-S", "-m", "termbase", "check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "set up first: python3 -m venv .venv" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
