"""The test suite in three parts, each timed as its own pytest session in the real repository:
snippets (tests/test_*.py), site build (tests/site/), browser (tests/browser/)."""

from __future__ import annotations

import re
import sys

from benchmarks.common import ROOT, build_env, measure

SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def parts() -> dict[str, list[str] | None]:
    snippets = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("test_*.py"))
    return {
        "snippets": snippets or None,
        "site": ["tests/site"] if (ROOT / "tests" / "site").is_dir() else None,
        "browser": ["tests/browser"] if (ROOT / "tests" / "browser").is_dir() else None,
    }


def time_part(paths: list[str]) -> dict:
    run = measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths], cwd=ROOT,
                  env=build_env(), timeout=3600)
    tail = run.output.strip().splitlines()[-1] if run.output.strip() else ""
    counts = {kind: int(n) for n, kind in SUMMARY.findall(tail)}
    reported = re.search(r"in ([\d.]+)s", tail)
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.peak_rss_mb, "returncode": run.returncode,
            "counts": counts, "pytest_s": float(reported.group(1)) if reported else None, "summary": tail,
            "failures": [line for line in run.output.splitlines() if line.startswith(("FAILED", "ERROR"))][:20]}
