"""A wrong contribution is a clear error and a failed build, never a silent gap; and a language
whose build fails never takes another language's build down with it."""

import re
import subprocess
import sys

import pytest

from tests.site.sitetools import DEFAULT, LANGS, build_env, mkdocs_build

BUILT = re.compile(r"(?:\[(\w+)\] )?Documentation built in")


@pytest.fixture
def project(mini_project):
    return mini_project  # the small project (tests/site/mini.py): the same machinery, built in seconds


def check(project):
    return subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project,
                          capture_output=True, text=True, env=build_env())


# That the repository's own sources pass the check: tests/site/test_architecture.py, in the run
# that also shows the check imports neither MkDocs nor torch.


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


@pytest.mark.parametrize("lang", LANGS)
def test_a_failing_language_fails_the_build_and_stops_no_other(project, tmp_path, lang):
    """A problem only MkDocs sees (a missing image, a strict-mode warning) inside one language's
    build: that build fails and is named, every other language still finishes its build, and
    only then does the failed build remove the site."""
    page = project / "docs" / f"index.{lang}.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n![PyTorch](nowhere.png)\n", encoding="utf-8")
    built = mkdocs_build(project, tmp_path / "site")
    log = built.stdout + built.stderr
    assert built.returncode != 0, log
    prefix = "" if lang == DEFAULT else f"[{lang}] "
    assert f"{prefix}Doc file 'index.{lang}.md' contains a link 'nowhere.png'" in log, log
    finished = {found or DEFAULT for found in BUILT.findall(log)}
    if f"termbase: the {DEFAULT} site is written" in log:
        finished.add(DEFAULT)
    others = [x for x in LANGS if x != DEFAULT and x != lang]
    assert set(others) <= finished, f"{lang} failing stopped {set(others) - finished}:\n{log}"
    if lang != DEFAULT:
        assert f"the {lang} site failed to build" in log, log
        assert DEFAULT in finished, log
    assert "Traceback" not in log, log
    assert not (tmp_path / "site").exists(), "a failed build must leave no site behind"


def test_a_language_that_hangs_is_named_and_stopped(project, tmp_path):
    config = project / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "      default_language: en\n", "      default_language: en\n      language_timeout: 0.01\n"), encoding="utf-8")
    built = mkdocs_build(project, tmp_path / "site")
    log = built.stdout + built.stderr
    assert built.returncode != 0
    for lang in LANGS:
        if lang != DEFAULT:
            assert f"the {lang} site failed to build: it did not finish within 0 s and was stopped" in log, log
    assert not (tmp_path / "site").exists()


def test_a_wrong_language_setting_is_one_clear_line(project, tmp_path):
    config = project / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("default_language: en", "default_language: fr"),
                      encoding="utf-8")
    for result in (check(project), mkdocs_build(project, tmp_path / "site")):
        log = result.stdout + result.stderr
        assert result.returncode != 0
        assert "default_language 'fr' is not in languages - add it or pick one of them" in log, log
        assert "Traceback" not in log, log
