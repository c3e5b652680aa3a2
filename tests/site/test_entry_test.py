"""`termbase test <slug>` runs each distinct program of the entry once, however many languages
show it, and still names every language's page."""

import dataclasses
import subprocess

from termbase.cli import entry_test
from termbase.core.model import TermBase
from termbase.run import blocks
from tests.site.sitetools import LANGS, PROJECT, demo_line

SLUG = "softmax"


def test_each_distinct_block_runs_once(monkeypatch, capsys):
    submitted = []

    class Counting(blocks.BlockRunner):
        def submit(self, code):
            submitted.append(code)
            return super().submit(code)

    monkeypatch.setattr(blocks, "BlockRunner", Counting)
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: real_run([args[0], "-c", "pass"], **kw)
                        if args[1:3] == ["-m", "pytest"] else real_run(args, **kw))
    assert entry_test.run(PROJECT, SLUG) == 0
    code_blocks = TermBase(PROJECT).terms[SLUG]["code"]
    assert len(submitted) == len(set(submitted)) == len(code_blocks) > 0
    out = capsys.readouterr().out
    assert out.count("prints what its test declares") == len(code_blocks)
    assert f"docs/glossary/{SLUG}.{{{','.join(LANGS)}}}.md" in out


def test_a_block_that_prints_otherwise_names_its_expected_output_line(monkeypatch, capsys):
    """The mismatch names the line of EXPECTED_OUTPUT to fix, as the build and `check` do."""
    from termbase.core import blocks as declared_blocks

    real = declared_blocks.declared

    def changed(project):
        found = real(project)
        return {refs: dataclasses.replace(block, expected=["something else", *block.expected[1:]])
                if block.module == "softmax" and block.name == "demo" else block for refs, block in found.items()}

    monkeypatch.setattr(declared_blocks, "declared", changed)
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: real_run([args[0], "-c", "pass"], **kw)
                        if args[1:3] == ["-m", "pytest"] else real_run(args, **kw))
    assert entry_test.run(PROJECT, SLUG) == 1
    out = capsys.readouterr().out
    assert "line 1: expected 'something else', printed " in out
    assert f"- fix the code or tests/test_softmax.py:{demo_line()} (EXPECTED_OUTPUT['demo'])" in out
