"""Page weight: the bytes a first visit to a page transfers (HTML and everything it loads), and a
repeat visit (what is not cacheable: the HTML).

Two measures of the same pages of a built site:
- `static`: the HTML parsed for what it references (stylesheets, scripts, images, icons, and
  url(...) inside the stylesheets it loads), summed from the files on disk;
- `browser`: Debian's Chromium driven by Playwright, loading the page from a local HTTP server
  with a fresh cache and counting every response body (includes what scripts fetch, e.g. the
  search index). Gzip sizes estimate what a compressing host (GitHub Pages) sends.
"""

from __future__ import annotations

import gzip
import http.server
import re
import shutil
import threading
from functools import partial
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

CHROMIUM = "/usr/bin/chromium"


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and a.get("href") and any(r in (a.get("rel") or "").split()
                                                     for r in ("stylesheet", "icon", "preload", "modulepreload")):
            self.refs.append(("css" if "stylesheet" in (a.get("rel") or "") else "link", a["href"]))
        elif tag == "script" and a.get("src"):
            self.refs.append(("js", a["src"]))
        elif tag in ("img", "source") and (a.get("src") or a.get("srcset")):
            self.refs.append(("img", (a.get("src") or a.get("srcset")).split()[0]))


def _local(site: Path, page_url: str, ref: str) -> Path | None:
    absolute = urljoin("http://site/" + page_url, ref)
    parts = urlsplit(absolute)
    if parts.netloc != "site":
        return None
    path = site / unquote(parts.path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_file() else None


def static_weight(site: Path, page_url: str) -> dict:
    html_path = site / page_url / "index.html"
    html = html_path.read_bytes()
    parser = _Refs()
    parser.feed(html.decode("utf-8", "replace"))
    files = {}
    for kind, ref in parser.refs:
        path = _local(site, page_url, ref)
        if path is None:
            continue
        files[path] = kind
        if kind == "css":
            css = path.read_text(encoding="utf-8", errors="replace")
            css_url = path.relative_to(site).as_posix()
            for inner in re.findall(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", css):
                if inner.startswith("data:"):
                    continue
                inner_path = _local(site, css_url, inner)
                if inner_path is not None:
                    files[inner_path] = "css-url"
    by_kind: dict[str, int] = {}
    for path, kind in files.items():
        by_kind[kind] = by_kind.get(kind, 0) + path.stat().st_size
    assets = sum(by_kind.values())
    text = html.decode("utf-8", "replace")
    article = re.search(r"<article\b.*?</article>", text, re.S)
    return {
        "html_bytes": len(html),
        "html_parts": {
            "article_bytes": len(article.group(0).encode()) if article else None,
            "inline_svg_bytes": sum(len(m.encode()) for m in re.findall(r"<svg\b.*?</svg>", text, re.S)),
            "tooltip_title_bytes": sum(len(m.encode()) for m in re.findall(r'class="termbase-term"[^>]*title="[^"]*"', text)),
            "mathml_bytes": sum(len(m.encode()) for m in re.findall(r"<math\b.*?</math>", text, re.S)),
            "code_bytes": sum(len(m.encode()) for m in re.findall(r'<div class="language-\w+ highlight">.*?</div>', text, re.S)),
            "code_as_text_bytes": sum(len(unescape(re.sub(r"<[^>]+>", "", m)).encode()) for m in
                                      re.findall(r'<div class="language-\w+ highlight">.*?</div>', text, re.S)),
            "nav_bytes": sum(len(m.encode()) for m in re.findall(r"<nav\b.*?</nav>", text, re.S)),
        },
        "html_gzip_bytes": len(gzip.compress(html, 6)),
        "assets_bytes": assets,
        "assets_by_kind": by_kind,
        "first_visit_bytes": len(html) + assets,
        "first_visit_gzip_bytes": len(gzip.compress(html, 6)) + sum(len(gzip.compress(p.read_bytes(), 6)) for p in files),
        "repeat_visit_bytes": len(html),
        "files": sorted(p.relative_to(site).as_posix() for p in files),
    }


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def browser_weight(site: Path, page_urls: list[str]) -> dict:
    """First and repeat visit of each page in Chromium, fresh cache per page."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return {"error": "no Chromium at /usr/bin/chromium"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        return {"error": f"playwright not importable: {exc}"}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for url in page_urls:
                context = browser.new_context()
                page = context.new_page()
                responses = []

                def on_response(response, responses=responses):
                    try:
                        body = response.body()
                    except Exception:  # noqa: BLE001 - redirects and aborted requests have none
                        body = b""
                    responses.append({"url": response.url[len(base):], "status": response.status,
                                      "type": response.request.resource_type, "bytes": len(body),
                                      "gzip_bytes": len(gzip.compress(body, 6)) if body else 0})

                page.on("response", on_response)
                page.goto(base + url, wait_until="networkidle")
                page.wait_for_timeout(300)
                by_type: dict[str, int] = {}
                for r in responses:
                    by_type[r["type"]] = by_type.get(r["type"], 0) + r["bytes"]
                html = next((r for r in responses if r["type"] == "document"), {"bytes": 0, "gzip_bytes": 0})
                out[url] = {
                    "first_visit_bytes": sum(r["bytes"] for r in responses),
                    "first_visit_gzip_bytes": sum(r["gzip_bytes"] for r in responses),
                    "requests": len(responses),
                    "by_type": by_type,
                    "html_bytes": html["bytes"],
                    "repeat_visit_bytes": html["bytes"],  # assets are fingerprinted/cacheable; the HTML is revalidated
                    "repeat_visit_gzip_bytes": html["gzip_bytes"],
                    "responses": responses,
                }
                context.close()
            browser.close()
    except Exception as exc:  # noqa: BLE001 - the benchmark reports it and goes on
        out["error"] = repr(exc)
    finally:
        server.shutdown()
    return out


def find_pages(site: Path) -> dict[str, str | None]:
    """An entry page and a notebook page of a built site (English), as URLs relative to the root."""
    entry = None
    preferred = site / "glossary" / "multi-head-attention" / "index.html"
    if preferred.is_file():
        entry = "glossary/multi-head-attention/"
    else:
        for path in sorted((site / "glossary").glob("*/index.html")):
            entry = path.parent.relative_to(site).as_posix() + "/"
            break
    notebook = None
    for path in sorted((site / "notebooks").glob("*/index.html")) if (site / "notebooks").is_dir() else []:
        notebook = path.parent.relative_to(site).as_posix() + "/"
        break
    return {"entry": entry, "notebook": notebook}


def measure(site: Path, use_browser: bool = True) -> dict:
    pages = find_pages(site)
    result = {"pages": pages, "static": {}, "browser": {}}
    for kind, url in pages.items():
        if url:
            result["static"][kind] = static_weight(site, url)
    if use_browser:
        urls = [u for u in pages.values() if u]
        browser = browser_weight(site, urls)
        for kind, url in pages.items():
            if url and url in browser:
                result["browser"][kind] = browser[url]
        if "error" in browser:
            result["browser"]["error"] = browser["error"]
    return result
