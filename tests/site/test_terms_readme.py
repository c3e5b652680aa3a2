"""termbase/data/terms/README.md lists the categories and levels the checker accepts: the keys
of ui.yml's `categories:` and `levels:`."""

import re

from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT


def test_the_readme_lists_what_the_checker_accepts():
    ui = TermBase(PROJECT).ui
    text = (PROJECT.terms_dir / "README.md").read_text(encoding="utf-8")
    for field, group in (("category", "categories"), ("level", "levels")):
        listed = re.search(rf"^{field}: \w+ +# (.+)$", text, re.M).group(1).split(" | ")
        assert listed == list(ui[group]), f"README lists {listed} for `{field}:`, ui.yml has {list(ui[group])}"
