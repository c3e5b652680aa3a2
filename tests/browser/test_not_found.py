"""A missing page in a language, on a host that answers every missing path with the root
/404.html (as GitHub Pages does), shows the not-found page of that language."""

import functools
import threading

import pytest

from tests.browser.browsertools import QuietHandler, QuietServer

pytestmark = pytest.mark.browser

MESSAGES = {"": ("en", "Page not found"), "es/": ("es", "Página no encontrada"), "da/": ("da", "Siden blev ikke fundet")}


class PagesLikeHandler(QuietHandler):
    """Serves the root 404.html, with status 404, for any path that is not a file."""

    def send_error(self, code, message=None, explain=None):
        if code != 404:
            return super().send_error(code, message, explain)
        body = (self.directory_root / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def pages_host(browser, built_site):
    site, _ = built_site
    handler = type("Handler", (PagesLikeHandler,), {"directory_root": site})
    server = QuietServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("prefix", sorted(MESSAGES))
def test_missing_page_speaks_the_language_of_its_address(browser, pages_host, prefix):
    lang, message = MESSAGES[prefix]
    context = browser.new_context()
    page = context.new_page()
    try:
        response = page.goto(f"{pages_host}/{prefix}glossary/no-such-term/")
        assert response.status == 404
        page.wait_for_function(f"document.documentElement.lang === {lang!r}", timeout=10_000)
        assert page.locator("article h1").inner_text() == message
    finally:
        context.close()
