"""Helpers for the accessibility and layout tests: axe-core (pinned in requirements.txt, as the
axe.min.js that the axe-playwright-python wheel ships), Material's light/dark switch, and the
checks that run in the page (focus rings, scroll shadows, English interface strings)."""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

import pytest

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SCHEMES = {"light": "default", "dark": "slate"}  # ours -> Material's data-md-color-scheme


@functools.cache
def axe_source() -> str:
    try:
        return (resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
    except ModuleNotFoundError:
        pytest.fail("axe-core is missing: `.venv/bin/pip install -r requirements.txt` "
                    "(it comes with the axe-playwright-python package)", pytrace=False)


def axe_version(page) -> str:
    return page.evaluate("axe.version")


# Colour transitions (Material fades colours for .25 s on a scheme change) would be measured
# halfway; nothing else of the page is changed.
NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; }"


def prepare(page, *, axe: bool = False) -> None:
    """After a page load: no colour transitions, and axe-core injected (once per load)."""
    page.add_style_tag(content=NO_TRANSITIONS)
    if axe:
        page.evaluate(axe_source())


def scheme_of(page) -> str:
    material = page.evaluate("document.body.dataset.mdColorScheme")
    return {v: k for k, v in SCHEMES.items()}[material]


def each_scheme(page):
    """Both schemes, the page's current one first (the one the last page was left in: Material
    keeps it), each switched to with set_scheme before it is yielded."""
    first = scheme_of(page)
    for scheme in (first, {"light": "dark", "dark": "light"}[first]):
        set_scheme(page, scheme)
        yield scheme


def set_scheme(page, scheme: str) -> None:
    """Switch with Material's own palette toggle (as a reader does: it sets every palette
    attribute on <body> and remembers the choice for the next pages)."""
    if scheme_of(page) == scheme:
        return
    page.evaluate("document.querySelector('form[data-md-component=palette] label:not([hidden])').click()")
    page.wait_for_function("s => document.body.dataset.mdColorScheme === s", arg=SCHEMES[scheme], timeout=5000)


# Two frames, so that what a ResizeObserver saw in the first has been delivered (its callbacks
# run after the frame's requestAnimationFrame callbacks); a second at most, should frames stop.
TWO_FRAMES_JS = """
  const TWO_FRAMES = () => Promise.race([
    new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
    new Promise((done) => setTimeout(done, 1000))]);
"""


# Started without waiting for it (so that pages in other tabs, each in a renderer process of
# its own, are checked at the same time), then collected. Code blocks and formulas are most of
# the elements of a long page, and axe's colour-contrast rule costs the most per element: on a
# page that is not `full`, that one rule leaves them out, and CODE_AND_MATH_CONTRAST measures
# their colours instead (every other rule sees the whole page, always).
AXE_START = "([tags, full]) => {" + TWO_FRAMES_JS + """
  const options = {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]};
  window.__termbaseAxe = (async () => {
    await TWO_FRAMES();  // after a resize, the scroll shadows as scroll-shadows.js leaves them
    let found = (await axe.run(document, full ? options : {...options, rules: {"color-contrast": {enabled: false}}})).violations;
    if (!full) {
      const contrast = await axe.run({exclude: [["pre > code"], ["math"]]},
                                     {runOnly: {type: "rule", values: ["color-contrast"]}, resultTypes: ["violations"]});
      found = found.concat(contrast.violations);
    }
    return found.map(v => ({
      id: v.id, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.flat(Infinity).join(" >>> "),
                                summary: (n.failureSummary || "").replace(/\\s+/g, " ").trim()})),
    }));
  })();
}"""


def start_axe(page, *, full: bool) -> None:
    page.evaluate(AXE_START, [WCAG_TAGS, full])


def axe_violations(page) -> list[dict]:
    """The violations of the run `start_axe` started on this page."""
    return page.evaluate("() => window.__termbaseAxe")


# --- colours, in the page -------------------------------------------------------------------

COLOUR_JS = r"""
const parseColour = (c) => {
  const m = c.match(/^rgba?\(([^)]+)\)$/);
  if (!m) return null;
  const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
};
const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3]));
const backgroundOf = (el) => {
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = parseColour(getComputedStyle(n).backgroundColor);
    if (c && c[3] > 0) layers.push(c);
    if (c && c[3] >= 1) break;
  }
  let bg = [255, 255, 255];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  return bg;
};
const luminance = (rgb) => {
  const [r, g, b] = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => { const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
const describe = (el) => {
  let s = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "");
  if (typeof el.className === "string" && el.className.trim()) s += "." + el.className.trim().split(/\s+/).join(".");
  const href = el.getAttribute("href");
  if (href) s += `[href="${href}"]`;
  const text = (el.innerText || el.getAttribute("aria-label") || el.getAttribute("title") || "").trim().replace(/\s+/g, " ");
  return text ? `${s} "${text.slice(0, 40)}"` : s;
};
"""

# The focused element's ring: Material shows the focus of its hidden palette radio on the label
# that follows it; the ring is an outline (or a box-shadow) with 3:1 contrast against what
# surrounds it (WCAG 1.4.11), drawn on an element that is on screen.
FOCUS_RING = "() => {" + COLOUR_JS + r"""
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  let shown = el;
  const rect0 = el.getBoundingClientRect();
  if (rect0.width === 0 && rect0.height === 0) {
    // a visually hidden control: its ring is on the label shown for it (Material's palette
    // radios show a label for the other scheme, and none of them is checked after a reload)
    const labels = [el.nextElementSibling, ...(el.labels || []), ...(el.form ? el.form.querySelectorAll("label") : [])];
    shown = labels.find(l => l && l.tagName === "LABEL" && !l.hidden && l.getClientRects().length) || el;
  }
  const s = getComputedStyle(shown);
  const r = shown.getBoundingClientRect();
  const result = {element: describe(el), problem: null, ratio: null};
  if (r.width === 0 && r.height === 0) { result.problem = "has no size on screen"; return result; }
  if (r.bottom <= 0 || r.top >= innerHeight || r.right <= 0 || r.left >= innerWidth) {
    result.problem = "is off screen"; return result;
  }
  let colour = null;
  if (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1) colour = parseColour(s.outlineColor);
  else if (s.boxShadow && s.boxShadow !== "none") colour = parseColour((s.boxShadow.match(/rgba?\([^)]+\)/) || [""])[0]);
  if (!colour || colour[3] === 0) { result.problem = "has no outline or box-shadow"; return result; }
  const around = parseFloat(s.outlineOffset) < 0 ? shown : shown.parentElement;
  const bg = backgroundOf(around);
  result.ratio = ratio(over(colour, bg), bg);
  if (result.ratio < 3) result.problem = `ring contrast ${result.ratio.toFixed(2)}:1 < 3:1 (${s.outlineColor} on rgb(${bg.map(Math.round)}))`;
  return result;
}"""


def tab_through(page, limit: int = 400) -> list[dict]:
    """Press Tab from the top of the page until the focus comes back round (or leaves the page);
    the focus ring of every element it stops at."""
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    rings, first = [], None
    for _ in range(limit):
        page.keyboard.press("Tab")
        ring = page.evaluate(FOCUS_RING)
        if ring is None or ring["element"] == first:
            break
        first = first or ring["element"]
        rings.append(ring)
    return rings


# The text of code blocks (each highlighted token) and formulas against its background, by
# WCAG's formula, as axe's colour-contrast rule measures it for text of normal size (4.5:1).
CODE_AND_MATH_CONTRAST = "() => {" + COLOUR_JS + r"""
  const low = [];
  let checked = 0;
  for (const el of document.querySelectorAll("article pre > code, article pre > code *, article math, article math *")) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.nodeValue.trim())) continue;
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    const colour = parseColour(getComputedStyle(el).color);
    if (!colour) continue;
    checked++;
    const bg = backgroundOf(el);
    const r = ratio(over(colour, bg), bg);
    if (r < 4.5) low.push(`${describe(el)}: ${r.toFixed(2)}:1 (rgb(${over(colour, bg).map(Math.round)}) on rgb(${bg.map(Math.round)}))`);
  }
  return {checked, low};
}"""


# --- scroll affordances, in the page --------------------------------------------------------

# A formula, table, code block or notebook output either fits the screen, or lies in a box that
# scrolls sideways (for a table, Material's .md-typeset__scrollwrap) and shows it: the scroll shadows of docs/assets/site.css, i.e. four gradient
# background layers attached `local, local, scroll, scroll` (two covers that move with the
# content over two shadows fixed at the edges) while the box has more to show; a box that fits
# has none (docs/assets/javascripts/scroll-shadows.js, which measures boxes before the next
# frame is painted: the check waits for two frames, after whatever the caller opened or resized).
SCROLL_AFFORDANCE = "async () => {" + COLOUR_JS + TWO_FRAMES_JS + r"""
  await TWO_FRAMES();
  const kinds = "div.termbase-math, span.termbase-math, table, pre > code, .jp-OutputArea-output";
  // the boxes that carry the shadows (site.css, scroll-shadows.js)
  const BOXES = ".md-typeset pre > code, div.termbase-math, .md-typeset__scrollwrap, " +
                ".md-typeset table:not([class]), .jp-OutputArea-output";
  const width = document.documentElement.clientWidth;
  const scrolls = (e) => { const s = getComputedStyle(e); return s.display !== "inline" && /(auto|scroll)/.test(s.overflowX); };
  const problems = [], overflowing = [];
  for (const el of document.querySelectorAll("article " + kinds.split(", ").join(", article "))) {
    if (!el.getClientRects().length) continue;  // not shown (a closed <details>)
    // the box that scrolls it into view: itself or the nearest ancestor with more to show
    let box = null;
    for (let e = el; e && e.tagName !== "ARTICLE"; e = e.parentElement)
      if (scrolls(e) && e.scrollWidth > e.clientWidth + 1) { box = e; break; }
    const r = (box || el).getBoundingClientRect();
    if (r.left < -1 || r.right > width + 1) {
      problems.push(`${describe(el)} is cut off: ${Math.round(r.left)}..${Math.round(r.right)} px on a ${width} px screen`);
      continue;
    }
    if (!box)  // it fits, and so does the wrapper Material put a table in
      for (const fits of [el, el.parentElement.closest(".md-typeset__scrollwrap")])
        if (fits && fits.matches(BOXES) && getComputedStyle(fits).backgroundImage !== "none")
          problems.push(`${describe(fits)} fits (${fits.scrollWidth} px in ${fits.clientWidth}) yet has scroll shadows`);
    if (!box || overflowing.includes(box)) continue;
    overflowing.push(box);
    const s = getComputedStyle(box);
    const gradients = (s.backgroundImage.match(/gradient\(/g) || []).length;
    if (gradients < 4 || !s.backgroundAttachment.startsWith("local, local, scroll, scroll"))
      problems.push(`${describe(box)} scrolls (${box.scrollWidth} px in ${box.clientWidth}) without scroll shadows ` +
                    `(background-image: ${s.backgroundImage.slice(0, 60)}; background-attachment: ${s.backgroundAttachment})`);
  }
  return {problems, overflowing: overflowing.length};
}"""


# --- interface strings ----------------------------------------------------------------------

def material_strings(lang: str) -> dict[str, str]:
    """Material's interface strings for `lang`, from its own language file
    (material/templates/partials/languages/<lang>.html)."""
    import material

    path = Path(material.__file__).parent / "templates" / "partials" / "languages" / f"{lang}.html"
    text = path.read_text(encoding="utf-8")
    return {k: v.replace('\\"', '"') for k, v in re.findall(r'^\s*"([\w.]+)": "((?:[^"\\]|\\.)*)"', text, re.M)}


# Not interface text, or not shown: the language's code, the search configuration, and counts
# written with "#" for the script to fill in.
NOT_SHOWN = ("language", "direction", "search.config.lang", "search.config.pipeline", "search.config.separator")

# What a page shows and says: the visible text (outside code, formulas and anything marked as
# being in another language, such as the language switcher's "English"), and the title,
# aria-label, alt and placeholder of every element.
PAGE_TEXTS = "() => {" + COLOUR_JS + r"""
  const lang = document.documentElement.lang;
  const skip = (el) => el.closest("pre, code, math, script, style, kbd, samp, svg") ||
                       el.closest(`[lang]:not([lang="${lang}"])`);
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.nodeValue.trim();
    if (!text || !el || skip(el) || !el.checkVisibility({visibilityProperty: true, opacityProperty: false})) continue;
    out.push({where: describe(el), what: "text", text});
  }
  for (const el of document.querySelectorAll("[title], [aria-label], [alt], [placeholder]")) {
    if (skip(el)) continue;
    for (const attr of ["title", "aria-label", "alt", "placeholder"])
      if (el.hasAttribute(attr)) out.push({where: describe(el), what: attr, text: el.getAttribute(attr)});
  }
  return out;
}"""
