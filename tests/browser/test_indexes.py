"""The two indexes as a reader uses them: the A–Z index's letters jump to their section, and
every name in the category index leads to its entry in that name's own language."""

import pytest

from tests.browser.test_reading import prefix
from tests.site.sitetools import LANGS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", LANGS)
def test_a_letter_of_the_az_index_jumps_to_its_names(reader, page, lang):
    with reader.watch("A–Z index"):
        reader.goto(prefix(lang) + "a-z/")
        letters = page.locator("nav.termbase-az-letters a")
        assert letters.count() >= 10
        middle = letters.nth(letters.count() // 2)  # the page can scroll it to the top
        target = middle.get_attribute("href")
        middle.click()
        page.wait_for_function("hash => location.hash === hash", arg=target)
        heading = page.locator(target)
        assert heading.evaluate("h => h.tagName") == "H2"
        top = heading.evaluate("h => h.getBoundingClientRect().top")
        assert 0 <= top < page.viewport_size["height"] / 3, f"{target} is not scrolled into view ({top})"
        # Its names follow it, each pointing to an entry.
        names = page.locator(f"{target} + ul > li")
        assert names.count() >= 1
        assert names.first.locator("a[href*='glossary/']").count() == 1


@pytest.mark.parametrize("lang", LANGS)
def test_every_name_of_the_category_index_leads_to_its_entry(reader, page, lang):
    with reader.watch("glossary index"):
        reader.goto(prefix(lang) + "glossary/")
        cells = page.locator("article table tbody td:not(:last-child)")
        assert cells.count() > 0
        unlinked = page.evaluate("""() => [...document.querySelectorAll('article table tbody td:not(:last-child)')]
            .filter(td => !td.querySelector('a')).map(td => td.textContent)""")
        assert unlinked == []
        tooltips = page.locator("article table a.termbase-term")
        assert tooltips.count() == 0, "the term linker ran inside the index"
        for other in LANGS:
            if other == lang:
                continue
            link = page.locator(f"article table a[hreflang='{other}']").first
            href = link.get_attribute("href")
            assert href.startswith(prefix(other) + "glossary/"), href
            status = page.evaluate("href => fetch(href).then(r => r.status)", href)
            assert status == 200, f"{href}: {status}"
