"""What you copy is what we tested: every Python block of the built site, in every language,
runs as copied with a fresh interpreter from an empty directory and prints something."""

from tests import snippet_blocks
from tests.site.sitetools import LANGS, python_blocks


def _pages(site):
    for page in sorted(site.rglob("index.html")):
        rel = page.relative_to(site).as_posix()
        lang = rel.split("/", 1)[0] if rel.split("/", 1)[0] in ("es", "da") else "en"
        yield lang, rel.removeprefix(f"{lang}/") if lang != "en" else rel, page


def test_same_blocks_in_every_language(built_site):
    site, _ = built_site
    by_page = {}
    for lang, url, page in _pages(site):
        by_page.setdefault(url, {})[lang] = python_blocks(page)
    assert by_page
    for url, blocks in by_page.items():
        assert set(blocks) == set(LANGS), url
        assert blocks["en"] == blocks["es"] == blocks["da"], f"{url}: code differs between languages"


def test_every_block_runs_as_copied(built_site):
    site, _ = built_site
    blocks = {}
    for lang, url, page in _pages(site):
        for code in python_blocks(page):
            blocks.setdefault(code, f"{lang}/{url}")
    assert blocks, "the site shows no Python block at all"
    # Fresh interpreter, empty directory; a program the snippet tests already ran in this
    # session (the same text) is not run twice.
    results = [(where, code, snippet_blocks.run_once(code)) for code, where in blocks.items()]
    failures = [
        f"{where}: exit {r.returncode}\n--- code ---\n{code}\n--- stderr ---\n{r.stderr[-2000:]}"
        for where, code, r in ((w, c, f.result()) for w, c, f in results)
        if r.returncode != 0 or not r.stdout.strip()
    ]
    assert not failures, "\n\n".join(failures)


def test_a_failing_block_is_reported():
    # The runner itself must catch a block that fails, and one that leans on this repository.
    bad = snippet_blocks.run_once("import torch\nraise ValueError('broken example')\n").result()
    assert bad.returncode != 0 and "broken example" in bad.stderr
    missing_import = snippet_blocks.run_once("print(torch.ones(1))\n").result()
    assert missing_import.returncode != 0 and "NameError" in missing_import.stderr
    package = snippet_blocks.run_once("import snippets\nprint('reader has no snippets package')\n").result()
    assert package.returncode != 0, "copied code must not rely on this repository's package"
