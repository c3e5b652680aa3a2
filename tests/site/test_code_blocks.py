"""What you copy is what we tested: every Python block of the built site, in every language, is
one of the blocks the snippet modules declare, and running it as copied (a fresh interpreter's
view, an empty folder, nothing of this repository) prints exactly what its test declares."""

from termbase.core import blocks, sections
from termbase.run.blocks import first_difference
from tests.site.sitetools import DEFAULT, LANGS, PROJECT, ROOT, python_blocks


def _pages(site):
    others = [lang for lang in LANGS if lang != DEFAULT]
    for page in sorted(site.rglob("index.html")):
        rel = page.relative_to(site).as_posix()
        first = rel.split("/", 1)[0]
        lang = first if first in others else DEFAULT
        yield lang, rel.removeprefix(f"{lang}/") if lang != DEFAULT else rel, page


def test_same_blocks_in_every_language(built_site):
    site, _ = built_site
    by_page = {}
    for lang, url, page in _pages(site):
        by_page.setdefault(url, {})[lang] = python_blocks(page.read_text(encoding="utf-8"))
    assert by_page
    for url, found in by_page.items():
        assert set(found) == set(LANGS), url
        assert all(found[lang] == found[DEFAULT] for lang in LANGS), f"{url}: code differs between languages"


def test_every_block_runs_as_copied_and_prints_what_its_test_declares(built_site, block_runner):
    site, _ = built_site
    declared = {sections.compose(ROOT, refs).strip(): block for refs, block in blocks.declared(PROJECT).items()}
    shown = {}
    for lang, url, page in _pages(site):
        for code in python_blocks(page.read_text(encoding="utf-8")):
            shown.setdefault(code, f"{lang}/{url}")
    assert shown, "the site shows no Python block at all"
    unknown = [where for code, where in shown.items() if code.strip() not in declared]
    assert not unknown, f"blocks that no snippet module declares: {unknown}"
    futures = {code: block_runner.submit(code) for code in shown}
    failures = []
    for code, future in futures.items():
        result, block = future.result(), declared[code.strip()]
        difference = first_difference(block.expected or [], result.stdout)
        if result.returncode != 0 or result.stderr or difference:
            failures.append(f"{shown[code]}: block '{block.name}' of snippets/{block.module}.py: exit "
                            f"{result.returncode}, {difference}\n{result.stderr[-2000:]}")
    assert not failures, "\n\n".join(failures)


def test_the_runner_catches_what_a_reader_would_hit(block_runner):
    # A block that fails, one that forgets an import, and one that leans on this repository.
    bad = block_runner.run("import torch\nraise ValueError('broken example')\n")
    assert bad.returncode != 0 and "ValueError: broken example" in bad.stderr
    assert 'block.py", line 2' in bad.stderr, "the traceback names the reader's own file and line"
    missing_import = block_runner.run("print(torch.ones(1))\n")
    assert missing_import.returncode != 0 and "NameError" in missing_import.stderr
    package = block_runner.run("import snippets\nprint('reader has no snippets package')\n")
    assert package.returncode != 0, "copied code must not rely on this repository's package"
    alone = block_runner.run("import os, sys\nprint(os.listdir('.'), sys.argv, __name__)\n")
    assert alone.stdout == "['block.py'] ['block.py'] __main__\n", "an empty folder, as `python block.py`"


def test_inline_code_may_wrap_only_where_a_reader_expects():
    """pages.breakable_code: a <wbr> after a dot, underscore or slash and between camel-case
    words; a short span with punctuation but no such place is kept whole (site.css), because
    Chromium breaks `@claim("<id>")` between the quote and the `<` on a phone (CI, 5f6df11)."""
    from termbase.site.pages import breakable_code
    assert breakable_code("<code>F.scaled_dot_product</code>") == "<code>F.<wbr>scaled_<wbr>dot_<wbr>product</code>"
    assert breakable_code("<code>MultiheadAttention</code>") == "<code>Multihead<wbr>Attention</code>"
    whole = '<code class="termbase-whole">@claim(&quot;&lt;id&gt;&quot;)</code>'
    assert breakable_code('<code>@claim(&quot;&lt;id&gt;&quot;)</code>') == whole
    for plain in ("<code>True</code>", "<code>{{ claim:x }}</code>", "<code>x" + "(" * 30 + "</code>"):
        assert breakable_code(plain) == plain, plain  # a word, a span with spaces, one too long to keep
    assert breakable_code("<pre><code>a(b)</code></pre>") == "<pre><code>a(b)</code></pre>"
