"""What termbase adds to a page's HTML is reused only when nothing it is made from has changed
(termbase/site/page_cache.py): keyed per page by the HTML MkDocs rendered and by the term base,
the snippets and termbase's code; a warm build writes the same site byte for byte."""

import filecmp
import re
from types import SimpleNamespace

from termbase.run.cache import Cache
from termbase.site.page_cache import PageCache
from tests.site.sitetools import copy_project, mkdocs_build

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


def _project(tmp_path):
    for name in ("data/terms/softmax.yml", "snippets/softmax.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n", encoding="utf-8")
    return SimpleNamespace(data_dir=tmp_path / "data", snippets=tmp_path / "snippets")


CONFIG = SimpleNamespace(extra={"termbase": {"lang": "en"}}, site_url="http://127.0.0.1:8000/", use_directory_urls=True)
PAGE = SimpleNamespace(url="glossary/softmax/", file=SimpleNamespace(src_uri="glossary/softmax.md"))
OTHER = SimpleNamespace(url="glossary/attention/", file=SimpleNamespace(src_uri="glossary/attention.md"))


def test_a_page_reuses_its_additions_only_for_the_same_html_and_inputs(tmp_path):
    project, cache = _project(tmp_path), Cache(tmp_path / "cache")
    first = PageCache(cache, project, "en", CONFIG)
    assert first.get(PAGE, "<p>softmax</p>") is None
    first.put(PAGE, "<p>softmax</p>", "<p>softmax, with tooltips</p>", {"softmax.py": "print(1)\n"})
    again = PageCache(cache, project, "en", CONFIG)
    assert again.get(PAGE, "<p>softmax</p>") == {"html": "<p>softmax, with tooltips</p>",
                                                 "downloads": {"softmax.py": "print(1)\n"}}
    assert again.get(PAGE, "<p>softmax, edited</p>") is None, "the page's own edit"
    assert again.get(OTHER, "<p>softmax</p>") is None, "another page with the same HTML"
    assert PageCache(cache, project, "da", CONFIG).get(PAGE, "<p>softmax</p>") is None, "another language"
    (project.data_dir / "terms" / "softmax.yml").write_text("x: 2\n", encoding="utf-8")
    assert PageCache(cache, project, "en", CONFIG).get(PAGE, "<p>softmax</p>") is None, \
        "a record edited: every tooltip may have changed"
    (project.data_dir / "terms" / "softmax.yml").write_text("x: 1\n", encoding="utf-8")
    (project.snippets / "softmax.py").write_text("x = 2\n", encoding="utf-8")
    assert PageCache(cache, project, "en", CONFIG).get(PAGE, "<p>softmax</p>") is None, "a snippet edited"


def test_a_warm_build_reuses_the_additions_and_writes_the_same_site(tmp_path):
    project = copy_project(tmp_path / "project")
    first = mkdocs_build(project, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    warm = mkdocs_build(project, tmp_path / "warm")
    assert warm.returncode == 0, warm.stderr
    reused = {lang: int(n) for lang, n in REUSED.findall(warm.stdout + warm.stderr)}
    pages = len(list((tmp_path / "first").glob("glossary/*/index.html")))
    assert len(reused) == 3 and min(reused.values()) > pages, warm.stderr
    assert _differences(tmp_path / "first", tmp_path / "warm") == []
