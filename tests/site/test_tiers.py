"""Test tiers are applied centrally (tests/conftest.py): `slow` for a test that builds, serves
or copies a project, `browser` for every test under tests/browser; a new test gets its tier by
what it does."""

import subprocess
import sys

from tests.site.sitetools import ROOT, build_env


def collected(marker: str, *paths: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "--collect-only",
                           "-m", marker, *paths], cwd=ROOT, capture_output=True, text=True, env=build_env())
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


def test_slow_and_browser_are_applied_by_what_a_test_does():
    paths = ("tests/site/test_serve.py", "tests/site/test_tooltips.py", "tests/browser/test_not_found.py")
    # the browser tests read the built site: slow too
    assert collected("slow", *paths) == {"tests/site/test_serve.py", "tests/browser/test_not_found.py"}
    assert collected("browser", *paths) == {"tests/browser/test_not_found.py"}
    assert collected("not slow and not browser", *paths) == {"tests/site/test_tooltips.py"}
