"""The browser's records kept between runs (tests/browser/crawl.py): a page's record is read
again instead of visiting the page only while every file the page loaded, the crawler, the
browser and the fonts are unchanged, and only a passing run of the whole test command keeps
what it recorded. A small site in a temporary folder; no browser."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from termbase.run.cache import Cache
from tests.browser import crawl
from tests.conftest import whole_command

PAGE = "/es/glossary/x/"
LOADED = ["es/glossary/x/index.html", "es/assets/site.css", "es/search/search_index.json", "es/assets/figures/x.svg"]


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    for rel, text in {"es/glossary/x/index.html": "<p>x</p>", "es/assets/site.css": "p {}",
                      "es/assets/figures/x.svg": "<svg/>", "es/glossary/y/index.html": "<p>y</p>",
                      "es/search/search_index.json": json.dumps({"config": {"lang": ["es"]}, "docs": [{"t": "x"}]})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def kept_after_a_run(tmp_path, site, setup="setup-1", loaded=LOADED):
    """The cache after a passing run that visited PAGE, which loaded `loaded`."""
    shared, cache = tmp_path / "run", Cache(tmp_path / "cache")
    shared.mkdir(exist_ok=True)
    new = {PAGE: {"deps": crawl.hashes(site, "es", loaded), "record": {"width": 375, "problems": []}}}
    (shared / "crawl-es.json").write_text(json.dumps({"setup": setup, "new": new, "pages": {}}), encoding="utf-8")
    assert crawl.keep(cache, shared) == 1
    return cache


def reused(cache, site, setup="setup-1"):
    return crawl.kept_records(cache, setup, site, "es", [PAGE, "/es/glossary/y/"])


def test_a_kept_record_is_read_again_while_nothing_it_loaded_changed(tmp_path, site):
    cache = kept_after_a_run(tmp_path, site)
    assert reused(cache, site) == {PAGE: {"width": 375, "problems": []}}  # y was never recorded
    # the documents of the search index are not what the crawl serves (it serves none of them)
    index = site / "es/search/search_index.json"
    index.write_text(json.dumps({"config": {"lang": ["es"]}, "docs": [{"t": "changed"}]}), encoding="utf-8")
    assert PAGE in reused(cache, site)
    # a file no page loaded changes nothing
    (site / "es/glossary/y/index.html").write_text("<p>y changed</p>", encoding="utf-8")
    assert PAGE in reused(cache, site)


@pytest.mark.parametrize("change", ["the page", "a stylesheet", "a figure", "the index's configuration",
                                    "a file removed", "a missing file that appears", "the crawler or browser"])
def test_a_kept_record_is_not_read_when_anything_it_depends_on_changed(tmp_path, site, change):
    loaded = LOADED + ["es/assets/javascripts/missing.js"]  # asked for, answered 404
    cache = kept_after_a_run(tmp_path, site, loaded=loaded)
    assert PAGE in reused(cache, site)
    setup = "setup-1"
    if change == "the page":
        (site / "es/glossary/x/index.html").write_text("<p>x, edited</p>", encoding="utf-8")
    elif change == "a stylesheet":
        (site / "es/assets/site.css").write_text("p { color: red }", encoding="utf-8")
    elif change == "a figure":
        (site / "es/assets/figures/x.svg").write_text("<svg><g/></svg>", encoding="utf-8")
    elif change == "the index's configuration":
        (site / "es/search/search_index.json").write_text(json.dumps({"config": {"lang": ["en"]}, "docs": []}))
    elif change == "a file removed":
        (site / "es/assets/figures/x.svg").unlink()
    elif change == "a missing file that appears":
        (site / "es/assets/javascripts").mkdir()
        (site / "es/assets/javascripts/missing.js").write_text("", encoding="utf-8")
    else:
        setup = "setup-2"
    assert reused(cache, site, setup) == {}


def test_the_setup_key_changes_with_the_browser_and_the_fonts(tmp_path, monkeypatch):
    fonts = tmp_path / "fonts"
    fonts.mkdir()
    monkeypatch.setattr(crawl, "FONT_DIRS", (str(fonts),))
    before = crawl.setup_key("Chromium 156")
    assert crawl.setup_key("Chromium 156") == before
    assert crawl.setup_key("Chromium 157") != before
    (fonts / "DejaVuSans.ttf").write_bytes(b"font")
    assert crawl.setup_key("Chromium 156") != before


def test_requests_map_to_the_site_files_they_asked_for():
    origin = "http://127.0.0.1:8000"
    assert crawl.site_file(origin, origin + "/es/glossary/x/") == "es/glossary/x/index.html"
    assert crawl.site_file(origin, origin + "/") == "index.html"
    assert crawl.site_file(origin, origin + "/assets/a%20b.css?v=1#top") == "assets/a b.css"
    assert crawl.site_file(origin, origin + "/es/404.html") == "es/404.html"
    assert crawl.site_file(origin, "https://fonts.googleapis.com/css") is None
    assert crawl.site_file(origin, "http://127.0.0.1:80001/x") is None


def config(source="testpaths", **options):
    values = {"keyword": "", "markexpr": "", "deselect": None, "ignore": None, "ignore_glob": None, **options}
    args_source = {"testpaths": pytest.Config.ArgsSource.TESTPATHS, "args": pytest.Config.ArgsSource.ARGS}[source]
    return SimpleNamespace(args_source=args_source, getoption=values.__getitem__)


def test_only_the_whole_test_command_keeps_what_the_browser_recorded():
    assert whole_command(config())
    assert not whole_command(config("args"))  # pytest tests/browser/test_reading.py
    assert not whole_command(config(markexpr="not slow"))
    assert not whole_command(config(keyword="reading"))
    assert not whole_command(config(deselect=["tests/browser/test_accessibility.py"]))
    assert not whole_command(config(ignore=["tests/browser/test_accessibility.py"]))
    assert not whole_command(config(ignore_glob=["*accessibility*"]))
