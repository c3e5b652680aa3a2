"""Accessibility of the built site in Chromium: no axe-core violation of the WCAG 2.1 A and AA
rules on every kind of page, light and dark, in every language; a visible focus ring on every
element the keyboard reaches; each entry figure in the variant of the scheme shown; nothing cut
off on a phone (what is wider scrolls and shows it); snippet lines that fit the code box on a
desktop; and no English interface text on the Spanish and Danish pages.

axe-core is the copy the pinned axe-playwright-python wheel ships (requirements.txt); it is
injected once per page load and run in both schemes of that load (Material's palette toggle).
The axe runs, the interface texts, the snippet box widths and the figures shown in each scheme
are recorded by the crawl that visits each page once (tests/browser/crawl.py); the tests here assert on that record, and
drive the browser themselves only where they interact (Tab, the toggle, search, copying). Its colour-contrast rule sees
the code blocks and formulas of one page (an entry); on the others their colours are measured
by CODE_AND_MATH_CONTRAST, which is much faster on long pages (a11ytools.AXE_START).
"""

from __future__ import annotations

import re

import pytest

from tests.browser import a11ytools as a11y
from tests.browser.browsertools import DESKTOP, PHONE
from tests.browser.crawl import FULL_AXE, KINDS, pages_with_snippets, prefix
from tests.site.sitetools import LANGS

pytestmark = pytest.mark.browser

# One page of each kind, where the crawl (tests/browser/crawl.py) runs axe and reads the texts.
PAGES = KINDS


# --- axe-core: WCAG 2.1 A and AA -------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_no_wcag_violations_on_any_kind_of_page_light_and_dark(crawl, lang):
    """On what the crawl recorded: axe-core on one page of each kind, in both schemes."""
    pages = crawl.language(lang)
    found, axe = [], None
    for path in PAGES:
        url = prefix(lang) + path
        seen = pages.get(url)
        assert seen is not None and "axe" in seen, f"the crawl did not run axe on {url}"
        assert sorted(seen["axe"]) == ["dark", "light"], f"{url}: axe ran in {sorted(seen['axe'])} only"
        axe = seen["axe_version"]
        for scheme, result in seen["axe"].items():
            where = f"{url} ({scheme})"
            for violation in result["violations"]:
                for node in violation["nodes"]:
                    found.append(f"{where}: {violation['id']} - {violation['help']}\n"
                                 f"      at {node['target']}\n      {node['summary'][:300]}")
            if path not in FULL_AXE:
                found += [f"{where}: code or formula colour-contrast {low}" for low in result["code_and_math_low"]]
    assert not found, f"axe-core {axe}, {len(found)} violation(s) of {a11y.WCAG_TAGS}:\n  " + "\n  ".join(found)


# --- the keyboard ----------------------------------------------------------------------------

FOCUS_PAGES = ("", "glossary/", "glossary/causal-mask/", "notebooks/cross-attention-encoder-decoder/")


@pytest.mark.parametrize("scheme", sorted(a11y.SCHEMES))
def test_every_element_the_keyboard_reaches_shows_a_focus_ring(reader, page, scheme):
    problems, stops = [], 0
    for size, paths in ((DESKTOP, FOCUS_PAGES), (PHONE, ("glossary/causal-mask/",))):
        page.set_viewport_size(size)
        for path in paths:
            reader.goto("/" + path)
            a11y.prepare(page)
            a11y.set_scheme(page, scheme)
            rings = a11y.tab_through(page)
            assert len(rings) >= 10, f"/{path}: Tab reaches only {len(rings)} elements"
            stops += len(rings)
            problems += [f"/{path} ({size['width']} px): {r['element']} {r['problem']}" for r in rings if r["problem"]]
    assert not problems, f"{len(problems)} of {stops} focus stops without a visible ring:\n  " + "\n  ".join(problems)


def test_notebook_outputs_wider_than_the_page_can_be_scrolled_from_the_keyboard(reader, page):
    reader.goto("/notebooks/cross-attention-encoder-decoder/")
    wide = page.evaluate_handle(
        "() => [...document.querySelectorAll('article .jp-OutputArea-output')].filter(e => e.scrollWidth > e.clientWidth + 1)")
    count = page.evaluate("els => els.length", wide)
    assert count, f"no notebook output is wider than its box at {DESKTOP['width']} px: pick another page"
    tabindex = page.evaluate("els => els.map(e => e.tabIndex)", wide)
    assert all(t == 0 for t in tabindex), f"outputs that scroll but are not in the tab order (tabIndex {tabindex})"
    output = page.evaluate_handle("els => els[0]", wide).as_element()
    output.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("e => e.scrollLeft > 0", arg=output, timeout=3000)


# --- figures in both schemes -----------------------------------------------------------------

def entries_with_figures(site, lang: str) -> list[str]:
    root = site if lang == "en" else site / lang
    return sorted(f"{prefix(lang)}glossary/{p.parent.name}/" for p in (root / "glossary").glob("*/index.html")
                  if "#only-dark" in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", LANGS)
def test_each_entry_figure_is_shown_in_the_variant_of_the_scheme(crawl, reader, lang):
    """On what the crawl recorded (tests/browser/crawl.py: figures_in_both_schemes), for every
    entry with a figure in every language; tests/site/test_figures.py checks that each light and
    dark file is what the code draws."""
    entries = entries_with_figures(reader.site, lang)
    assert len(entries) >= 5, f"only {len(entries)} {lang} entries have a figure with a dark version"
    pages = crawl.language(lang)
    wrong = []
    for url in entries:
        seen = pages.get(url, {}).get("figures")
        assert seen is not None and sorted(seen) == ["dark", "light"], f"the crawl did not look at the figures of {url}"
        for scheme, found in seen.items():
            figures = found["figures"]
            shown = [f for f in figures if f["shown"]]
            want = "#only-dark" if scheme == "dark" else "#only-light"
            if found["timeout"]:
                wrong.append(f"{url} ({scheme}): the figures shown did not finish loading in 10 s")
            if not shown:
                wrong.append(f"{url} ({scheme}): no figure shown")
            for f in shown:
                dark_file = f["src"].split("#")[0].endswith("-dark.svg")
                if not f["src"].endswith(want) or dark_file != (scheme == "dark"):
                    wrong.append(f"{url} ({scheme}): shows {f['src']}")
                if not (f["complete"] and f["width"] > 0):
                    wrong.append(f"{url} ({scheme}): {f['src']} did not load (naturalWidth {f['width']})")
            if found["hidden_links"] != len(figures) - len(shown):
                wrong.append(f"{url} ({scheme}): the links of the hidden variants are still shown")
    assert not wrong, "\n  ".join(["figures in the wrong variant:"] + wrong)


# --- phone and desktop -----------------------------------------------------------------------

# Long pages with wide formulas, tables, code and notebook outputs.
LONG_PAGES = (
    "faq/common-mistakes/",
    "glossary/scaled-dot-product-attention/",
    "glossary/multi-head-attention/",
    "glossary/",
    "a-z/",
    "notation/",
    "benchmarks/",
    "status/",
    "notebooks/cross-attention-encoder-decoder/",
)


def test_on_a_phone_nothing_is_cut_off_and_what_scrolls_shows_it(reader, page):
    page.set_viewport_size(PHONE)
    problems, overflowing = [], 0
    for path in LONG_PAGES:
        reader.goto("/" + path)
        a11y.prepare(page)
        page.evaluate("document.querySelectorAll('article details').forEach(d => d.open = true)")
        for scheme in a11y.each_scheme(page):
            result = page.evaluate(a11y.SCROLL_AFFORDANCE)
            overflowing += result["overflowing"]
            problems += [f"/{path} ({scheme}): {p}" for p in result["problems"]]
    assert overflowing >= 5, f"only {overflowing} boxes overflow a {PHONE['width']} px screen: the test checks little"
    assert not problems, f"on a {PHONE['width']} px phone:\n  " + "\n  ".join(problems)


def test_on_a_desktop_snippet_lines_fit_the_code_box(crawl, reader):
    # Every English page with snippets; the code and the layout are the same in every
    # language, so Spanish and Danish are checked on the page with the most blocks (as the
    # crawl measured them, tests/browser/crawl.py: pages_with_snippets).
    paths = {lang: pages_with_snippets(reader.site, lang) for lang in LANGS}
    assert sum(len(p) for p in paths.values()) >= 10
    wide, blocks = [], 0
    for lang in LANGS:
        pages = crawl.language(lang)
        for path in paths[lang]:
            assert "code_widths" in pages.get(path, {}), f"the crawl did not measure the code boxes of {path}"
            for block in pages[path]["code_widths"]:
                blocks += 1
                if block["scroll"] > block["client"]:
                    wide.append(f"{path}: {block['scroll']} px of code in a {block['client']} px box, "
                                f"longest line ({len(block['line'])} characters): {block['line']!r}")
    assert blocks >= 20
    assert not wide, (f"snippet code wider than its box at {DESKTOP['width']} px (shorten the line or break it):\n  "
                      + "\n  ".join(wide))


# --- no English interface text on the other languages' pages ---------------------------------

# Material's English strings (its own language file), and the ones the site or Python-Markdown
# write in English unless told otherwise. A string is English only where the language's own
# translation differs ("Navigation" is Danish too).
EXTRA_ENGLISH = ("Permanent link", "Made with", "Link to this section")


def english_strings(lang: str) -> list[str]:
    english, own = a11y.material_strings("en"), a11y.material_strings(lang)
    # (the blog plugin is not used here, and its "in" is a word of the prose)
    strings = {v for k, v in english.items()
               if k not in a11y.NOT_SHOWN and not k.startswith("blog.") and own.get(k) != v}
    strings |= {s for s in EXTRA_ENGLISH if s not in own.values()}
    # a count such as "# matching documents" is matched with any number
    return sorted(strings, key=len, reverse=True)


def pattern(string: str) -> re.Pattern:
    body = r"\d+".join(re.escape(part) for part in string.split("#"))
    # A word joined by a hyphen is part of a name ("Qwen3-Next"), not an interface string.
    return re.compile(r"(?<![\w-])" + body + r"(?![\w-])")


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "en"])
def test_no_english_interface_text(crawl, reader, page, lang):
    patterns = [(s, pattern(s)) for s in english_strings(lang)]
    # The interface is the template's: one page of each kind shows all of it (the prose is the
    # checker's business, on every page).
    paths = [prefix(lang) + path for path in PAGES]
    found = set()

    def scan(url, texts):
        for item in texts:
            for string, regex in patterns:
                if regex.search(item["text"]):
                    found.add(f"{url}: {string!r} in the {item['what']} of {item['where']}: {item['text'][:100]!r}")

    pages = crawl.language(lang)  # the texts as the crawl read them (tests/browser/crawl.py)
    for path in paths:
        assert "texts" in pages.get(path, {}), f"the crawl did not read the texts of {path}"
        scan(path, pages[path]["texts"])
    # What Material's script writes once the reader does something: search, and a copied block.
    reader.goto(prefix(lang) + "glossary/causal-mask/")
    page.locator("input.md-search__input").click()
    scan("search", page.evaluate(a11y.PAGE_TEXTS))
    page.keyboard.press("Escape")
    page.locator("button.md-code__button[data-md-type=copy]").first.click()
    page.wait_for_selector(".md-dialog--active", timeout=3000)
    scan("copy", page.evaluate(a11y.PAGE_TEXTS))
    assert not found, f"English interface text on {lang} pages:\n  " + "\n  ".join(sorted(found))


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "en"])
def test_the_light_dark_toggle_is_named_in_the_page_language(reader, page, lang):
    reader.goto(prefix(lang))
    names = page.eval_on_selector_all(
        "form[data-md-component=palette] label, form[data-md-component=palette] input",
        "els => els.flatMap(e => [e.getAttribute('title'), e.getAttribute('aria-label')]).filter(Boolean)")
    assert names
    english = [n for n in names if re.search(r"(?<!\w)(Dark|Light)(?!\w)", n)]
    assert not english, f"{lang}: the toggle is named in English too: {english}"
