"""A build reuses the pages of the last clean build only when nothing they are made from has
changed (termbase/site/page_cache.py): the same site byte for byte, and never an old tooltip."""

import filecmp
import re

from tests.site.sitetools import LANGS, copy_project, mkdocs_build, page_for

REUSED = re.compile(r"termbase: (\w+): (\d+) page\(s\) made from the same inputs")
RECORD = "termbase/data/terms/softmax.yml"
OLD, NEW = "into positive weights that sum to 1", "into positive weights that add up to 1"


def _reused(result) -> dict[str, int]:
    return {lang: int(n) for lang, n in REUSED.findall(result.stdout + result.stderr)}


def _differences(a, b) -> list[str]:
    """Paths under `a` and `b` that are missing on one side or differ in content."""
    found, stack = [], [filecmp.dircmp(a, b)]
    while stack:
        cmp = stack.pop()
        found += cmp.left_only + cmp.right_only + cmp.funny_files
        found += [name for name in cmp.common_files if not filecmp.cmp(f"{cmp.left}/{name}", f"{cmp.right}/{name}",
                                                                       shallow=False)]
        stack += cmp.subdirs.values()
    return found


def test_a_warm_build_reuses_every_page_and_an_edited_record_renders_them_all_again(tmp_path):
    """`-q`, then a build that stores, one that reuses, and one after a record was edited."""
    project = copy_project(tmp_path / "project")
    stored = project / ".termbase-cache" / "pages"
    quiet = mkdocs_build(project, tmp_path / "quiet", "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert not stored.exists(), "-q hides warnings: a build that cannot see them stores nothing"
    first = mkdocs_build(project, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    assert _reused(first) == {} and len(list(stored.iterdir())) == len(LANGS), first.stderr

    warm = mkdocs_build(project, tmp_path / "warm")
    assert warm.returncode == 0, warm.stderr
    pages = len(list((tmp_path / "first").glob("glossary/*/index.html")))
    assert set(_reused(warm)) == set(LANGS) and min(_reused(warm).values()) > pages, warm.stderr
    assert _differences(tmp_path / "first", tmp_path / "warm") == []

    # A tooltip on another entry's page comes from this record: it must never be served old.
    record = project / RECORD
    text = record.read_text(encoding="utf-8")
    assert OLD in text
    record.write_text(text.replace(OLD, NEW, 1), encoding="utf-8")
    edited = mkdocs_build(project, tmp_path / "edited")
    assert edited.returncode == 0, edited.stderr
    assert _reused(edited) == {}, "one changed input renders every page again"
    weights = page_for(tmp_path / "edited", "en", "glossary/attention-weights").read_text(encoding="utf-8")
    assert NEW in weights and OLD not in weights
