"""What termbase adds to a page's HTML is reused only when nothing it is made from has changed
(termbase/site/page_cache.py): keyed per page by the HTML MkDocs rendered, its source, the
tooltips and labels of its language, the download names of its blocks and termbase's code; a warm
build writes the same site byte for byte."""

import filecmp
import re
from types import SimpleNamespace

from termbase.run.cache import Cache
from termbase.site.page_cache import PageCache, labels
from termbase.site.tooltips import Tooltips
from tests.site.sitetools import mkdocs_build

REUSED = re.compile(r"termbase: (\w+): the additions to (\d+) page\(s\) reused")


def _differences(a, b) -> list[str]:
    """Paths under `a` and `b` that are missing on one side or differ in content."""
    found, stack = [], [filecmp.dircmp(a, b)]
    while stack:
        cmp = stack.pop()
        found += cmp.left_only + cmp.right_only + cmp.funny_files
        found += [name for name in cmp.common_files if not filecmp.cmp(f"{cmp.left}/{name}", f"{cmp.right}/{name}",
                                                                       shallow=False)]
        stack += cmp.subdirs.values()
    return found


class _Base:
    """What the additions read of a term base: two terms in three languages, and the labels."""

    languages = ["en", "es", "da"]

    def __init__(self):
        self.terms = {slug: {lang: {"term": f"{slug}-{lang}", "short": f"{slug} short {lang}", "synonyms": []}
                             for lang in self.languages} for slug in ("softmax", "attention")}

    def t(self, name, lang, group="labels"):
        return f"{group}.{name}.{lang}"


def _cache(cache, base, lang, names=None):
    return PageCache(cache, lang, CONFIG, Tooltips(base, lang), names or {}, labels(base, lang))


CONFIG = SimpleNamespace(extra={"termbase": {"lang": "en"}}, site_url="http://127.0.0.1:8000/", use_directory_urls=True)
PAGE = SimpleNamespace(url="glossary/softmax/", file=SimpleNamespace(src_uri="glossary/softmax.md", abs_src_path=None))
OTHER = SimpleNamespace(url="glossary/attention/", file=SimpleNamespace(src_uri="glossary/attention.md",
                                                                        abs_src_path=None))
BLOCK = '<div class="language-python highlight"><pre><span></span><code>{}\n</code></pre></div>'


def test_a_page_reuses_its_additions_only_for_the_same_html_and_inputs(tmp_path):
    base, cache = _Base(), Cache(tmp_path / "cache")
    first = _cache(cache, base, "en")
    assert first.get(PAGE, "<p>softmax</p>") is None
    first.put(PAGE, "<p>softmax</p>", "<p>softmax, with tooltips</p>", {"softmax.py": "print(1)\n"})
    again = _cache(cache, base, "en")
    assert again.get(PAGE, "<p>softmax</p>") == {"html": "<p>softmax, with tooltips</p>",
                                                 "downloads": {"softmax.py": "print(1)\n"}}
    assert again.get(PAGE, "<p>softmax, edited</p>") is None, "the page's own edit"
    assert again.get(OTHER, "<p>softmax</p>") is None, "another page with the same HTML"
    assert _cache(cache, base, "da").get(PAGE, "<p>softmax</p>") is None, "another language"
    base.terms["attention"]["en"]["short"] = "edited"
    assert _cache(cache, base, "en").get(PAGE, "<p>softmax</p>") is None, "a tooltip of its language edited"


def _keys(base, page=PAGE, html="<p>x</p>", names=None):
    return {lang: _cache(Cache("/nonexistent"), base, lang, names)._entry(page, html) for lang in base.languages}


def test_a_short_definition_renews_only_its_language():
    base = _Base()
    before = _keys(base)
    base.terms["attention"]["da"]["short"] = "en anden kort definition"
    after = _keys(base)
    assert after["da"] != before["da"] and after["es"] == before["es"] and after["en"] == before["en"]
    base.terms["attention"]["es"]["synonyms"] = ["atención"]
    assert _keys(base)["es"] != after["es"] and _keys(base)["da"] == after["da"]


def test_a_term_name_renews_its_own_page_in_every_language_and_the_others_in_its_language():
    base = _Base()
    before, other = _keys(base), _keys(base, OTHER)
    base.terms["softmax"]["da"]["term"] = "softmax-funktion"  # on its own page: no word inside it is linked
    after, other_after = _keys(base), _keys(base, OTHER)
    assert all(after[lang] != before[lang] for lang in base.languages)
    assert other_after["da"] != other["da"] and other_after["es"] == other["es"]


def test_a_snippet_renews_only_the_pages_that_show_it():
    base = _Base()
    a, b = BLOCK.format("print(1)"), BLOCK.format("print(2)")
    names = {"print(1)": "softmax-one.py", "print(2)": "attention-two.py"}
    before = _keys(base, PAGE, a, names), _keys(base, OTHER, b, names)
    renamed = {**names, "print(1)": "softmax-renamed.py"}
    after = _keys(base, PAGE, a, renamed), _keys(base, OTHER, b, renamed)
    assert after[0]["en"] != before[0]["en"] and after[1] == before[1]


def test_a_notebook_page_is_keyed_by_its_source_file(tmp_path):
    notebook = tmp_path / "page.ipynb"
    notebook.write_text('{"cells": []}', encoding="utf-8")
    page = SimpleNamespace(url="notebooks/page/", file=SimpleNamespace(src_uri="notebooks/page.ipynb",
                                                                       abs_src_path=str(notebook)))
    before = _keys(_Base(), page)
    notebook.write_text('{"cells": [{"cell_type": "code", "metadata": {"termbase_fold": ["a.py"]}}]}',
                        encoding="utf-8")
    assert _keys(_Base(), page)["en"] != before["en"]


def test_a_warm_build_reuses_the_additions_and_writes_the_same_site(mini_project, tmp_path):
    project = mini_project  # tests/site/mini.py: the same machinery, a few entries
    first = mkdocs_build(project, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    warm = mkdocs_build(project, tmp_path / "warm")
    assert warm.returncode == 0, warm.stderr
    reused = {lang: int(n) for lang, n in REUSED.findall(warm.stdout + warm.stderr)}
    pages = len(list((tmp_path / "first").glob("glossary/*/index.html")))
    assert len(reused) == 3 and min(reused.values()) > pages, warm.stderr
    assert _differences(tmp_path / "first", tmp_path / "warm") == []
    # One Danish short definition edited: its tooltips are on every Danish page, on no other.
    record = project / "termbase" / "data" / "terms" / "softmax.yml"
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    short = next(i for i in range(lines.index("da:\n"), len(lines)) if lines[i].startswith("  short: "))
    lines[short] = lines[short].rstrip().removesuffix('"') + ' Den bruges overalt."\n'
    record.write_text("".join(lines), encoding="utf-8")
    edited = mkdocs_build(project, tmp_path / "edited")
    assert edited.returncode == 0, edited.stdout + edited.stderr
    after = {lang: int(n) for lang, n in REUSED.findall(edited.stdout + edited.stderr)}
    assert after.get("en") == reused["en"] and after.get("es") == reused["es"], edited.stderr
    assert after.get("da", 0) < reused["da"], edited.stderr


def test_the_notebook_pages_style_sheet_and_download_label_are_in_the_key(tmp_path):
    """Notebook pages inline docs/notebooks/_notebook.css and print `notebook_download`."""
    base, cache = _Base(), Cache(tmp_path / "cache")
    css = tmp_path / "docs" / "notebooks" / "_notebook.css"
    css.parent.mkdir(parents=True)
    css.write_text(".jp-Cell { margin: 0 }\n", encoding="utf-8")
    config = SimpleNamespace(**vars(CONFIG), docs_dir=str(tmp_path / "docs"))

    def made():
        return PageCache(cache, "en", config, Tooltips(base, "en"), {}, labels(base, "en"))

    made().put(PAGE, "<p>softmax</p>", "<p>softmax, styled</p>", {})
    assert made().get(PAGE, "<p>softmax</p>") is not None
    css.write_text(".jp-Cell { margin: 1px }\n", encoding="utf-8")
    assert made().get(PAGE, "<p>softmax</p>") is None, "the style sheet edited"
    assert "labels.notebook_download" in labels(base, "en")
