"""The build's check of the sources is skipped only when nothing it reads changed since a clean
result (termbase/site/source_check.py); problems are found again by every build."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from termbase.core import check
from termbase.core.project import Project
from termbase.site import source_check


@pytest.fixture
def sources(tmp_path, monkeypatch):
    root = tmp_path / "project"
    for name, text in {"docs/index.en.md": "# Home\n", "termbase/data/ui.yml": "a: b\n",
                       "snippets/softmax.py": "x = 1\n", "site/index.html": "<p>old</p>\n",
                       "termbase/site/plugin.py": "x = 1\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    made = Project(root=root, languages=("en",), default_language="en", cache_dir=root / ".termbase-cache",
                   data_dir=root / "termbase" / "data", language_timeout=60)
    state = SimpleNamespace(project=made, root=root, problems=[], runs=0)  # problems: the lines found wrong

    def fake_run(project, *, spelling=True, store=None):
        state.runs += 1
        report = check.Report(project)
        for line in state.problems:
            report.add(root / "docs" / "index.en.md", line, "wrong", "fix it")
        return report

    monkeypatch.setattr(check, "run", fake_run)
    return state


def test_a_clean_check_is_not_repeated_on_the_same_sources(sources):
    assert not source_check.run(sources.project) and sources.runs == 1
    assert not source_check.run(sources.project) and sources.runs == 1


@pytest.mark.parametrize("edited", ["docs/index.en.md", "termbase/data/ui.yml", "snippets/softmax.py",
                                    "snippets/new_module.py", "termbase/site/plugin.py"])
def test_an_edit_to_any_source_checks_again(sources, edited):
    source_check.run(sources.project)
    path: Path = sources.root / edited
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + "more\n", encoding="utf-8")
    source_check.run(sources.project)
    assert sources.runs == 2


def test_the_site_the_cache_and_virtual_environments_are_not_inputs(sources):
    elsewhere = sources.root / "public"  # a site_dir of another name
    source_check.run(sources.project, elsewhere)
    (sources.root / "site" / "index.html").write_text("<p>new</p>\n", encoding="utf-8")
    (sources.root / ".termbase-cache" / "blocks").mkdir(parents=True)
    (sources.root / "venv").mkdir()
    (sources.root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    elsewhere.mkdir()
    (elsewhere / "index.html").write_text("<p>new</p>\n", encoding="utf-8")
    source_check.run(sources.project, elsewhere)
    assert sources.runs == 1


def test_problems_are_reported_by_every_build(sources):
    sources.problems = [3]
    first, second = source_check.run(sources.project), source_check.run(sources.project)
    assert [str(p) for p in first] == [str(p) for p in second] == ["docs/index.en.md:3: wrong - fix it"]
    assert sources.runs == 2
    sources.problems = []  # fixed: checked, then remembered
    source_check.run(sources.project), source_check.run(sources.project)
    assert sources.runs == 3


def test_the_command_and_a_build_share_a_clean_result(sources, monkeypatch, capsys):
    """`termbase check` remembers a clean result as a build does, so the build after it skips
    its check, and the reverse; `--no-spelling` checks less, so its result is never kept;
    `--fresh` checks again whatever was kept."""
    import termbase.__main__ as cli
    from termbase.cli import cached_blocks

    monkeypatch.setattr(cli, "_project", lambda: sources.project)
    monkeypatch.setattr(cached_blocks, "compare", lambda project: SimpleNamespace(
        problems=[], summary=lambda: "0 of 0 code blocks compared with their last run"))
    assert cli.main(["check", "--no-spelling"]) == 0 and sources.runs == 1
    assert cli.main(["check"]) == 0 and sources.runs == 2
    assert cli.main(["check"]) == 0 and sources.runs == 2
    assert "the sources are in order" in capsys.readouterr().out
    assert not source_check.run(sources.project, sources.root / "site") and sources.runs == 2  # the build's
    assert cli.main(["check", "--fresh"]) == 0 and sources.runs == 3
    (sources.root / "docs" / "index.en.md").write_text("# Home, edited\n", encoding="utf-8")
    assert not source_check.run(sources.project, sources.root / "site") and sources.runs == 4  # a build's
    assert cli.main(["check"]) == 0 and sources.runs == 4  # ... spares the command
    (sources.root / "docs" / "index.en.md").write_text("# Home, edited again\n", encoding="utf-8")
    sources.problems = [1]
    assert cli.main(["check"]) == 1 and sources.runs == 5
    assert "docs/index.en.md:1: wrong - fix it" in capsys.readouterr().out


def test_a_cache_that_cannot_be_written_costs_only_speed(sources, monkeypatch):
    """A read-only or full disk: the clean result is not kept, and the check still answers."""
    from termbase.run.cache import Cache

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Cache, "put_json", refuse)
    assert not source_check.run(sources.project) and not source_check.run(sources.project)
    assert sources.runs == 2
