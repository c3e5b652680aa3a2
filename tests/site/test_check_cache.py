"""The check keeps the problems of its per-file rules per file (termbase/core/check/filecache.py):
the output is the same, problem for problem and in order, whether they were found now or
reused; an edit to one page re-checks that page's per-file rules only."""

from pathlib import Path

import pytest
import yaml


from termbase.core import check
from termbase.core.check import filecache
from termbase.core.project import load
from tests.site import mini

PLANTED = ("\nEn formel, der ikke kan læses: $\\frac{a}{$ og [et link](ingen-side.md).\n"
           "\nEn krydsopmærksomhed, som stilguiden ikke vil have, heller ikke skrevet KRYDSOPMÆRKſOMHED.\n")


@pytest.fixture(scope="module")
def project(mini_template, tmp_path_factory):
    """The small project (tests/site/mini.py): the same rules on a few pages."""
    root = mini.copy(mini_template, tmp_path_factory.mktemp("check-cache") / "project")
    page = root / "docs" / "glossary" / "softmax.da.md"
    page.write_text(page.read_text(encoding="utf-8") + PLANTED, encoding="utf-8")
    return load(root)


def _lines(report) -> list[str]:
    return [str(problem) for problem in report]


def test_the_cached_check_says_what_the_uncached_one_says(project, tmp_path):
    plain = _lines(check.run(project, spelling=False))
    assert any("softmax.da.md" in line and "formula does not parse" in line for line in plain), plain
    assert any("softmax.da.md" in line and "ingen-side.md" in line for line in plain), plain
    assert any("softmax.da.md" in line and '"krydsopmærksomhed"' in line for line in plain), plain
    assert any("softmax.da.md" in line and '"KRYDSOPMÆRKſOMHED"' in line for line in plain), plain  # re.I's ſ
    store = filecache.Store(tmp_path / "files")
    cold = _lines(check.run(project, spelling=False, store=store))
    assert store.checked and not store.reused
    warm_store = filecache.Store(tmp_path / "files")
    warm = _lines(check.run(project, spelling=False, store=warm_store))
    assert warm_store.reused and not warm_store.checked
    assert cold == plain and warm == plain


def test_an_edited_page_alone_is_checked_again(project, tmp_path):
    first = filecache.Store(tmp_path / "files")
    check.run(project, spelling=False, store=first)
    page = project.docs / "glossary" / "attention.en.md"
    original = page.read_text(encoding="utf-8")
    try:
        page.write_text(original + "\nOne more line, with a bad formula: $\\sqrt{$.\n", encoding="utf-8")
        store = filecache.Store(tmp_path / "files")
        edited = _lines(check.run(project, spelling=False, store=store))
        assert store.checked == [project.shown(page)]
        assert len(store.reused) == len(first.checked) - 1 > 10
        assert edited == _lines(check.run(project, spelling=False))
        assert any("attention.en.md" in line and "formula does not parse" in line for line in edited)
    finally:
        page.write_text(original, encoding="utf-8")


def test_a_page_edited_after_its_prose_lines_were_kept_is_read_again(project, tmp_path):
    """The language rules read each page's prose lines from the store (check/language.py:
    `_stored_page_lines`), keyed by the page's text: a form to avoid written after a cached
    run is reported, and gone again when the edit is undone."""
    check.run(project, spelling=False, store=filecache.Store(tmp_path / "files"))
    page = project.docs / "glossary" / "attention.da.md"
    original = page.read_text(encoding="utf-8")
    try:
        page.write_text(original + "\nEt fremadkoblet netværk efter hvert lag.\n", encoding="utf-8")
        edited = _lines(check.run(project, spelling=False, store=filecache.Store(tmp_path / "files")))
        assert any("attention.da.md" in line and '"fremadkoblet netværk"' in line for line in edited), edited
        assert edited == _lines(check.run(project, spelling=False))
    finally:
        page.write_text(original, encoding="utf-8")
    undone = _lines(check.run(project, spelling=False, store=filecache.Store(tmp_path / "files")))
    assert not any("fremadkoblet" in line for line in undone)


def test_an_edited_snippet_checks_again_only_the_pages_that_embed_it(project, tmp_path):
    page = project.docs / "glossary" / "attention.es.md"
    snippet = project.root / "snippets" / "softmax.py"
    originals = {path: path.read_text(encoding="utf-8") for path in (page, snippet)}
    try:
        page.write_text(originals[page] + '\n```text\n--8<-- "snippets/softmax.py:code"\n```\n', encoding="utf-8")
        check.run(project, spelling=False, store=filecache.Store(tmp_path / "files"))
        snippet.write_text(originals[snippet] + "\n# one more comment\n", encoding="utf-8")
        store = filecache.Store(tmp_path / "files")
        check.run(project, spelling=False, store=store)
        assert store.checked == [project.shown(page)]
        snippet.write_text(originals[snippet].replace("[start:code]", "[start:body]")
                           .replace("[end:code]", "[end:body]"), encoding="utf-8")
        store = filecache.Store(tmp_path / "files")
        found = _lines(check.run(project, spelling=False, store=store))
        assert project.shown(page) in store.checked
        assert any("attention.es.md" in line and "section 'code' is not marked" in line for line in found)
        assert found == _lines(check.run(project, spelling=False))
    finally:
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")


def test_the_store_keeps_nothing_of_a_failed_write(tmp_path):
    store = filecache.Store(tmp_path / "file-not-folder")
    (tmp_path / "file-not-folder").write_text("", encoding="utf-8")
    store.put("key", [["a", 1, "b", "c"]])
    assert store.get("key") is None


def test_a_copy_of_the_project_reuses_what_the_original_found(project, tmp_path):
    """The key holds paths relative to the project's root: copies share entries (the tests'
    broken copies do, tests/site/test_contributions.py), and say what the original says."""
    first = filecache.Store(tmp_path / "files")
    original = _lines(check.run(project, spelling=False, store=first))
    copy = load(mini.copy(project.root, tmp_path / "copy"))
    store = filecache.Store(tmp_path / "files")
    copied = _lines(check.run(copy, spelling=False, store=store))
    assert store.reused and not store.checked
    assert copied == original == _lines(check.run(copy, spelling=False))


def test_a_warm_check_reads_each_pages_prose_lines_from_the_store(project, tmp_path, monkeypatch):
    """The language rules' lines come back from the store (check/language.py:
    `_stored_page_lines`), not made again: the speed-up is real, and says the same."""
    from termbase.core.check import language

    check.run(project, spelling=False, store=filecache.Store(tmp_path / "files"))
    expected = _lines(check.run(project, spelling=False))
    language._page_lines.cache_clear()

    def made_again(text):
        raise AssertionError("a page's prose lines were made again, not read from the store")

    monkeypatch.setattr(language, "_page_lines", made_again)
    assert _lines(check.run(project, spelling=False, store=filecache.Store(tmp_path / "files"))) == expected


def test_a_copy_for_checking_carries_what_the_check_keeps(tmp_path, monkeypatch):
    """copy_project(cache=False) (tests/site/sitetools.py) takes the check's folders of the
    cache, not the executed blocks: a check of the copy reuses hunspell's answers and the store."""
    from tests.site import sitetools

    fake = tmp_path / "root"
    for folder in (*sitetools.CHECK_CACHE, "blocks", "notebooks"):
        (fake / ".termbase-cache" / folder).mkdir(parents=True)
        (fake / ".termbase-cache" / folder / "entry.json").write_text("{}", encoding="utf-8")
    (fake / "docs").mkdir()
    (fake / "docs" / "index.en.md").write_text("# Home\n", encoding="utf-8")
    monkeypatch.setattr(sitetools, "ROOT", fake)
    copy = sitetools.copy_project(tmp_path / "copy", cache=False)
    assert sorted(path.name for path in (copy / ".termbase-cache").iterdir()) == sorted(sitetools.CHECK_CACHE)
    assert all((copy / ".termbase-cache" / folder / "entry.json").is_file() for folder in sitetools.CHECK_CACHE)
    assert (copy / "docs" / "index.en.md").is_file()


def test_a_new_decimal_sign_checks_the_pages_formulas_again(project, tmp_path):
    """A page's formulas are checked with its language's decimal sign (ui.yml), which is part
    of the key of the page's kept problems: changing the sign checks them again."""
    page, ui = project.docs / "glossary" / "attention.es.md", project.data_dir / "ui.yml"
    originals = {path: path.read_text(encoding="utf-8") for path in (page, ui)}
    data = yaml.safe_load(originals[ui])
    assert data["labels"]["decimal_separator"]["es"] == ","
    try:
        page.write_text(originals[page] + "\nUn número: $0{,}5$.\n", encoding="utf-8")
        before = _lines(check.run(project, spelling=False, store=filecache.Store(tmp_path / "files")))
        assert not any("attention.es.md" in line and "writes the number" in line for line in before), before
        data["labels"]["decimal_separator"]["es"] = "."
        ui.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        after = _lines(check.run(project, spelling=False, store=filecache.Store(tmp_path / "files")))
        assert any("attention.es.md" in line and "writes the number 0{,}5" in line for line in after), after
        assert after == _lines(check.run(project, spelling=False))
    finally:
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
