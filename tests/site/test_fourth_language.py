"""A language is configuration: a copy of the project with French added (its translations are
placeholders made here: the English text) builds, and the switcher, hreflang, the search
language, the 404 page, the checker and the translation status all pick it up, with no change
to any code."""

import json
import re
import subprocess
import sys

import pytest
import yaml

from tests.site.sitetools import LANGS, build_env, copy_project, mkdocs_build

NEW = "fr"


def add_to_mappings(node, source="en"):
    """Give every {en: ..., es: ..., da: ...} mapping of a YAML document a French entry."""
    if isinstance(node, dict):
        if source in node and all(lang in node for lang in LANGS):
            # A label English leaves empty (it only shows on translations) still needs its
            # French text: the Spanish one stands in for it.
            node[NEW] = node[source] or node["es"]
        for value in node.values():
            add_to_mappings(value, source)
    elif isinstance(node, list):
        for value in node:
            add_to_mappings(value, source)


def add_french(project):
    config = project / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "languages: [en, es, da]", f"languages: [en, es, da, {NEW}]"), encoding="utf-8")
    ui_path = project / "termbase" / "data" / "ui.yml"
    ui = yaml.safe_load(ui_path.read_text(encoding="utf-8"))
    add_to_mappings(ui)
    ui["language_name"][NEW] = "Français"
    for label, per in ui["nav"].items():
        per[NEW] = label
    ui_path.write_text(yaml.safe_dump(ui, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for record_path in (project / "termbase" / "data" / "terms").glob("*.yml"):
        record = yaml.safe_load(record_path.read_text(encoding="utf-8"))
        record[NEW] = dict(record["en"])
        record_path.write_text(yaml.safe_dump(record, allow_unicode=True, sort_keys=False), encoding="utf-8")
    keys_path = project / "termbase" / "data" / "config_keys.yml"
    keys = yaml.safe_load(keys_path.read_text(encoding="utf-8"))
    for about in keys["keys"].values():
        about[NEW] = about["en"]
    keys_path.write_text(yaml.safe_dump(keys, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for page in (project / "docs").rglob("*.en.md"):
        page.with_name(page.name.replace(".en.md", f".{NEW}.md")).write_text(page.read_text(encoding="utf-8"),
                                                                         encoding="utf-8")
    for notebook in (project / "docs" / "notebooks").glob("[!_]*.py"):
        text = notebook.read_text(encoding="utf-8")
        cells = re.split(r"(?m)^(?=# %%)", text)
        out = []
        for cell in cells:
            out.append(cell)
            if cell.startswith('# %% [markdown] lang="en"'):
                out.append(cell.replace('lang="en"', f'lang="{NEW}"', 1))
        text = "".join(out)
        text = re.sub(r'(# %%[^\n]*alt=)(\{.*\})', lambda m: m.group(1) + json.dumps(
            {**json.loads(m.group(2)), NEW: json.loads(m.group(2))["en"]}, ensure_ascii=False), text)
        notebook.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def french(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("fourth") / "project")
    add_french(project)
    site = project.parent / "site"
    built = mkdocs_build(project, site)
    assert built.returncode == 0, built.stdout + built.stderr
    return project, site


def test_the_checker_passes_and_asks_for_the_new_language(french, tmp_path):
    project, _ = french
    check = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project, capture_output=True, text=True,
                           env=build_env())
    assert check.returncode == 0, check.stdout
    missing = copy_project(tmp_path / "missing", cache=False)
    add_french(missing)
    (missing / "docs" / "glossary" / f"softmax.{NEW}.md").unlink()
    check = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=missing, capture_output=True, text=True,
                           env=build_env())
    assert f"no {NEW} translation of glossary/softmax.md - add docs/glossary/softmax.{NEW}.md" in check.stdout


def test_the_new_language_is_a_whole_site(french):
    project, site = french
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
    cli = subprocess.run([sys.executable, "-m", "termbase", "status"], cwd=project, capture_output=True, text=True,
                         env=build_env())
    assert "Français" in cli.stdout
