"""Notebooks: executed by termbase/run/notebooks.py, rendered by mkdocs-jupyter in every language.

Executing a notebook is its test (its cells assert what they print); these tests check that the
runner does execute them, that a failing cell fails the build with a message naming it, that an
unchanged notebook is never executed twice, and what the built pages carry.
"""

import json
import re
from html.parser import HTMLParser
import shutil

import pytest

from termbase.core import notebook_source as notebooks
from termbase.core.project import load
from termbase.run.notebooks import run_key
from tests.site.sitetools import LANGS, PROJECT, ROOT, mkdocs_build, page_for, prefix

NAMES = [path.stem for path in notebooks.source_paths(PROJECT)]
SOURCES = PROJECT.docs / "notebooks"
PAGE_LIMIT = 200_000  # bytes of HTML per notebook page (figures are separate files)
EXECUTED = re.compile(r"termbase: executed notebook (\S+)")
CACHED = re.compile(r"termbase: notebook (\S+) unchanged, not executed again")


def test_the_two_notebooks_exist():
    assert {"multi-head-attention-step-by-step", "cross-attention-encoder-decoder"} <= set(NAMES)


def test_sources_are_complete_in_every_language():
    for path in notebooks.source_paths(PROJECT):
        assert notebooks.problems(PROJECT, notebooks.read_source(path)) == [], path


def test_a_prose_cell_missing_a_language_is_reported(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text('# %% [markdown] lang="en"\n# # Title\n\n# %% [markdown] lang="es"\n# # Título\n\n'
                    '# %%\nprint(1)\n', encoding="utf-8")
    found = notebooks.problems(PROJECT, notebooks.read_source(path))
    assert (1, "prose cell has no 'da' version", 'add a `# %% [markdown] lang="da"` cell next to it') in found


def test_snippet_sections_are_embedded_and_prose_does_not_change_the_run_key():
    source = notebooks.read_source(SOURCES / "multi-head-attention-step-by-step.py")
    codes = [code for _, code in notebooks.code_cells(PROJECT, source)]
    assert "class MultiHeadAttention(nn.Module):" in codes[0] and "--8<--" not in "".join(codes)
    for cell in source.cells:
        if cell.cell_type == "markdown":
            cell.source += "\nMore prose."
    assert run_key([code for _, code in notebooks.code_cells(PROJECT, source)]) == run_key(codes)
    assert run_key(codes[:-1] + [codes[-1] + "\nprint(2)"]) != run_key(codes)


def test_a_failing_cell_fails_the_build_naming_notebook_and_cell(mini_project, tmp_path):
    project = mini_project  # the small project (tests/site/mini.py) has both notebooks named here
    shutil.rmtree(project / ".termbase-cache", ignore_errors=True)  # no cache: every notebook executes here
    broken = project / "docs" / "notebooks" / "cross-attention-encoder-decoder.py"
    text = broken.read_text(encoding="utf-8")
    marker = "\n# %% [markdown] lang=\"en\"\n# ## The toy sentences"
    assert marker in text
    head = text[: text.index(marker)]
    line = head.count("\n") + 2  # the inserted cell's `# %%` line
    broken.write_text(head + '\n# %%\nraise ValueError("deliberately broken")\n' + text[len(head):], encoding="utf-8")

    result = mkdocs_build(project, tmp_path / "site")
    log = result.stdout + result.stderr
    assert result.returncode != 0, log
    assert (f"docs/notebooks/cross-attention-encoder-decoder.py:{line}: code cell 2 of notebook "
            f"'cross-attention-encoder-decoder' raised ValueError: deliberately broken") in log, log
    assert not (tmp_path / "site").exists(), "a failed build must leave no site behind"
    # The runner really executes: the other notebook ran (fresh cache) and passed its asserts.
    assert "docs/notebooks/multi-head-attention-step-by-step.py" in EXECUTED.findall(log), log
    runs = list((project / ".termbase-cache" / "notebooks").glob("cross-attention-encoder-decoder-*"))
    assert not any((run / "executed.ipynb").exists() for run in runs), "a failed run must not be cached"


def test_each_notebook_runs_at_most_once_per_build_and_not_at_all_when_unchanged(mini_project, tmp_path):
    """On the small project (tests/site/mini.py), one notebook's runs removed from its cache: the
    first build executes it once, not once per language, and each other notebook at most once
    (not at all when the cache copied from the repository holds its run); the second build
    executes none."""
    for run in (mini_project / ".termbase-cache" / "notebooks").glob("cross-attention-encoder-decoder-*"):
        shutil.rmtree(run)
    names = [path.stem for path in notebooks.source_paths(load(mini_project))]
    first = mkdocs_build(mini_project, tmp_path / "first")
    log = first.stdout + first.stderr
    assert first.returncode == 0, log
    assert EXECUTED.findall(log).count("docs/notebooks/cross-attention-encoder-decoder.py") == 1, log
    for name in names:
        shown = f"docs/notebooks/{name}.py"
        assert EXECUTED.findall(log).count(shown) <= 1, log  # not once per language
        assert EXECUTED.findall(log).count(shown) + CACHED.findall(log).count(shown) == len(LANGS), log
    second = mkdocs_build(mini_project, tmp_path / "site")
    log = second.stdout + second.stderr
    assert second.returncode == 0, log
    assert EXECUTED.findall(log) == [], log
    assert sorted(CACHED.findall(log)) == sorted(f"docs/notebooks/{name}.py" for name in names for _ in LANGS)


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_pages_exist_executed_with_heatmaps_in_every_language(built_site, lang):
    site, _ = built_site
    for name in NAMES:
        page = page_for(site, lang, f"notebooks/{name}/")
        html = page.read_text(encoding="utf-8")
        assert f'<html lang="{lang}"' in html
        assert f"<h1 id=" in html and notebooks.title(PROJECT, name, lang) in html, (lang, name)
        assert html.count("jp-OutputArea-output") >= 3, "executed outputs are on the page"
        images = img_tags(html)
        light = [i for i in images if re.fullmatch(r"fig-\d+\.svg#only-light", i["src"])]
        dark = [i for i in images if re.fullmatch(r"fig-\d+-dark\.svg#only-dark", i["src"])]
        assert light and len(light) == len(dark), f"{lang} {name}: no heatmap in both schemes"
        for image in light + dark:
            svg = (page.parent / image["src"].split("#")[0]).read_text(encoding="utf-8")
            assert "<svg" in svg and "head" in svg, image["src"]
            assert len(image["alt"]) > 20, "figures are described in the page language"
        assert "data:image" not in html, "figures are files, not base64 in the page"
        assert len(page.read_bytes()) < PAGE_LIMIT, f"{page}: {len(page.read_bytes())} bytes"


def img_tags(html: str) -> list[dict]:
    """The attributes of every <img>, however they are quoted (an alt with a " is single-quoted)."""
    found = []

    class Images(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "img":
                found.append(dict(attrs))

    Images().feed(html)
    return found


def test_outputs_are_the_checks_passing(built_site):
    site, _ = built_site
    for lang in LANGS:
        mha = page_for(site, lang, "notebooks/multi-head-attention-step-by-step/").read_text(encoding="utf-8")
        assert "steps == nn.MultiheadAttention: True" in mha and "q_heads: (1, 4, 6, 4)" in mha
        cross = page_for(site, lang, "notebooks/cross-attention-encoder-decoder/").read_text(encoding="utf-8")
        assert "weights: (1, 4, 4, 6)" in cross and "output == nn.MultiheadAttention: True" in cross
        assert "Traceback" not in mha + cross and "jp-OutputArea-error" not in mha + cross


def test_pages_are_slim_and_in_the_site_look(built_site):
    site, _ = built_site
    for name in NAMES:
        html = page_for(site, "en", f"notebooks/{name}/").read_text(encoding="utf-8")
        article = html.split("<article", 1)[1].split("</article>", 1)[0]
        assert "<script" not in article and "mathjax" not in article.lower()
        assert "jp-CodeMirrorEditor" not in article and "clipboard-copy" not in article
        assert max(len(s) for s in re.findall(r"<style.*?</style>", article, re.S)) < 3000
        # Code cells are Material code blocks (copy button, highlighting, light and dark)...
        cells = len(re.findall(r"(?m)^# %%(?! \[markdown\])", (SOURCES / f"{name}.py").read_text(encoding="utf-8")))
        assert article.count('<div class="highlight" data-search-exclude><pre><code>') == cells > 0, name
        # ...but not `language-python` blocks: cells are not standalone programs for test_code_blocks.
        assert "language-python" not in article
        assert '<details class="example termbase-nb-snippets">' in article  # embedded snippets, folded
    for lang in LANGS:  # notebooks are found by their prose; their code does not crowd out the entries
        index = json.loads((site / prefix(lang) / "search" / "search_index.json").read_text(encoding="utf-8"))
        text = " ".join(doc["text"] for doc in index["docs"] if doc["location"].startswith("notebooks/"))
        assert "heatmap" in text.lower() and "split_heads" in text and "def plot_heads" not in text
        assert "nn.MultiheadAttention: True" not in text


def test_download_notebook_in_the_page_language(built_site):
    site, _ = built_site
    labels = {"en": "Download the notebook (.ipynb)", "es": "Descargar el cuaderno (.ipynb)",
              "da": "Download notebooken (.ipynb)"}
    for lang in LANGS:
        for name in NAMES:
            page = page_for(site, lang, f"notebooks/{name}/")
            assert f'<a class="md-button" href="{name}.ipynb" download>{labels[lang]}</a>' in page.read_text(encoding="utf-8")
            notebook = json.loads((page.parent / f"{name}.ipynb").read_text(encoding="utf-8"))
            prose = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
            assert prose.startswith("# " + notebooks.title(PROJECT, name, lang))
            code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
            assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
            assert any("image/svg+xml" in o.get("data", {}) for c in code for o in c["outputs"])
            assert "--8<--" not in json.dumps(notebook), "snippets are embedded: it runs without the repository"
            assert not any(o["output_type"] == "error" for c in code for o in c["outputs"])


def test_sources_are_not_published_and_glossary_entries_link_the_notebooks(built_site):
    site, _ = built_site
    published = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    # A page's .py downloads are its tested blocks (tests/browser/test_takeaway.py); the
    # notebooks' percent-format sources and the _-prefixed helpers are not for readers.
    sources = {p.name for p in (ROOT / "docs" / "notebooks").glob("*.py")}
    assert not [p for p in published if p.rsplit("/", 1)[-1] in sources or "/_" in p], \
        "sources must not be published"
    links = {"multi-head-attention": "multi-head-attention-step-by-step", "cross-attention": "cross-attention-encoder-decoder"}
    for lang in LANGS:
        for slug, name in links.items():
            html = page_for(site, lang, f"glossary/{slug}/").read_text(encoding="utf-8")
            assert f'<a href="../../notebooks/{name}/">{notebooks.title(PROJECT, name, lang)}</a>' in html, (lang, slug)
        index = page_for(site, lang, "notebooks/").read_text(encoding="utf-8")
        assert all(f'href="{name}/"' in index for name in NAMES)



def test_the_committed_colab_notebooks_are_what_their_sources_give(tmp_path):
    from termbase.cli import colab

    written = colab.write_all(PROJECT, tmp_path)
    assert len(written) == len(NAMES) * len(LANGS)
    for path in written:
        committed = PROJECT.root / "notebooks" / path.relative_to(tmp_path)
        assert committed.is_file() and committed.read_bytes() == path.read_bytes(), (
            f"{committed.relative_to(PROJECT.root)} is stale: run `.venv/bin/python -m termbase notebooks` and commit it")
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), "opened in Colab, it runs fresh"
        assert "--8<--" not in path.read_text(encoding="utf-8"), "snippet sections are embedded"


def test_serve_and_build_keep_their_own_mkdocs_jupyter_cache():
    """mkdocs-jupyter evicts every cached page its current build did not use: a serve and a
    build at once in one directory emptied it under each other (a build failed in CI with "No
    such file or directory"). Each command and language has a directory of its own."""
    from types import SimpleNamespace

    from termbase.core.model import TermBase
    from termbase.site import notebook_pages

    base = TermBase(PROJECT)
    dirs = set()
    for command in ("serve", "build"):
        for lang in ("en", "es"):
            jupyter = SimpleNamespace(config={})
            notebook_pages.configure(SimpleNamespace(plugins={"mkdocs-jupyter": jupyter}), base, lang, command)
            dirs.add(jupyter.config["cache_dir"])
            assert jupyter.config["execute"] is False
    assert len(dirs) == 4


def test_a_file_written_in_one_step_uses_a_temporary_of_its_own_process(tmp_path, monkeypatch):
    """Two processes writing one page notebook at once must not share the temporary file."""
    import os

    from termbase.site import publish

    written = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (written.append(str(src)), real(src, dst)))
    publish.write(tmp_path / "page.ipynb", b"{}")
    assert (tmp_path / "page.ipynb").read_bytes() == b"{}"
    assert written and str(os.getpid()) in written[0]
