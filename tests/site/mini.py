"""A small project for the tests of the machinery: the process model, the cache, serve, the
verified blocks, a notebook that fails. `make(dest)` writes it from the real sources at test time
(no committed copy of any content: one home per fact), trimmed to a few entries so that one
full build of it takes seconds instead of the real site's tens of seconds.

What it keeps, and why:
- mkdocs.yml, pyproject.toml, requirements.txt, overrides/, termbase/ (code and data but the term
  records): the same machinery, plugin options and three languages as the real site. The nav is
  rewritten to the pages that exist here.
- The term records and pages of ENTRIES: softmax (the entry the machinery tests edit and
  break: its page, its record, its `demo` block and tests/test_softmax.py), attention (whose
  Danish page shows softmax's tooltip) and scaled-dot-product-attention. Their `related` lists
  keep only each other; a link in a kept page to a page that is not here becomes its text.
- The snippet modules the kept records' code blocks cite, with their tests/test_<module>.py
  (each block's EXPECTED_OUTPUT) and tests/snippet_blocks.py, tests/__init__.py.
- Pages: the home page, the glossary index, the A–Z index, the notebooks index (the machinery
  builds them from the records), and the terminology and notation pages (every entry links to
  them); the pages listed in PAGES.
- Two notebooks, NOTEBOOKS (with the _-prefixed helpers they import): the smallest, which the
  serve tests read, and a second that a build with a failing cell still executes; and the cache's executed
  notebooks and blocks (.termbase-cache without its stored pages), as a copied project has them.

What it drops: every other entry, page and notebook; the claims' tests (tests/claims cites pages not
here, so the kept pages lose their `{{ claim:... }}` marks); the models, configuration-explainer,
claims, benchmarks, FAQ, contributing, style-guide and translation-status pages, which test
their own content against the built real site (tests/site/test_models_page.py and the like),
not the machinery; benchmarks/ (read only by the benchmarks page).
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import yaml

from termbase.core import mathml
from tests.site.sitetools import ROOT, _ignored

ENTRIES = ("softmax", "attention", "scaled-dot-product-attention")
# The smallest notebook, which the serve tests read, and the one a failing-cell test sees run.
NOTEBOOKS = ("cross-attention-encoder-decoder", "multi-head-attention-step-by-step")
PAGES = ("index", "a-z", "terminology", "notation", "glossary/index", "notebooks/index")
COPIED = ("mkdocs.yml", "requirements.txt", "pyproject.toml", "overrides", "termbase", ".termbase-cache")
CLAIM = re.compile(r" ?\{\{ claim:[\w-]+ \}\}")  # tests/claims is not copied: its tests cite pages not here
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s#]+\.(?:md|ipynb))(#[^)\s]*)?\)")


def copy(template: Path, dest: Path) -> Path:
    """A private copy of a made project, for a test that breaks something on purpose."""
    shutil.copytree(template, dest, symlinks=True)
    return dest


def make(dest: Path) -> Path:
    """Writes the small project into `dest` (made if missing) and returns `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in COPIED:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=_mini_ignored)
        elif src.exists():
            shutil.copy2(src, dest / part)
    data = dest / "termbase" / "data"
    _terms(data / "terms")
    docs = dest / "docs"
    shutil.copytree(ROOT / "docs" / "assets", docs / "assets", ignore=_mini_ignored)
    for page in [*PAGES, *(f"glossary/{slug}" for slug in ENTRIES)]:
        for src in (ROOT / "docs").glob(f"{page}.*.md"):
            (docs / src.relative_to(ROOT / "docs")).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, docs / src.relative_to(ROOT / "docs"))
    for src in (ROOT / "docs" / "notebooks").iterdir():
        if src.name.startswith("_") or src.stem in NOTEBOOKS:
            shutil.copy2(src, docs / "notebooks" / src.name)
    _code(dest)
    _unlink_dropped(docs)
    _data(dest)
    _nav(dest / "mkdocs.yml")
    return dest


def _mini_ignored(folder: str, names: list[str]) -> set[str]:
    ignored = _ignored(folder, names)
    if Path(folder).name == "data" and Path(folder).parent.name == "termbase":
        ignored.add("terms")  # written by _terms
    return ignored


def _terms(terms: Path) -> None:
    """The records of ENTRIES, their `related` lists kept to each other."""
    terms.mkdir()
    shutil.copy2(ROOT / "termbase" / "data" / "terms" / "README.md", terms / "README.md")
    for slug in ENTRIES:
        text = (ROOT / "termbase" / "data" / "terms" / f"{slug}.yml").read_text(encoding="utf-8")
        related = yaml.safe_load(text).get("related") or []
        kept = ", ".join(s for s in related if s in ENTRIES)
        text = re.sub(r"(?m)^related: \[.*\]$", f"related: [{kept}]", text, count=1)
        (terms / f"{slug}.yml").write_text(text, encoding="utf-8")


def _code(dest: Path) -> None:
    """The snippet modules the kept records and notebook cite, and their tests."""
    sources = [dest / "termbase" / "data" / "terms" / f"{slug}.yml" for slug in ENTRIES]
    sources += list((dest / "docs").rglob("*.md")) + list((dest / "docs" / "notebooks").glob("*.py"))
    modules, found = set(), {"__init__"}
    while found - modules:  # a snippet section may embed another module's (common_mistakes: masks)
        modules |= found
        for path in [*sources, *(ROOT / "snippets" / f"{m}.py" for m in modules)]:
            found |= set(re.findall(r"snippets/(\w+)\.py", path.read_text(encoding="utf-8")))
    (dest / "snippets").mkdir()
    (dest / "tests").mkdir()
    for name in ("__init__.py", "snippet_blocks.py"):
        shutil.copy2(ROOT / "tests" / name, dest / "tests" / name)
    for module in sorted(modules):
        shutil.copy2(ROOT / "snippets" / f"{module}.py", dest / "snippets" / f"{module}.py")
        test = ROOT / "tests" / f"test_{module}.py"
        if test.exists():
            shutil.copy2(test, dest / "tests" / test.name)


def _unlink_dropped(docs: Path) -> None:
    """A link to a page that is not in the small project becomes its text."""
    for page in docs.rglob("*.md"):
        text = page.read_text(encoding="utf-8")

        def keep(match, page=page):
            target = (page.parent / match[2]).resolve()
            neutral = target.with_suffix("")  # a page's languages, or a notebook's source
            if target.exists() or neutral.with_suffix(".py").exists() or any(neutral.parent.glob(f"{neutral.name}.*.md")):
                return match[0]
            return match[1]

        page.write_text(CLAIM.sub("", LINK.sub(keep, text)), encoding="utf-8")
    for notebook in (docs / "notebooks").glob("*.py"):
        notebook.write_text(CLAIM.sub("", notebook.read_text(encoding="utf-8")), encoding="utf-8")


def _data(dest: Path) -> None:
    """The data that names entries, kept to ENTRIES: no models (their table is on the models
    page, dropped), the attestations of the kept terms' names, the word lists as these texts need them."""
    data = dest / "termbase" / "data"
    (data / "models.yml").write_text("models: []\n", encoding="utf-8")
    (data / "config_keys.yml").write_text("keys: {}\n", encoding="utf-8")
    (data / "model_configs.yml").write_text("{}\n", encoding="utf-8")
    records = {slug: yaml.safe_load((data / "terms" / f"{slug}.yml").read_text(encoding="utf-8")) for slug in ENTRIES}
    for path in (data / "attestations").glob("*.yml"):
        names = {name for record in records.values() for name in (record.get(path.stem) or {}).get("names") or {}}
        names |= set(ENTRIES)
        kept = {k: v for k, v in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items() if k in names}
        path.write_text(yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    # the words of the kept records' formulas only (the check names an entry no formula uses)
    used = {run for record in records.values() for tex in record.get("formula") or [] for run in mathml.text_runs(tex)}
    ui = yaml.safe_load((data / "ui.yml").read_text(encoding="utf-8"))
    ui["formula_text"] = {word: per for word, per in ui["formula_text"].items() if word in used}
    ui["formula_labels"] = [label for label in ui["formula_labels"] if label in used]
    (data / "ui.yml").write_text(yaml.safe_dump(ui, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    _words(dest)


def _words(dest: Path) -> None:
    """The word lists as the check wants them for these texts: a word a dropped page needed is
    removed, and a word the real site accepts only through a dropped record's names is added."""
    from termbase.core import check
    from termbase.core.project import load

    for _ in range(2):
        changes: dict[Path, tuple[set, set]] = {}
        for problem in check.run(load(dest)):
            unknown = re.match(r'"(.+)" is not an? \w+ word', problem.what)
            listed = re.search(r"add it to (termbase/data/words/\w+\.txt)", problem.fix)
            if unknown and listed:
                changes.setdefault(dest / listed[1], (set(), set()))[0].add(unknown[1])
            elif problem.shown.startswith("termbase/data/words/") and "is not needed" in problem.what:
                changes.setdefault(dest / problem.shown, (set(), set()))[1].add(problem.line)
        if not changes:
            return
        for path, (added, dropped) in changes.items():
            lines = [line for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if n not in dropped]
            path.write_text("\n".join(lines + sorted(added)) + "\n", encoding="utf-8")


def _nav(config: Path) -> None:
    """The nav of mkdocs.yml, kept to the pages that exist here."""
    text = config.read_text(encoding="utf-8")
    start = text.index("\nnav:\n") + 1
    end = text.index("\n\n", start)
    nav = ("nav:\n  - Home: index.md\n  - Glossary: glossary/index.md\n  - A–Z: a-z.md\n"
           "  - Notation: notation.md\n  - Notebooks:\n      - notebooks/index.md\n"
           + "".join(f"      - notebooks/{name}.ipynb\n" for name in NOTEBOOKS) + "  - Contributing:\n      - Terminology: terminology.md")
    config.write_text(text[:start] + nav + text[end:], encoding="utf-8")


if __name__ == "__main__":  # python -m tests.site.mini DEST: writes it, builds it cold and warm, prints seconds
    from tests.site.sitetools import mkdocs_build

    made = make(Path(sys.argv[1]))
    for run in ("cold", "warm"):
        started = time.monotonic()
        done = mkdocs_build(made, made.parent / f"site-{run}")
        print(f"{run} build: {time.monotonic() - started:.1f} s, exit {done.returncode}")
        if done.returncode:
            print(done.stdout[-3000:], done.stderr[-3000:])
