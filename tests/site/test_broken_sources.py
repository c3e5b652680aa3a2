"""A wrong contribution is a clear error and a failed build, never a silent gap."""

import subprocess
import sys

import pytest

from tests.site.sitetools import build_env, copy_project, mkdocs_build


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path / "project")


def check(project):
    return subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project,
                          capture_output=True, text=True, env=build_env())


def test_the_sources_pass_the_check():
    result = subprocess.run([sys.executable, "-m", "termbase", "check"], capture_output=True, text=True,
                            env=build_env())
    assert result.returncode == 0, result.stdout


def test_inline_python_fails_the_build(project, tmp_path):
    page = project / "docs" / "index.es.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    page.write_text("\n".join(lines[:2] + ["", "```python", "print('hola')", "```", ""] + lines[2:]), encoding="utf-8")
    result = check(project)
    assert result.returncode == 1
    assert "docs/index.es.md:4: Python written inline in a page - move the code into a module under snippets/" in result.stdout
    built = mkdocs_build(project, tmp_path / "site")
    assert built.returncode != 0 and "Python written inline" in built.stdout + built.stderr
    assert not (tmp_path / "site").exists(), "a failed build must leave no site behind"


def test_missing_snippet_section_fails_the_build(project, tmp_path):
    module = project / "snippets" / "multi_head_attention.py"
    module.write_text(module.read_text(encoding="utf-8").replace("[start:demo]", "[start:example]"), encoding="utf-8")
    result = check(project)
    assert "section 'demo' is not marked in snippets/multi_head_attention.py" in result.stdout
    # pymdownx.snippets with check_paths fails on its own too, if the checker were bypassed
    (project / "termbase" / "check.py").write_text(
        (project / "termbase" / "check.py").read_text(encoding="utf-8").replace(
            "def run() -> Report:\n", "def run() -> Report:\n    return Report()\n"), encoding="utf-8")
    built = mkdocs_build(project, tmp_path / "site")
    assert built.returncode != 0
    log = built.stdout + built.stderr
    assert "Error reading page 'glossary/multi-head-attention.md'" in log
    assert "Snippet section 'demo' could not be located" in log


def test_a_problem_in_one_language_fails_the_whole_build(project, tmp_path):
    # Spanish and Danish build in their own processes: their failures must still fail the build.
    edit = project / "docs" / "index.es.md"
    edit.write_text(edit.read_text(encoding="utf-8") + "\n![diagrama](nowhere.png)\n", encoding="utf-8")
    built = mkdocs_build(project, tmp_path / "site")
    log = built.stdout + built.stderr
    assert built.returncode != 0
    assert "[es] Doc file 'index.es.md' contains a link 'nowhere.png'" in log
    assert "the es site failed to build" in log
    assert not (tmp_path / "site").exists()
