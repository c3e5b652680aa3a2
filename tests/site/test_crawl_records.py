"""The browser's records kept between runs (tests/browser/crawl.py): a page's record is read
again instead of visiting the page only while every file the page loaded, the crawler, the
browser and the fonts are unchanged, and only a passing run of the whole test command keeps
what it recorded. A small site in a temporary folder; no browser."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

import tests.conftest as suite
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
                      "es/assets/figures/y.svg": "<svg/>", "es/search/names.json": "{}",
                      "es/search/search_index.json": json.dumps({"config": {"lang": ["es"]}, "docs": [{"t": "x"}]})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def kept_after_a_run(tmp_path, site, setup="setup-1", loaded=LOADED):
    """The cache after a passing run that visited PAGE, which loaded `loaded`."""
    shared, cache = tmp_path / "run", Cache(tmp_path / "cache")
    shared.mkdir(exist_ok=True)
    new = {PAGE: {"deps": crawl.hashes(site, "es", loaded), "recorded": time.time(),
                  "record": {"width": 375, "problems": []}}}
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


def test_a_record_older_than_its_maximum_age_is_not_read(tmp_path, site, monkeypatch):
    cache = kept_after_a_run(tmp_path, site)
    assert PAGE in reused(cache, site)
    monkeypatch.setattr(crawl, "MAX_AGE_S", -1)  # every record is older than that
    assert reused(cache, site) == {}


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


class Browser:
    version = "Chromium 156"


def visits(monkeypatch) -> list[list[str]]:
    """crawl_language replaced by a stub: each call's pages, each page recorded as loading its
    own HTML only (the search worker's late requests unseen)."""
    calls: list[list[str]] = []

    def stub(browser, origin, site, lang, paths=None):
        calls.append(list(paths))
        return {path: {"width": 375, "problems": [], "loaded": [crawl.site_file(origin, origin + path)]}
                for path in paths}

    monkeypatch.setattr(crawl, "crawl_language", stub)
    return calls


def crawl_of(tmp_path, site, run: str) -> crawl.Crawl:
    (tmp_path / run).mkdir()
    return crawl.Crawl(Browser(), "http://127.0.0.1:1", site, tmp_path / run, Cache(tmp_path / "cache"))


def test_a_run_reads_what_a_passing_run_kept_and_visits_what_changed(tmp_path, site, monkeypatch):
    calls = visits(monkeypatch)
    for name in (crawl.FRESH, "CI"):
        monkeypatch.delenv(name, raising=False)
    log = tmp_path / "counts.log"
    monkeypatch.setenv(crawl.COUNT_LOG, str(log))
    first = crawl_of(tmp_path, site, "run1")
    assert sorted(first.language("es")) == [PAGE, "/es/glossary/y/"] and first.reused["es"] == []
    assert crawl.keep(Cache(tmp_path / "cache"), tmp_path / "run1") == 2
    second = crawl_of(tmp_path, site, "run2")
    assert sorted(second.language("es")) == [PAGE, "/es/glossary/y/"]
    assert second.reused["es"] == [PAGE, "/es/glossary/y/"] and len(calls) == 1
    # the worker's late requests were not seen, but every record depends on the language's
    # search/ and assets/ (not on another page's figure)
    (site / "es/assets/figures/y.svg").write_text("<svg><g/></svg>", encoding="utf-8")
    third = crawl_of(tmp_path, site, "run3")
    third.language("es")
    assert third.reused["es"] == [PAGE, "/es/glossary/y/"] and len(calls) == 1
    (site / "es/search/names.json").write_text('{"x": "glossary/x/"}', encoding="utf-8")
    fourth = crawl_of(tmp_path, site, "run4")
    fourth.language("es")
    assert fourth.reused["es"] == [] and calls[-1] == [PAGE, "/es/glossary/y/"]
    monkeypatch.setenv(crawl.FRESH, "1")
    fifth = crawl_of(tmp_path, site, "run5")
    fifth.language("es")
    assert fifth.reused["es"] == [] and len(calls) == 3
    assert log.read_text(encoding="utf-8").splitlines() == ["es\t0\t2", "es\t2\t0", "es\t2\t0", "es\t0\t2",
                                                             "es\t0\t2"]


def session(tmp_path, **options):
    made = config(**options)
    setattr(made, suite.CRAWL_RUN, str(tmp_path))
    return SimpleNamespace(config=made)


@pytest.mark.parametrize("exitstatus, options, kept", [(0, {}, True), (1, {}, False), (5, {}, False),
                                                       (0, {"markexpr": "browser"}, False)])
def test_only_a_passing_whole_command_keeps_the_records(tmp_path, monkeypatch, exitstatus, options, kept):
    calls = []
    monkeypatch.setattr(crawl, "keep", lambda cache, run: calls.append(run))
    suite.pytest_sessionfinish(session(tmp_path, **options), exitstatus)
    assert bool(calls) == kept


def test_records_that_cannot_be_kept_are_a_warning_not_a_failure(tmp_path, monkeypatch, capsys):
    def broken(cache, run):
        raise OSError("disk full")

    monkeypatch.setattr(crawl, "keep", broken)
    suite.pytest_sessionfinish(session(tmp_path), 0)
    assert "were not kept (OSError: disk full)" in capsys.readouterr().err


def test_the_workers_share_the_folder_the_session_made(tmp_path):
    controller = SimpleNamespace(**{suite.CRAWL_RUN: str(tmp_path)})
    node = SimpleNamespace(config=controller, workerinput={})
    suite.pytest_configure_node(node)
    worker = SimpleNamespace(workerinput=node.workerinput)
    assert suite.crawl_run(worker) == suite.crawl_run(controller) == tmp_path
