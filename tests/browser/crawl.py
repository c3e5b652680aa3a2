"""One visit to each built page per language, recording what the browser tests assert about it.

`crawl_language` loads every page of one language once, on a phone-sized screen, and records for
it: the page's `lang`, every image (the lazy ones and the other scheme's too) and whether it
loaded, the document's width, inline code broken mid-word, a header title cut off and anything
`Reader` reports (requests to other hosts, answers of 400 and above, failed requests, console
errors). Then, in the same load, at desktop width: the interface texts (PAGE_TEXTS) of the
pages of each kind, axe-core in both schemes on those pages, and the widths of the snippet code
boxes. On every page with an entry figure, the figures shown in each scheme; on every page, its
buttons (the notebooks' "Open in Colab").

`Crawl.language(lang)` shares the result between the test processes of one run (pytest-xdist):
it is written as JSON in the run's folder, under a lock per language; a process that finds a
language taken by another crawls a language nobody has started meanwhile, so two processes
crawl two languages side by side.

A page's record is kept for later runs (`.termbase-cache/browser-crawl/`, as the suite keeps
executed blocks and drawn figures) with the hash of every file it depends on: the files the page
asked for while it was checked, and every file of its language's `assets/` (but the figures,
which a page asks for while it is checked) and `search/`, which the search worker may ask for
later. It is read again instead of visiting the page only while all of them, the crawler's code,
axe-core, the browser and its fonts are unchanged, and for at most `MAX_AGE_S` after it was
recorded (a problem that shows only now and then is looked for again). Only a run of the whole
test command that passed keeps what it recorded (`tests/conftest.py`: pytest_sessionfinish),
so a record that a test failed on, or that no test read, is never kept; a fresh clone (as in
CI) has none and visits every page. `TERMBASE_FRESH_CRAWL=1` (or `CI=true`) visits every page
whatever is kept, and a failure on a page read from a record says so (tests/browser/conftest.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from termbase.run.cache import Cache, key
from tests.browser import a11ytools as a11y
from tests.browser.browsertools import DESKTOP, PHONE, Reader
from tests.site import sitetools
from tests.site.sitetools import LANGS

NAMESPACE = "browser-crawl"  # in the project's cache: the records kept between runs
FRESH = "TERMBASE_FRESH_CRAWL"  # set to 1: visit every page, reuse no record
COUNT_LOG = "TERMBASE_BENCH_CRAWL_LOG"  # the benchmark's: a line per language, pages reused and visited
MAX_AGE_S = 7 * 24 * 3600  # a record older than this is not read again: its page is visited
# What a record depends on besides its page's files: this code (and the server and browser
# set-up of tests/browser/conftest.py), the Chromium binary, axe-core, and the fonts and font
# configuration Chromium lays the text out with.
CRAWLER = ("crawl.py", "a11ytools.py", "browsertools.py", "conftest.py")
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/etc/fonts", "~/.fonts", "~/.local/share/fonts",
             "~/.config/fontconfig")

# One page of each kind (the notebook pages differ: one has outputs wider than the page): axe and
# the interface-text scan run on these.
KINDS = (
    "",
    "glossary/",
    "a-z/",
    "config-explainer/",
    "glossary/causal-mask/",
    "faq/common-mistakes/",
    "faq/one-projection-or-one-per-head/",
    "notebooks/multi-head-attention-step-by-step/",
    "notebooks/cross-attention-encoder-decoder/",
    "status/",
    "benchmarks/",
    "contributing/",
    "claims/",
    "style-guide/",
    "notation/",
    "404.html",
)
# Pages where axe's colour-contrast rule also measures every token of the code and every part
# of the formulas (elsewhere CODE_AND_MATH_CONTRAST does, to keep the run short).
FULL_AXE = {"glossary/causal-mask/"}


def prefix(lang: str) -> str:
    """The address of a language's home, site-root-relative: "/", "/es/"."""
    return "/" + sitetools.prefix(lang)


LOAD_ALL_IMAGES = """async () => {
  const images = Array.from(document.images);
  for (const img of images) img.loading = "eager";  // lazy ones too, and those of the other scheme
  await Promise.all(images.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done, {once: true});
    img.addEventListener("error", done, {once: true});
    setTimeout(done, 5000);
  })));
  return images.map(img => [img.currentSrc || img.src, img.complete && img.naturalWidth > 0]);
}"""


# Where an inline code span wraps onto another line, the text around the break: a reader
# expects a long name to wrap after a dot, underscore, colon, slash, hyphen, comma or space, or between
# the words of a camel-case name, never mid-word (a single part wider than the line excepted).
CODE_BREAKS = """() => {
  const out = [];
  for (const code of document.querySelectorAll("article :not(pre) > code")) {
    if (code.getClientRects().length < 2) continue;
    const text = code.textContent, range = document.createRange();
    let top = null, at = 0;
    for (const node of code.childNodes) {
      if (node.nodeType !== Node.TEXT_NODE) continue;
      for (let i = 0; i < node.length; i++, at++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        if (rect.width === 0) continue;
        if (top !== null && rect.top > top + 2) {
          const before = text[at - 1], after = text[at];
          const joint = /[._:\\/\\s,\\-\u2026(]/.test(before) || (/[a-z]/.test(before) && /[A-Z]/.test(after));
          const part = text.slice(0, at).split(/[._\\/\\s,\\-]/).pop() + text.slice(at).split(/[._\\/\\s,\\-]/)[0];
          if (!joint && part.length * 8 < code.parentElement.clientWidth)
            out.push(text + " breaks between '" + text.slice(Math.max(0, at - 8), at) + "' and '" + text.slice(at, at + 8) + "'");
        }
        top = rect.top;
      }
    }
  }
  return out;
}"""
# The header's title (the site's name before scrolling) shown whole, not cut with an ellipsis.
TITLE_CUT = """() => {
  const title = document.querySelector(".md-header__topic .md-ellipsis");
  return title && (title.scrollWidth > title.clientWidth + 1 || title.scrollHeight > title.clientHeight + 1)
    ? title.textContent.trim() : null;
}"""

CODE_WIDTHS = """() => {
  document.querySelectorAll("article details").forEach(d => d.open = true);
  return [...document.querySelectorAll("article .language-python pre > code")].map(c => ({
    scroll: c.scrollWidth, client: c.clientWidth,
    line: c.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), ""),
  }));
}"""


# The entry figures of a page, each with whether it is shown (a figure has a light and a dark
# variant, one of them hidden by Material's #only-light/#only-dark rules) and loaded, and how
# many of the links around them are hidden.
SHOWN_FIGURES = """() => ({
  figures: [...document.querySelectorAll("article img.termbase-figure")].map(img => ({
    src: img.getAttribute("src"), shown: img.checkVisibility(), complete: img.complete, width: img.naturalWidth,
  })),
  hidden_links: [...document.querySelectorAll("article a:has(> img.termbase-figure)")]
    .filter(a => !a.checkVisibility()).length,
})"""
FIGURES_SHOWN_LOADED = ("() => [...document.querySelectorAll('article img.termbase-figure')]"
                        ".filter(i => i.checkVisibility()).every(i => i.complete)")
BUTTONS = """() => [...document.querySelectorAll("article a.md-button")].map(a => ({
  text: a.textContent.trim(), href: a.getAttribute("href"),
}))"""


def figures_in_both_schemes(page) -> dict:
    """scheme -> SHOWN_FIGURES, once the figures shown in it have loaded ("timeout": they did not)."""
    found = {}
    for scheme in a11y.each_scheme(page):
        try:
            page.wait_for_function(FIGURES_SHOWN_LOADED, timeout=10_000)
            timeout = False
        except Exception:  # recorded, and the test names the page
            timeout = True
        found[scheme] = {**page.evaluate(SHOWN_FIGURES), "timeout": timeout}
    a11y.set_scheme(page, "light")
    return found


def pages_of(site: Path, lang: str) -> list[str]:
    root = site if lang == "en" else site / lang
    paths = []
    for file in sorted(root.rglob("*.html")):
        rel = file.relative_to(root).as_posix()
        if lang == "en" and rel.split("/", 1)[0] in LANGS:
            continue
        if file.name == "index.html":
            paths.append(prefix(lang) + rel.removesuffix("index.html"))
        elif file.name == "404.html" and file.parent == root:
            paths.append(prefix(lang) + "404.html")
    return paths


def file_of(site: Path, path: str) -> Path:
    rel = path.lstrip("/")
    return site / (rel if rel.endswith(".html") else rel + "index.html")


def pages_with_snippets(site: Path, lang: str) -> list[str]:
    """The pages whose snippet boxes are measured at desktop width: every English glossary and
    FAQ page with Python code; in the other languages (the code and the layout are the same),
    the page with the most blocks."""
    if lang != "en":
        return [f"/{lang}/faq/common-mistakes/"]
    root = site
    return sorted(prefix(lang) + p.parent.relative_to(root).as_posix() + "/"
                  for p in [*(root / "glossary").glob("*/index.html"), *(root / "faq").glob("*/index.html")]
                  if "language-python" in p.read_text(encoding="utf-8"))


def index_of(lang: str) -> str:
    """The language's search index, site-relative."""
    return sitetools.prefix(lang) + "search/search_index.json"


def served(site: Path, lang: str, rel: str) -> bytes | None:
    """What the crawl of `lang` serves for the site file `rel`: its bytes (None if there is no
    such file), or, for the language's search index, the index with no documents."""
    file = site / rel
    if not file.is_file():
        return None
    if rel == index_of(lang):
        return json.dumps({**json.loads(file.read_text(encoding="utf-8")), "docs": []}).encode("utf-8")
    return file.read_bytes()


def site_file(origin: str, url: str) -> str | None:
    """The site-relative file a request of the page asked for; None for another host."""
    if not url.startswith(origin + "/"):
        return None
    rel = unquote(urlsplit(url).path).lstrip("/")
    return rel + "index.html" if rel == "" or rel.endswith("/") else rel


def setup_key(browser_version: str, executable: str | None = None) -> str:
    """The hash of what every record depends on besides its page's files (see CRAWLER): the
    fonts and the browser's binary by path, size and modification time, as a package update
    leaves them."""
    here = Path(__file__).parent
    parts = [(here / name).read_text(encoding="utf-8") for name in CRAWLER]
    parts += [a11y.axe_source(), browser_version]
    # Debian's /usr/bin/chromium is a script that starts the binary beside its libraries
    files = [Path(executable), Path(executable).resolve().parent.parent / "lib" / "chromium" / "chromium"] \
        if executable else []
    for folder in FONT_DIRS:
        files += sorted(Path(folder).expanduser().rglob("*"))
    for file in files:
        if file.is_file():
            stat = file.stat()
            parts.append(f"{file}:{stat.st_size}:{stat.st_mtime_ns}")
    return key(*parts, packages=("playwright",))


def language_files(site: Path, lang: str) -> list[str]:
    """The files of a language's `assets/` (but its figures) and `search/`: what its pages may
    ask for after their checks (the search worker's scripts, names.json), so every record
    depends on them whether or not its page was seen asking."""
    prefix = sitetools.prefix(lang)  # "" for the default language: site / "" is the site
    found = []
    for folder in ("assets", "search"):
        for file in sorted((site / prefix / folder).rglob("*")):
            rel = file.relative_to(site).as_posix()
            if file.is_file() and not rel.startswith(prefix + "assets/figures/"):
                found.append(rel)
    return found


def crawl_language(browser, origin: str, site: Path, lang: str, paths: list[str] | None = None) -> dict:
    """{path: what was recorded there} for every page of `lang`, or for `paths` of them (see
    the module's docstring); each record's "loaded" lists the site files the page asked for."""
    reader = Reader(browser, origin, site)
    page = reader.page
    # Material's search worker fetches the whole index (every language) on every page load and
    # builds it, which costs more than everything else the crawl does there. The crawl hands it
    # the language's index's own configuration with no documents (at its one right address: a page that asks
    # elsewhere still gets the server's 404, and is reported); the search tests load the real one.
    where = "/" + index_of(lang)
    empty = served(site, lang, index_of(lang))
    page.route(origin + where,
               lambda route: route.fulfill(status=200, content_type="application/json", body=empty))
    kinds = {prefix(lang) + k: k for k in KINDS}
    snippets = set(pages_with_snippets(site, lang))
    pages: dict[str, dict] = {}
    try:
        for path in pages_of(site, lang) if paths is None else paths:
            page.set_viewport_size(PHONE)
            start, asked = len(reader.problems), len(reader.requests)
            record: dict = {"problems": []}
            pages[path] = record
            response = page.goto(path, wait_until="load")
            record["status"] = response.status if response is not None else None
            record["lang"] = page.evaluate("document.documentElement.lang")
            record["images"] = page.evaluate(LOAD_ALL_IMAGES)
            record["width"] = page.evaluate("document.documentElement.scrollWidth")
            record["breaks"] = page.evaluate(CODE_BREAKS)
            record["title_cut"] = page.evaluate(TITLE_CUT)
            record["buttons"] = page.evaluate(BUTTONS)
            if path in kinds or path in snippets:
                page.set_viewport_size(DESKTOP)
            if path in kinds:
                # the interface texts first, as a reader sees the page before anything is switched
                if lang != "en":  # (English pages are English)
                    record["texts"] = page.evaluate(a11y.PAGE_TEXTS)
                a11y.prepare(page, axe=True)
                record["axe"] = {}
                for scheme in a11y.each_scheme(page):
                    full = kinds[path] in FULL_AXE
                    a11y.start_axe(page, full=full)
                    violations = a11y.axe_violations(page)
                    contrast = None if full else page.evaluate(a11y.CODE_AND_MATH_CONTRAST)["low"]
                    record["axe"][scheme] = {"violations": violations, "code_and_math_low": contrast}
                record["axe_version"] = a11y.axe_version(page)
                a11y.set_scheme(page, "light")  # the phone checks of the next page in light, as a reader starts
            if path in snippets:
                record["code_widths"] = page.evaluate(CODE_WIDTHS)
            if page.evaluate("document.querySelector('article img.termbase-figure') !== null"):
                a11y.prepare(page)
                record["figures"] = figures_in_both_schemes(page)
            record["problems"] = reader.problems[start:]
            record["loaded"] = reader.requests[asked:]
        page.wait_for_load_state("networkidle")
        if pages:
            # what arrived after the last page's checks (its late requests)
            last = pages[path]
            last["problems"] = last["problems"] + reader.problems[start + len(last["problems"]):]
            last["loaded"] = reader.requests[asked:]
    finally:
        reader.context.close()
    for record in pages.values():
        record["loaded"] = sorted({rel for url in record["loaded"] if (rel := site_file(origin, url))})
    return pages


class Crawl:
    """The crawl of each language, made once per test run and shared by the test processes;
    a page whose kept record still holds (see the module's docstring) is not visited."""

    def __init__(self, browser, origin: str, site: Path, shared: Path, cache: Cache, executable: str | None = None):
        self.browser, self.origin, self.site, self.shared = browser, origin, site, shared
        self.kept, self.setup = cache, setup_key(browser.version, executable)
        self.cache: dict[str, dict] = {}
        self.reused: dict[str, list[str]] = {}  # lang -> the pages read from a kept record

    def _file(self, lang: str) -> Path:
        return self.shared / f"crawl-{lang}.json"

    def _make(self, lang: str, *, wait: bool) -> bool:
        """Crawls `lang` unless it is done; False if another process holds it and `wait` is not set."""
        with open(self.shared / f"crawl-{lang}.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            if not self._file(lang).exists():
                paths = pages_of(self.site, lang)
                fresh = any(os.environ.get(name, "").lower() not in ("", "0", "false") for name in (FRESH, "CI"))
                known: dict[str, str] = {}
                reused = {} if fresh else kept_records(self.kept, self.setup, self.site, lang, paths, known)
                todo = [path for path in paths if path not in reused]
                visited = crawl_language(self.browser, self.origin, self.site, lang, todo) if todo else {}
                common = language_files(self.site, lang)
                now = time.time()
                new = {path: {"deps": hashes(self.site, lang, sorted({*record.pop("loaded"), *common}), known),
                              "recorded": now, "record": record}
                       for path, record in visited.items()}
                data = {"setup": self.setup, "pages": {**reused, **visited}, "new": new, "reused": sorted(reused)}
                tmp = self._file(lang).with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(data), encoding="utf-8")
                tmp.replace(self._file(lang))
                if os.environ.get(COUNT_LOG):
                    with open(os.environ[COUNT_LOG], "a", encoding="utf-8") as log:
                        log.write(f"{lang}\t{len(reused)}\t{len(visited)}\n")
            return True

    def language(self, lang: str) -> dict:
        if lang not in self.cache:
            if not self._file(lang).exists() and not self._make(lang, wait=False):
                # another process crawls it: crawl a language nobody has started meanwhile
                for other in LANGS:
                    if other != lang and not self._file(other).exists():
                        self._make(other, wait=False)
                self._make(lang, wait=True)
            data = json.loads(self._file(lang).read_text(encoding="utf-8"))
            self.cache[lang], self.reused[lang] = data["pages"], data["reused"]
        return self.cache[lang]


def _digest(content: bytes | None) -> str:
    return "absent" if content is None else hashlib.sha256(content).hexdigest()


def hashes(site: Path, lang: str, files: list[str], known: dict[str, str] | None = None) -> dict[str, str]:
    """{file: hash of what the crawl of `lang` serves for it} (see `served`); `known` keeps the
    hashes already taken, so that a file many pages load is read once."""
    known = {} if known is None else known
    for rel in files:
        if rel not in known:
            known[rel] = _digest(served(site, lang, rel))
    return {rel: known[rel] for rel in files}


def entry_of(setup: str, lang: str, path: str) -> str:
    return hashlib.sha256(f"{setup}\0{lang}\0{path}".encode("utf-8")).hexdigest()[:24]


def kept_records(cache: Cache, setup: str, site: Path, lang: str, paths: list[str],
                 known: dict[str, str] | None = None) -> dict[str, dict]:
    """{path: record} for the pages of `paths` whose kept record still holds: recorded with the
    same crawler, browser and fonts (`setup`), less than MAX_AGE_S ago, and every file it
    depends on unchanged."""
    found, known = {}, {} if known is None else known
    for path in paths:
        kept = cache.get_json(NAMESPACE, entry_of(setup, lang, path))
        if not kept or not kept.get("deps") or time.time() - kept.get("recorded", 0) > MAX_AGE_S:
            continue
        if hashes(site, lang, list(kept["deps"]), known) == kept["deps"]:
            found[path] = kept["record"]
    return found


def keep(cache: Cache, shared: Path) -> int:
    """Keeps the pages this run visited (the crawl files in `shared`) for later runs; called
    once the whole test command has passed. How many records were written."""
    written = 0
    for file in sorted(shared.glob("crawl-*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        lang = file.stem.removeprefix("crawl-")
        for path, new in data["new"].items():
            cache.replace_json(NAMESPACE, entry_of(data["setup"], lang, path), new)
            written += 1
    cache.cleanup(NAMESPACE)
    return written
