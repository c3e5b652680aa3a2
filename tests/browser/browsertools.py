"""Helpers for the browser tests: where Chromium is, how it starts, and `Reader`, one browser
page that records every request, bad answer and console error (see conftest.py)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.site.sitetools import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root in a container
    "--disable-gpu",
    "--disable-dev-shm-usage",  # containers have a small /dev/shm
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
ARTIFACTS = ROOT / "tests" / "artifacts"


def chromium_path() -> str | None:
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A page that moves on closes its connections early; that is not the server's problem.
        pass


class Reader:
    """One browser context and page, reused by every test, that remembers what happened."""

    def __init__(self, browser, origin: str, site: Path):
        self.origin = origin
        self.site = site
        self.context = browser.new_context(viewport=DESKTOP, base_url=origin, color_scheme="light")
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
        self.requests: list[str] = []
        self.problems: list[str] = []
        # Only requests for other hosts are intercepted (matched in the browser driver, so the
        # site's own requests don't make a round trip through Python).
        self.context.route(re.compile("^(?!" + re.escape(origin + "/") + ")"), self._route)
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.context.on("response", self._response)
        self.context.on("requestfailed", self._failed)
        self.context.on("console", self._console)
        self.context.on("weberror", lambda error: self.problems.append(f"uncaught error: {error.error}"))
        self.page = self.context.new_page()

    def _route(self, route):
        url = route.request.url
        if url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.problems.append(f"request to another host: {url}")
            route.abort("blockedbyclient")

    def _response(self, response):
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def _failed(self, request):
        # ERR_ABORTED: the page moved on before a request finished, which is not an error
        if request.url.startswith(self.origin + "/") and request.failure != "net::ERR_ABORTED":
            self.problems.append(f"request failed ({request.failure}): {request.url}")

    def _console(self, message):
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.problems.append(f"console error: {message.text} ({where})")

    def goto(self, path: str):
        response = self.page.goto(path, wait_until="load")
        assert response is not None and response.ok, f"{path}: {response and response.status}"
        return response

    @contextlib.contextmanager
    def watch(self, what: str):
        """Fails if, while the block runs, the page asks any other host for anything, gets an
        answer of 400 or above, or logs a console error."""
        start = len(self.problems)
        yield
        self.page.wait_for_load_state("networkidle")
        new = self.problems[start:]
        assert not new, f"{what}:\n  " + "\n  ".join(new)

    def forget_palette(self):
        """Clears what the site stored (Material's palette), from a page of the site's origin
        that runs no script: a page of the site still running Material's script can store its
        palette again after the clear, and the next page then opens in that scheme (13 of 30
        reloads of an entry after `emulate_media` and a clear there, on 2026-12-04)."""
        self.goto("/assets/site.css")
        self.page.evaluate("localStorage.clear()")

    def reset(self):
        """Back to the state every test starts from: light scheme, desktop size, no stored palette."""
        self.page.set_viewport_size(DESKTOP)
        self.page.emulate_media(color_scheme="light")
        if self.page.url.startswith(self.origin):
            self.forget_palette()
