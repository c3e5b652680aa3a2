"""The models tables as a reader sees them: at 1280 and 1920 px every column of every row of both
tables is in view without scrolling sideways and a row is at most two lines of text high; on a
390 px phone each table scrolls sideways with the model's name kept in view, so that no cell is
out of reach. Screenshots of the three widths go to tests/artifacts/."""

import statistics

import pytest

from tests.browser.browsertools import ARTIFACTS
from tests.browser.test_reading import prefix
from tests.site.sitetools import LANGS

pytestmark = pytest.mark.browser

WIDTHS = {"desktop-1280": (1280, 900), "desktop-1920": (1920, 1080), "phone-390": (390, 844)}
MEASURE = """(index) => {
  const table = document.querySelectorAll('.termbase-models table')[index];
  const wrap = table.closest('.md-typeset__scrollwrap') || table.parentElement;
  const rows = [...table.querySelectorAll('tbody tr')];
  const line = parseFloat(getComputedStyle(table.querySelector('tbody td')).lineHeight);
  return {rows: rows.length, heights: rows.map(r => r.getBoundingClientRect().height), line,
          scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth,
          overflow: getComputedStyle(wrap).overflowX,
          columns: table.querySelectorAll('thead th').length};
}"""
SCROLL_RIGHT = """(index) => { const t = document.querySelectorAll('.termbase-models table')[index];
                              const w = t.closest('.md-typeset__scrollwrap') || t.parentElement;
                              w.scrollLeft = w.scrollWidth; }"""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("size", WIDTHS)
def test_the_models_table_fits_or_scrolls_with_the_name_in_view(reader, page, lang, size):
    width, height = WIDTHS[size]
    page.set_viewport_size({"width": width, "height": height})
    try:
        with reader.watch("models"):
            reader.goto(prefix(lang) + "models/")
            page.locator(".termbase-models table").first.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"models-{lang}-{size}.png"), full_page=True)
            tables = page.locator(".termbase-models table")
            assert tables.count() == 2, "the heads-and-positions table and the layer-kinds table"
            measured = [page.evaluate(MEASURE, index) for index in range(2)]
            assert all(found["rows"] >= 10 for found in measured)
            assert sum(found["columns"] for found in measured) >= 16, measured
            for index, found in enumerate(measured):
                if size.startswith("desktop"):
                    assert found["scrollWidth"] <= found["clientWidth"] + 1, \
                        f"{size}: table {index + 1} scrolls sideways ({found})"
                    assert statistics.median(found["heights"]) <= 2 * found["line"] + 16, found
                    continue
                # On the phone: the table scrolls, and the first column stays while it does.
                assert found["overflow"] in ("auto", "scroll") or found["scrollWidth"] <= found["clientWidth"]
                table = tables.nth(index)
                table.scroll_into_view_if_needed()
                first = table.locator("tbody tr:first-child td:first-child")
                last = table.locator("tbody tr:first-child td:last-child")
                left = first.evaluate("c => c.getBoundingClientRect().left")
                page.evaluate(SCROLL_RIGHT, index)
                page.wait_for_timeout(100)
                assert abs(first.evaluate("c => c.getBoundingClientRect().left") - left) < 2, "the name scrolled away"
                right = last.evaluate("c => c.getBoundingClientRect().right")
                assert right <= width + 1, f"table {index + 1}: the last column is out of reach ({right} > {width})"
                page.screenshot(path=str(ARTIFACTS / f"models-{lang}-{size}-{index + 1}-scrolled.png"))
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
