"""The README's two commands are the ones CI and contributors run."""

import re

from tests.site.sitetools import LANGS, ROOT


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return shell_blocks(readme.split("## The two commands", 1)[1].split("\n## ", 1)[0])


def shell_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_readme_has_exactly_a_serve_and_a_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    commands = shell_blocks(section)
    assert len(commands) == 2, commands
    serve, test = commands
    assert serve.startswith("python3 -m venv .venv && ") and serve.endswith(".venv/bin/mkdocs serve")
    assert test.startswith("python3 -m venv .venv && ") and test.endswith(".venv/bin/python -m pytest")
    for command in (serve, test):
        assert "pip install -q -r requirements.txt" in command
        # PyTorch first, from its CPU index where reachable, asked once per package (README)
        assert "pip install -q --retries 0 --timeout 10 -r requirements-torch.txt && " in command


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test = shell_blocks(readme.split("## The two commands", 1)[1])[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test in ci.splitlines(), ".ci/run must run the README's test command as written"
    assert "apt-get install -y -qq chromium" in ci and "export CI=true" in ci
    for package in ("hunspell", "hunspell-en-us", "hunspell-es", "hunspell-da"):
        assert f" {package}" in ci, f".ci/run must install {package} (the checker spells every language)"


def test_the_contributing_guide_sets_up_with_the_readme_test_command():
    _, test = readme_commands()
    for lang in LANGS:
        page = (ROOT / "docs" / f"contributing.{lang}.md").read_text(encoding="utf-8")
        assert test in page.splitlines(), f"docs/contributing.{lang}.md: set up with the README's test command"


def test_the_set_up_hint_is_the_readmes_install():
    from termbase.__main__ import SETUP

    serve, _ = readme_commands()
    install = serve.rsplit(" && ", 1)[0]  # everything before `mkdocs serve`
    assert install in SETUP, (install, SETUP)
