"""One variant of the project, built once per test run (tests/conftest.py: `variant_site`)
instead of three times (issue 25.6): the three changes whose builds tests read, made to one copy.

- an entry scaffolded with `termbase new` and filled in as the contributing page says
  (test_contributions.py: the newcomer's walk-through);
- an English page edited after its translations, in a later commit (test_contributions.py: the
  outdated translation);
- French as a fourth language, its translations placeholders made of the English text
  (test_fourth_language.py: a language is configuration).

History, as the translation status reads it: everything but French is committed on 2026-01-01,
the English edit on 2026-02-01, French on 2026-03-01 (so French is not outdated)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.site.sitetools import LANGS, build_env, copy_project, mkdocs_build

NEW = "fr"  # the fourth language
SCAFFOLDED = "key-padding"  # the entry made with `termbase new`
OUTDATED = "multi-head-attention"  # the entry whose English page changes after its translations
SCAFFOLDED_NAMES = {"en": "key padding", "es": "relleno de claves", "da": "nøgle-padding"}


def termbase_cli(project: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "termbase", *args], cwd=project,
                          capture_output=True, text=True, env=build_env())


def git(project: Path, *args, when: str) -> None:
    env = build_env(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                    GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, env=env)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def fill_scaffold(project: Path) -> None:
    """`termbase new key-padding`, then every placeholder written as a contributor would."""
    made = termbase_cli(project, "new", SCAFFOLDED)
    assert made.returncode == 0, made.stdout + made.stderr
    record = project / f"termbase/data/terms/{SCAFFOLDED}.yml"
    record.write_text(
        "category: mechanism\nlevel: beginner\nrelated: [attention-mask]\nsources: [pytorch-mha]\n"
        "formula:\n  - y = x\ncode:\n  - [snippets/key_padding.py:code, snippets/key_padding.py:demo]\n"
        "en: {term: key padding, short: Padding on the key side.,\n"
        "     names: {key padding: {status: preferred, type: fullForm}}}\n"
        "es: {term: relleno de claves, short: Relleno del lado de las claves.,\n"
        "     names: {relleno de claves: {status: preferred, type: fullForm, gender: masculine, proposed: true}}}\n"
        "da: {term: nøgle-padding, short: Padding på nøglesiden.,\n"
        "     names: {nøgle-padding: {status: preferred, type: fullForm, gender: common, proposed: true}}}\n",
        encoding="utf-8")
    # A sentence in each page's language for every placeholder line (the checker spells them).
    sentences = {"en": "Key padding hides the padded keys.", "es": "El relleno de claves oculta las claves vacías.",
                 "da": "Padding på nøglesiden skjuler de tomme nøgler."}
    # The origin says that the site proposes the Spanish and Danish names (`proposed: true`).
    origins = {"es": "Este sitio no ha encontrado una traducción asentada en textos publicados y propone "
                     "«relleno de claves».",
               "da": "Dette site har ikke fundet et dansk navn i offentliggjorte tekster og foreslår nøgle-padding."}
    for lang, sentence in sentences.items():
        path = project / f"docs/glossary/{SCAFFOLDED}.{lang}.md"
        lines = [(f"1. **{sentence}**" if line.startswith("1. ") else f"   *{sentence}*" if line.startswith("   *")
                  else origins[lang] if lang in origins and "who introduced" in line
                  else sentence) if "TODO(termbase)" in line else line
                 for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    snippet = project / "snippets/key_padding.py"
    snippet.write_text(snippet.read_text(encoding="utf-8").replace("TODO(termbase)", "Filled in"), encoding="utf-8")
    test = project / "tests/test_key_padding.py"
    test.write_text(test.read_text(encoding="utf-8").replace(
        'pytest.fail("TODO(termbase): compare key_padding with torch\'s reference implementation")',
        "assert key_padding(1) == 1"), encoding="utf-8")


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


def add_french(project: Path) -> None:
    config = project / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "languages: [en, es, da]", f"languages: [en, es, da, {NEW}]"), encoding="utf-8")
    ui_path = project / "termbase" / "data" / "ui.yml"
    ui = yaml.safe_load(ui_path.read_text(encoding="utf-8"))
    add_to_mappings(ui)
    ui["language_name"][NEW] = "Français"
    for label, per in (*ui["nav"].items(), *ui["formula_text"].items()):  # keyed by their English
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


def make(dest: Path) -> dict:
    """The variant in `dest/project`, built into `dest/site`; what the tests read of the commands
    run on the way (each as returncode, stdout, stderr)."""
    project = copy_project(dest / "project")
    fill_scaffold(project)
    ran = {"quick": termbase_cli(project, "test", SCAFFOLDED)}
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "all")):
        git(project, *args, when="2026-01-01T00:00:00")
    edit(project / f"docs/glossary/{OUTDATED}.en.md", "## Origin", "## Origin\n\nA new English sentence.\n")
    git(project, "commit", "-qam", "English changed", when="2026-02-01T00:00:00")
    add_french(project)
    git(project, "add", "-A", when="2026-03-01T00:00:00")
    git(project, "commit", "-qm", "French", when="2026-03-01T00:00:00")
    ran["check"] = termbase_cli(project, "check")
    ran["status"] = termbase_cli(project, "status")
    ran["build"] = mkdocs_build(project, dest / "site")
    return {name: {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
            for name, done in ran.items()}
