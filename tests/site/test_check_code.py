"""`termbase check` claims no more than it checked: a code block's cached last run is compared
with the output its test declares now; a block changed since is counted as not run, and the
success line says so and names the commands that run it."""

import dataclasses

from termbase.cli import cached_blocks
from termbase.core import blocks, sections
from termbase.run.blocks import NAMESPACE, block_key
from termbase.run.cache import Cache
from tests.site.sitetools import PROJECT, demo_line


def softmax_demo():
    block = next(b for b in blocks.declared(PROJECT).values() if b.module == "softmax" and b.name == "demo")
    return block, block_key(sections.compose(PROJECT.root, block.refs))


def test_without_cached_runs_nothing_is_claimed(tmp_path):
    found = cached_blocks.compare(dataclasses.replace(PROJECT, cache_dir=tmp_path))
    assert found.compared == 0 and found.not_run and not found.problems
    assert f"0 of {len(found.not_run)} code blocks compared" in found.summary()
    assert "NOT verified: not run since they last changed (snippets/" in found.summary()
    assert "; `python -m termbase test <slug>` or `mkdocs build` runs them" in found.summary()


def test_a_cached_run_is_compared_with_the_expectation_of_now(tmp_path):
    project = dataclasses.replace(PROJECT, cache_dir=tmp_path)
    block, key = softmax_demo()
    cache = Cache(tmp_path)
    cache.put_json(NAMESPACE, key, {"returncode": 0, "stdout": "\n".join(block.expected) + "\n", "stderr": ""})
    found = cached_blocks.compare(project)
    assert found.compared == 1 and not found.problems
    assert block.refs not in found.not_run
    (tmp_path / NAMESPACE / key / "result.json").write_text(
        '{"returncode": 0, "stdout": "something else\\n", "stderr": ""}', encoding="utf-8")
    problems = cached_blocks.compare(project).problems
    assert len(problems) == 1 and problems[0].startswith("snippets/softmax.py:") and " - fix the code or" in problems[0]
    assert "block 'demo' of snippets/softmax.py printed other than its expected output" in problems[0]
    assert problems[0].endswith(f"- fix the code or tests/test_softmax.py:{demo_line()} (EXPECTED_OUTPUT['demo'])")


def test_check_names_a_snippet_line_too_long_for_the_code_box(tmp_path):
    """The 79-character limit of snippet lines is a rule of `check` (with its line), not only of
    the snippet tests, so a contributor meets it while writing."""
    from termbase.core import check
    from termbase.core.check import snippets

    (tmp_path / "snippets").mkdir()
    (tmp_path / "tests").mkdir()
    fits = "x = 1  # " + "a" * 70  # 79 characters
    (tmp_path / "snippets" / "wide.py").write_text(
        'BLOCKS = {"demo": ["snippets/wide.py:demo"]}\n\n# --8<-- [start:demo]\n'
        f"{fits}\n{fits}b\n# --8<-- [end:demo]\n", encoding="utf-8")
    (tmp_path / "tests" / "test_wide.py").write_text("def test_wide():\n    pass\n", encoding="utf-8")
    project = dataclasses.replace(PROJECT, root=tmp_path)
    report = check.Report(project)
    snippets.check_modules(project, report)
    assert [str(p) for p in report if "characters long" in p.what] == [
        "snippets/wide.py:5: line is 80 characters long (at most 79) - break it: a page's code box shows "
        "80 characters, and a reader would scroll sideways"]
