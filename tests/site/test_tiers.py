"""Test tiers are applied centrally (tests/conftest.py): `slow` for a test that builds, serves
or copies a project, `browser` for every test under tests/browser; a new test gets its tier by
what it does. And the test processes share the cores: one torch thread each."""

import os
import subprocess
import sys

import pytest
import torch

from tests.site.sitetools import ROOT, build_env


# One collection in a fresh pytest (as a contributor's command collects), printing each test's
# tiers: the markers tests/conftest.py gave it, which `-m "not slow and not browser"` selects on.
REPORT = """
import pytest
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        tiers = sorted(m for m in ("slow", "browser") if item.get_closest_marker(m))
        print("TIER", item.nodeid.split("[")[0], ",".join(tiers) or "quick")
"""


def collected(tmp_path, *paths: str) -> dict[str, set[str]]:
    (tmp_path / "tier_report.py").write_text(REPORT, encoding="utf-8")
    env = build_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-p",
                           "tier_report", "--collect-only", *paths], cwd=ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    tiers = {"slow": set(), "browser": set(), "quick": set()}
    for line in done.stdout.splitlines():
        if line.startswith("TIER "):
            _, test, marks = line.split(" ")
            for mark in marks.split(","):
                tiers[mark].add(test)
    return tiers


SERVE = "tests/site/test_serve.py::"
BENCH = "tests/site/test_benchmarks.py::"


def test_slow_and_browser_are_applied_by_what_a_test_does(tmp_path):
    paths = ("tests/site/test_serve.py", "tests/site/test_tooltips.py", "tests/browser/test_not_found.py",
             "tests/site/test_benchmarks.py")
    tiers = collected(tmp_path, *paths)
    slow, browser, quick = tiers["slow"], tiers["browser"], tiers["quick"]
    # A test that serves a copy of the project is slow; a unit test in the same file is not.
    assert SERVE + "test_after_an_edit_serve_shows_it_at_once_and_then_no_stale_page" in slow
    assert SERVE + "test_serve_watches_everything_the_site_reads" in quick
    # Growing a copy of the project through a function of another module is copying it too.
    assert BENCH + "test_generated_entries_have_no_placeholder_left_and_pass_the_check" in slow
    assert BENCH + "test_the_suite_parts_are_read_from_the_whole_sessions_durations" in quick
    # The browser tests read the built site: slow too.
    assert {test.split("::")[0] for test in browser} == {"tests/browser/test_not_found.py"}
    assert browser <= slow
    assert {test.split("::")[0] for test in quick} == {"tests/site/test_serve.py", "tests/site/test_tooltips.py",
                                                        "tests/site/test_benchmarks.py"}
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
