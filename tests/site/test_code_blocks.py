"""What you copy is what we tested: every Python block of the built site, in every language,
runs as copied with a fresh interpreter from an empty directory and prints something."""

from concurrent.futures import ThreadPoolExecutor

from tests.site.sitetools import LANGS, python_blocks, run_block


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


def test_every_block_runs_as_copied(built_site, tmp_path):
    site, _ = built_site
    blocks = {}
    for lang, url, page in _pages(site):
        for code in python_blocks(page):
            blocks.setdefault(code, f"{lang}/{url}")
    assert blocks, "the site shows no Python block at all"

    def run(item):
        code, where = item
        return where, code, run_block(code, tmp_path / "empty")

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, blocks.items()))
    failures = [
        f"{where}: exit {r.returncode}\n--- code ---\n{code}\n--- stderr ---\n{r.stderr[-2000:]}"
        for where, code, r in results
        if r.returncode != 0 or not r.stdout.strip()
    ]
    assert not failures, "\n\n".join(failures)


def test_a_failing_block_is_reported(tmp_path):
    # The runner itself must catch a block that fails or prints nothing.
    bad = run_block("import torch\nraise ValueError('broken example')\n", tmp_path / "empty")
    assert bad.returncode != 0 and "broken example" in bad.stderr
    missing_import = run_block("print(torch.ones(1))\n", tmp_path / "empty")
    assert missing_import.returncode != 0 and "NameError" in missing_import.stderr
    package = run_block("import snippets\nprint('reader has no snippets package')\n", tmp_path / "empty")
    assert package.returncode != 0, "copied code must not rely on this repository's package"
