"""The models table as a reader sees it: at 1280 and 1920 px every column of every row is in
view without scrolling sideways and a row is at most two lines of text high; on a 390 px phone
the table scrolls sideways with the model's name kept in view, so that no cell is out of reach.
Screenshots of the three widths go to tests/artifacts/."""

import statistics

import pytest

from tests.browser.browsertools import ARTIFACTS
from tests.browser.test_reading import prefix
from tests.site.sitetools import LANGS

pytestmark = pytest.mark.browser

WIDTHS = {"desktop-1280": (1280, 900), "desktop-1920": (1920, 1080), "phone-390": (390, 844)}
MEASURE = """() => {
  const table = document.querySelector('.termbase-models table');
  const wrap = table.closest('.md-typeset__scrollwrap') || table.parentElement;
  const rows = [...table.querySelectorAll('tbody tr')];
  const line = parseFloat(getComputedStyle(table.querySelector('tbody td')).lineHeight);
  return {rows: rows.length, heights: rows.map(r => r.getBoundingClientRect().height), line,
          scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth,
          overflow: getComputedStyle(wrap).overflowX,
          columns: table.querySelectorAll('thead th').length};
}"""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("size", WIDTHS)
def test_the_models_table_fits_or_scrolls_with_the_name_in_view(reader, page, lang, size):
    width, height = WIDTHS[size]
    page.set_viewport_size({"width": width, "height": height})
    try:
        with reader.watch("models"):
            reader.goto(prefix(lang) + "models/")
            page.locator(".termbase-models table").scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"models-{lang}-{size}.png"), full_page=True)
            found = page.evaluate(MEASURE)
            assert found["rows"] >= 10 and found["columns"] >= 10
            if size.startswith("desktop"):
                assert found["scrollWidth"] <= found["clientWidth"] + 1, f"{size}: the table scrolls sideways ({found})"
                assert statistics.median(found["heights"]) <= 2 * found["line"] + 16, found
                return
            # On the phone: the table scrolls, and the first column stays while it does.
            assert found["overflow"] in ("auto", "scroll") or found["scrollWidth"] <= found["clientWidth"]
            first = page.locator(".termbase-models tbody tr:first-child td:first-child")
            last = page.locator(".termbase-models tbody tr:first-child td:last-child")
            left = first.evaluate("c => c.getBoundingClientRect().left")
            page.evaluate("""() => { const t = document.querySelector('.termbase-models table');
                                     const w = t.closest('.md-typeset__scrollwrap') || t.parentElement;
                                     w.scrollLeft = w.scrollWidth; }""")
            page.wait_for_timeout(100)
            assert abs(first.evaluate("c => c.getBoundingClientRect().left") - left) < 2, "the name scrolled away"
            right = last.evaluate("c => c.getBoundingClientRect().right")
            assert right <= width + 1, f"the last column is out of reach ({right} > {width})"
            page.screenshot(path=str(ARTIFACTS / f"models-{lang}-{size}-scrolled.png"))
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
