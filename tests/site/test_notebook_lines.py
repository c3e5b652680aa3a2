"""A notebook's own code lines obey the snippets' limit of 79 characters (the code box shows
80 without scrolling); `check` names each longer line of docs/notebooks/*.py."""

from termbase.core import notebook_source
from tests.site.sitetools import PROJECT

SOURCE = '''# %% [markdown] lang="en"
# # Title
# %% [markdown] lang="es"
# # Título
# %% [markdown] lang="da"
# # Titel
# %%
short = 1
long_name = "{fill}"
'''


def test_a_code_line_over_79_characters_is_named_with_its_line(tmp_path):
    path = tmp_path / "lines.py"
    for width, problems in ((79, 0), (80, 1)):
        line = 'long_name = ""'
        path.write_text(SOURCE.format(fill="x" * (width - len(line))), encoding="utf-8")
        found = [p for p in notebook_source.problems(PROJECT, notebook_source.read_source(path))
                 if "characters long" in p[1]]
        assert len(found) == problems, found
        if problems:
            assert found[0][0] == 9 and found[0][1] == "code line is 80 characters long (at most 79)"


def test_the_site_notebooks_keep_the_limit():
    for path in notebook_source.source_paths(PROJECT):
        source = notebook_source.read_source(path)
        assert not [p for p in notebook_source.problems(PROJECT, source) if "characters long" in p[1]], path


PROSE = '''# %% [markdown] lang="en"
# # Title
#
# The last position divided by 4 is $L
# - 1/4$, three quarters past it.
#
# - a list that opens its block
# - is a list, not a cut paragraph
#
# > a quote of its own
# %% [markdown] lang="es"
# # Título
#
# Un párrafo partido
# 1. por un número
# %% [markdown] lang="da"
# # Titel
#
# ```text
# - inside a fence: code
# ```
# %%
x = 1
'''


def test_a_wrapped_prose_line_that_notebooks_would_render_as_a_list_is_named(tmp_path):
    """CommonMark (the notebooks' renderer) lets a list, `1.`, a quote or a heading cut into a
    paragraph; Python-Markdown (the pages') does not, so the check looks at notebooks only."""
    path = tmp_path / "prose.py"
    path.write_text(PROSE, encoding="utf-8")
    found = [p for p in notebook_source.problems(PROJECT, notebook_source.read_source(path))
             if "wrapped line" in p[1]]
    assert [(line, what.split(":")[0]) for line, what, _ in found] == [
        (5, "a wrapped line starts with '-'"), (15, "a wrapped line starts with '1.'")]


def test_the_site_notebooks_have_no_cut_paragraph():
    for path in notebook_source.source_paths(PROJECT):
        source = notebook_source.read_source(path)
        assert not [p for p in notebook_source.problems(PROJECT, source) if "wrapped line" in p[1]], path
