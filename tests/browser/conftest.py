"""The site as readers see it: Debian's Chromium, driven by Playwright, reads the built site
served on 127.0.0.1.

One browser and one page for the whole session (`reader`). Every request the page or its search
worker makes is recorded; one to any other host is aborted and reported, and so are answers of
400 and above, failed requests and console errors (`Reader.watch`).

Without Chromium the tests are skipped with a message saying how to install it; with `CI=true`
(as `.ci/run` sets it) a missing browser is a failure.
"""

from __future__ import annotations

import functools
import os
import threading

import pytest

from tests.browser.browsertools import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, QuietHandler, QuietServer, Reader, chromium_path


def _unavailable(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} CI=true, so the browser tests must run here, not skip.", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if executable is None:
        _unavailable(
            f"Chromium not found at {CHROMIUM}: install Debian's Chromium "
            "(`sudo apt-get install chromium`) to run the browser tests."
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("The playwright package is missing: `.venv/bin/pip install -r requirements.txt`.")
    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Exception as exc:  # a broken install is as good as none
            _unavailable(f"Chromium at {executable} does not start ({exc}): reinstall it with `sudo apt-get install chromium`.")
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def site_origin(browser, built_site):
    """The built site at the root of a static server on 127.0.0.1 (the language switcher's links
    are site-root-relative, so the site must be served at `/`). `browser` comes first so that a
    machine without Chromium skips before building anything."""
    site, _ = built_site
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def reader(browser, site_origin, built_site):
    site, _ = built_site
    r = Reader(browser, site_origin, site)
    yield r
    r.context.close()


@pytest.fixture()
def page(reader):
    reader.reset()
    yield reader.page
    reader.reset()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def crawl(browser, site_origin, built_site, pytestconfig):
    """Each page of each language visited once (tests/browser/crawl.py), shared by the test
    processes of the run: `crawl.language(lang)` is {path: what was recorded there}. The
    records kept from an earlier run are in the project's cache."""
    from termbase.run.cache import Cache
    from tests.browser.crawl import Crawl
    from tests.conftest import crawl_run
    from tests.site.sitetools import PROJECT

    site, _ = built_site
    return Crawl(browser, site_origin, site, crawl_run(pytestconfig), Cache(PROJECT.cache_dir), chromium_path())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failure on what the crawl recorded says when some pages were read from records kept
    from an earlier run instead of visited (tests/browser/crawl.py)."""
    outcome = yield
    report = outcome.get_result()
    crawl = getattr(item, "funcargs", {}).get("crawl")
    if report.failed and crawl is not None and any(crawl.reused.values()):
        counts = ", ".join(f"{lang}: {len(paths)}" for lang, paths in crawl.reused.items() if paths)
        report.sections.append(("browser records", (
            f"Pages not visited in this run, read from the records of an earlier passing run ({counts}); "
            "TERMBASE_FRESH_CRAWL=1 visits every page again.")))
