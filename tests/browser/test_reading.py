"""What a reader of each language sees in a real browser (Debian's Chromium): the page's
language and switcher, search, the copy button, formulas, glossary tooltips, images, privacy
(no request leaves 127.0.0.1), light and dark schemes and a phone-sized screen.

Screenshots of one entry per language (light and dark, desktop and phone) are written to
tests/artifacts/ for a reviewer to look at.
"""

from __future__ import annotations

import html
import re
from urllib.parse import unquote, urlsplit

import pytest

from termbase.core.model import TermBase
from termbase.site.tooltips import plain
from tests.browser.browsertools import DESKTOP, PHONE
from tests.browser.crawl import pages_of, prefix
from tests.site.sitetools import LANGS, PROJECT, page_for

BASE = TermBase(PROJECT)


def terms():
    return BASE.terms


def ui():
    return BASE.ui

pytestmark = pytest.mark.browser

ENTRY = "glossary/multi-head-attention/"  # has a formula, code, a figure and glossary links


def lang_of(path: str) -> str:
    first = path.lstrip("/").split("/", 1)[0]
    return first if first in LANGS and first != "en" else "en"


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --- the page's language and the language switcher -------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_html_lang_and_the_switcher_lands_on_the_same_page(reader, page, lang):
    slug = ENTRY.split("/")[1]
    with reader.watch("language switcher"):
        reader.goto(prefix(lang) + ENTRY)
        for other in LANGS:
            if other == lang:
                continue
            assert page.evaluate("document.documentElement.lang") == lang
            page.locator(".md-header__option .md-select").hover()
            link = page.locator(f".md-select__link[hreflang={other}]")
            assert normalize(link.inner_text()) == ui()["language_name"][other]
            with page.expect_navigation(wait_until="load"):
                link.click()
            assert urlsplit(page.url).path == prefix(other) + ENTRY
            assert page.evaluate("document.documentElement.lang") == other
            title = normalize(page.locator("article h1").inner_text()).lower()
            assert terms()[slug][other]["term"].lower() in title, (title, other)
            page.go_back(wait_until="load")


# --- search --------------------------------------------------------------------------------

# An inflected form the page text may not contain, and the lemma the entries are named with.
# Material adds a trailing wildcard to each query word ("opmærksomheden*") and lunr does not stem
# wildcard words, so these pass only if the query word is stemmed before that (and the index is
# stemmed too, for Spanish accents): a prefix match on the literal word finds only pages that
# happen to contain that very form.
SEARCHES = {
    "en": ("masks", "mask"),
    "es": ("máscaras", "máscara"),
    "da": ("opmærksomheden", "opmærksomhed"),
}


def entries_named_with(lemma: str, lang: str) -> set[str]:
    """Entries whose term or a synonym in `lang` has a word starting with `lemma` (Danish
    compounds included: "opmærksomhedsmaske" is named with "opmærksomhed")."""
    found = set()
    for slug, term in terms().items():
        names = [term[lang]["term"], *term[lang].get("synonyms", [])]
        words = [w for name in names for w in re.split(r"[\s\-/]+", name.lower())]
        if any(w.startswith(lemma) for w in words):
            found.add(slug)
    return found


# Material's state for an empty query: no result, and its placeholder text (which holds no number,
# unlike "3 matching documents").
NO_QUERY = """() => document.querySelectorAll(".md-search-result__item").length === 0
  && !/\\d/.test(document.querySelector(".md-search-result__meta").innerText)"""


def search(page, query: str) -> list[str]:
    """Type `query` into Material's search box (emptied first, if an earlier search left text
    in it); the paths of the results, best first."""
    box = page.locator("input.md-search__input")
    box.click()
    if box.input_value():
        box.fill("")
        page.wait_for_function(NO_QUERY, timeout=10_000)
    meta = page.locator(".md-search-result__meta")
    idle = meta.inner_text()
    # The whole query at once (as pasted), then a key: typed a letter at a time, the worker
    # answered each prefix, and on a busy machine the answer for "cross-atten" could hold still
    # long enough to be read as the answer for "cross-attention" (CI, once).
    box.fill(query)
    box.press("End")
    try:
        page.wait_for_function("([el, idle]) => el.innerText !== idle", arg=[meta.element_handle(), idle], timeout=10_000)
    except Exception:
        pytest.fail(f"search never answered '{query}' (still shows {idle!r})", pytrace=False)
    previous = None
    for _ in range(20):  # results arrive per keystroke from a worker: wait until they settle
        page.wait_for_timeout(150)
        hrefs = page.eval_on_selector_all(".md-search-result__item > a.md-search-result__link", "els => els.map(e => e.href)")
        if hrefs == previous:
            break
        previous = hrefs
    return [unquote(urlsplit(h).path) for h in hrefs]


@pytest.mark.parametrize("lang", LANGS)
def test_search_finds_inflected_forms_in_the_page_language_only(reader, page, lang):
    query, lemma = SEARCHES[lang]
    expected = entries_named_with(lemma, lang)
    assert expected, f"no {lang} entry is named with '{lemma}': update SEARCHES"
    with reader.watch(f"search {query!r}"):
        reader.goto(prefix(lang))
        results = search(page, query)
    assert results, f"{lang}: '{query}' finds nothing"
    other_languages = [p for p in results if lang_of(p) != lang]
    assert not other_languages, f"{lang}: '{query}' finds pages of another language: {other_languages}"
    found = {p.removeprefix(prefix(lang) + "glossary/").strip("/") for p in results if p.startswith(prefix(lang) + "glossary/")}
    first = results[0].removeprefix(prefix(lang) + "glossary/").strip("/")
    assert first in expected, f"{lang}: '{query}' lists {results[0]} first, not one of the entries {sorted(expected)}"
    missing = expected - found
    assert not missing, (
        f"{lang}: '{query}' (inflected '{lemma}') does not find the entries {sorted(missing)} named with '{lemma}'; "
        f"it finds {results}"
    )


# --- the copy button -------------------------------------------------------------------------

def built_code_blocks(site, lang: str, url: str) -> list[str]:
    """The text of each highlighted code block as the build wrote it (what the snippet embeds)."""
    page = page_for(site, lang, url).read_text(encoding="utf-8")
    blocks = re.findall(r'<div class="[^"]*\bhighlight\b[^"]*"><pre[^>]*>(?:<span></span>)?<code[^>]*>(.*?)</code></pre>', page, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", block)).removesuffix("\n") for block in blocks]


@pytest.mark.parametrize("lang", LANGS)
def test_copy_button_puts_exactly_the_code_on_the_clipboard(reader, page, lang):
    built = built_code_blocks(reader.site, lang, ENTRY)
    with reader.watch("copy buttons"):
        reader.goto(prefix(lang) + ENTRY)
        buttons = page.locator("button.md-code__button[data-md-type=copy]")
        assert buttons.count() == len(built) >= 1, f"{buttons.count()} copy buttons for {len(built)} code blocks"
        for i in range(buttons.count()):
            button = buttons.nth(i)
            code = page.locator(button.get_attribute("data-clipboard-target"))
            expected = code.evaluate("el => el.textContent").removesuffix("\n")
            assert expected == built[i], f"block {i}: the page shows other code than the build wrote"
            page.evaluate("navigator.clipboard.writeText('(nothing copied)')")
            button.click()
            copied = page.evaluate("navigator.clipboard.readText()")
            assert copied == expected, f"block {i}: the clipboard holds {copied[:200]!r}..."


# --- formulas --------------------------------------------------------------------------------

LATEX = ("$$", "\\(", "\\[", "\\frac", "\\operatorname", "\\mathrm", "\\text", "\\sqrt", "\\begin", "^{", "_{")


@pytest.mark.parametrize("lang", LANGS)
def test_formulas_are_rendered_as_math_not_raw_latex(reader, page, lang):
    with reader.watch("formulas"):
        reader.goto(prefix(lang) + ENTRY)
    boxes = page.eval_on_selector_all(
        "article math",
        "els => els.map(m => { const r = m.getBoundingClientRect();"
        " return {w: r.width, h: r.height, display: getComputedStyle(m).display, text: m.textContent} })",
    )
    assert len(boxes) >= 2, "the entry shows fewer than two formulas"
    for box in boxes:
        # `display: math` / `block math` only where the browser lays MathML out as math
        assert box["display"] in ("math", "block math", "inline math"), box
        assert box["w"] > 0 and box["h"] > 0, box
    # the article's text outside code and formulas, where LaTeX has no business
    text = page.evaluate(
        "() => { const a = document.querySelector('article').cloneNode(true);"
        " a.querySelectorAll('pre, code, math, script').forEach(e => e.remove()); return a.textContent; }"
    )
    raw = [marker for marker in LATEX if marker in text]
    assert not raw, f"raw LaTeX on the page: {raw}"


# --- glossary tooltips -----------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_glossary_tooltips_show_the_short_definition_in_the_page_language(reader, page, lang):
    with reader.watch("tooltips"):
        reader.goto(prefix(lang) + ENTRY)
        links = page.locator("article a.termbase-term")
        assert links.count() >= 2, "the entry links fewer than two glossary terms"
        for i in range(min(3, links.count())):
            link = links.nth(i)
            slug = link.get_attribute("href").rstrip("/").rsplit("/", 1)[-1]
            link.scroll_into_view_if_needed()
            link.hover()
            tip = page.locator(".md-tooltip2--active .md-tooltip2__inner")
            tip.wait_for(state="visible", timeout=3000)
            shown = normalize(tip.inner_text())
            assert shown == normalize(plain(terms()[slug][lang]["short"])), (slug, shown)
            if lang != "en":
                assert shown != normalize(plain(terms()[slug]["en"]["short"])), f"{slug}: tooltip in English"
            page.mouse.move(0, 0)
            page.wait_for_selector(".md-tooltip2--active", state="detached", timeout=3000)


# --- every page: images, requests, console, phone width --------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_every_page_loads_offline_with_its_images_and_fits_a_phone(crawl, reader, lang):
    """On what the crawl recorded (tests/browser/crawl.py: each page once, on a phone)."""
    pages = crawl.language(lang)
    paths = pages_of(reader.site, lang)
    assert prefix(lang) + ENTRY in paths and len(paths) >= 4
    assert sorted(pages) == sorted(paths), "the crawl did not visit every built page"
    problems, broken, wide, images, breaks, cut = [], [], [], 0, [], []
    for path, seen in pages.items():
        if seen["status"] is None or seen["status"] >= 400:
            problems.append(f"{path}: HTTP {seen['status']}")
        problems += [f"{path}: {p}" for p in seen["problems"]]
        if seen["lang"] != lang:
            problems.append(f"{path}: <html lang={seen['lang']!r}>, not {lang!r}")
        images += len(seen["images"])
        broken += [f"{path}: {src}" for src, ok in seen["images"] if not ok]
        if seen["width"] > PHONE["width"]:
            wide.append(f"{path}: {seen['width']}px")
        breaks += [f"{path}: {b}" for b in seen["breaks"]]
        if seen["title_cut"]:
            cut.append(f"{path}: {seen['title_cut']}")
    assert not problems, (f"reading every {lang} page (requests to other hosts, bad answers, console errors; "
                          "serve everything from the site itself):\n  " + "\n  ".join(problems))
    assert images >= 1, "no page shows an image"
    assert not broken, "images that do not load:\n  " + "\n  ".join(broken)
    assert not wide, (f"pages wider than a {PHONE['width']} px phone (horizontal scrolling; "
                      "make the widest element wrap or scroll in a box of its own):\n  " + "\n  ".join(wide))
    assert not breaks, "inline code broken mid-word on a phone:\n  " + "\n  ".join(breaks)
    assert not cut, "header titles cut on a phone:\n  " + "\n  ".join(cut)


# --- light and dark, desktop and phone -------------------------------------------------------

CONTRAST = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return null;
  const parse = (c) => {
    const m = c.match(/^rgba?\\(([^)]+)\\)$/);
    if (!m) throw new Error("unexpected colour " + c);
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3]));
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = parse(getComputedStyle(n).backgroundColor);
    if (c[3] > 0) layers.push(c);
    if (c[3] >= 1) break;
  }
  let bg = [255, 255, 255];  // the canvas
  for (const layer of layers.reverse()) bg = over(layer, bg);
  const fg = over(parse(getComputedStyle(el).color), bg);
  const lum = (rgb) => {
    const [r, g, b] = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return {ratio: (hi + 0.05) / (lo + 0.05), fg: fg.map(Math.round), bg: bg.map(Math.round)};
}"""

READABLE = {
    "body text": "article.md-content__inner > p",
    "glossary link": "article a.termbase-term",
    "summary box": "article .admonition > p:not(.admonition-title)",
    "code": "article pre > code",
}
SCHEMES = {"light": "default", "dark": "slate"}


@pytest.mark.parametrize("lang", LANGS)
def test_light_and_dark_are_readable_on_desktop_and_phone(reader, page, lang, artifacts):
    name = ENTRY.strip("/").rsplit("/", 1)[-1]
    for scheme, material_scheme in SCHEMES.items():
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size(DESKTOP)
        with reader.watch(scheme):
            reader.forget_palette()  # Material keeps the palette it picked first
            reader.goto(prefix(lang) + ENTRY)
        assert page.evaluate("document.body.dataset.mdColorScheme") == material_scheme, scheme
        # Links and code fade to the scheme's colours (Material: `transition: color 125ms`)
        # once its script has picked the scheme: measured during the fade, they have neither
        # scheme's colour. (An animation that never ends, which the site has none of, would
        # make this wait time out.)
        page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')", timeout=5000)
        for device, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            for what, selector in READABLE.items():
                result = page.evaluate(CONTRAST, selector)
                assert result is not None, f"{selector} not on the page"
                assert result["ratio"] >= 4.5, f"{scheme}/{device}: {what} contrast {result['ratio']:.2f} < 4.5 ({result})"
            if device == "phone":
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= PHONE["width"], f"{scheme}: the page is {width}px wide on a {PHONE['width']}px phone"
            page.screenshot(path=artifacts / f"{lang}-{name}-{scheme}-{device}.png", full_page=True)
