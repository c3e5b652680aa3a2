"""A language is configuration: a copy of the project with French added (its translations are
placeholders: the English text) builds, and the switcher, hreflang, the search language, the
404 page, the checker and the translation status all pick it up, with no change to any code.
The copy is tests/site/variant.py's, built once per run with two other changes."""

import json
import re
import subprocess
import sys

from tests.site.sitetools import build_env, copy_project
from tests.site.variant import NEW, add_french


def test_the_checker_passes_and_asks_for_the_new_language(variant_site, tmp_path):
    check = variant_site[2]["check"]
    assert check.returncode == 0, check.stdout
    missing = copy_project(tmp_path / "missing", cache=False)
    add_french(missing)
    (missing / "docs" / "glossary" / f"softmax.{NEW}.md").unlink()
    check = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=missing, capture_output=True, text=True,
                           env=build_env())
    assert f"no {NEW} translation of glossary/softmax.md - add docs/glossary/softmax.{NEW}.md" in check.stdout


def test_the_new_language_is_a_whole_site(variant_site):
    site = variant_site[1]
    page = (site / NEW / "glossary" / "softmax" / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{NEW}"' in page
    assert f'href="/{NEW}/glossary/softmax/" hreflang="{NEW}" lang="{NEW}" class="md-select__link"' in page
    assert f'<link rel=" alternate" hreflang="{NEW}" href="http://127.0.0.1:8000/{NEW}/glossary/softmax/">' in page
    english = (site / "glossary" / "softmax" / "index.html").read_text(encoding="utf-8")
    assert f'hreflang="{NEW}"' in english, "every other language links to it too"
    index = json.loads((site / NEW / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert index["config"]["lang"] == [NEW]
    assert "<h1>" in (site / NEW / "404.html").read_text(encoding="utf-8")
    root_404 = (site / "404.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="termbase-not-found" type="application/json">(.*?)</script>', root_404).group(1))
    assert NEW in data["languages"]
    status = (site / "status" / "index.html").read_text(encoding="utf-8")
    assert "Français" in status
    assert "Français" in variant_site[2]["status"].stdout
