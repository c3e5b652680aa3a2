"""Test tiers are applied centrally (tests/conftest.py): `slow` for a test that builds, serves
or copies a project, `browser` for every test under tests/browser; a new test gets its tier by
what it does. And the test processes share the cores: one torch thread each."""

import os
import subprocess
import sys

import pytest
import torch

from tests.site.sitetools import ROOT, build_env


def collected(marker: str, *paths: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "--collect-only",
                           "-m", marker, *paths], cwd=ROOT, capture_output=True, text=True, env=build_env())
    return {line.split("[")[0] for line in done.stdout.splitlines() if "::" in line}


SERVE = "tests/site/test_serve.py::"


def test_slow_and_browser_are_applied_by_what_a_test_does():
    paths = ("tests/site/test_serve.py", "tests/site/test_tooltips.py", "tests/browser/test_not_found.py")
    slow, browser = collected("slow", *paths), collected("browser", *paths)
    quick = collected("not slow and not browser", *paths)
    # A test that serves a copy of the project is slow; a unit test in the same file is not.
    assert SERVE + "test_after_an_edit_serve_shows_it_at_once_and_then_no_stale_page" in slow
    assert SERVE + "test_serve_watches_everything_the_site_reads" in quick
    # The browser tests read the built site: slow too.
    assert {test.split("::")[0] for test in browser} == {"tests/browser/test_not_found.py"}
    assert browser <= slow
    assert {test.split("::")[0] for test in quick} == {"tests/site/test_serve.py", "tests/site/test_tooltips.py"}
    assert not quick & slow


def test_each_test_process_runs_torch_on_one_thread():
    """tests/conftest.py: under pytest-xdist each process runs torch on one thread (one process
    per core already uses every core), and what it starts keeps torch's default; with `-n 0`, or
    OMP_NUM_THREADS set, torch keeps its default here too."""
    from tests.conftest import THREADS_GIVEN

    if not os.environ.get("PYTEST_XDIST_WORKER") or THREADS_GIVEN:
        pytest.skip("one process (-n 0), or OMP_NUM_THREADS set: torch's default")
    assert torch.get_num_threads() == 1
    assert "OMP_NUM_THREADS" not in build_env(), "builds and blocks started here keep torch's default"
