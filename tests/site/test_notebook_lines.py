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
