"""The README's test command (`python -m pytest` in the repository), timed whole, without the
browser tests, and in its three parts, each as its own pytest session: snippets (tests/test_*.py
and the claims, tests/claims/), site (tests/site/), browser (tests/browser/). Each session
reports its slowest tests (`--durations`), which say where its time goes."""

from __future__ import annotations

import re
import sys

from benchmarks.common import ROOT, build_env, measure

SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)", re.M)


def parts() -> dict[str, list[str] | None]:
    snippets = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("test_*.py"))
    if (ROOT / "tests" / "claims").is_dir():
        snippets.append("tests/claims")
    return {
        "snippets": snippets or None,
        "site": ["tests/site"] if (ROOT / "tests" / "site").is_dir() else None,
        "browser": ["tests/browser"] if (ROOT / "tests" / "browser").is_dir() else None,
    }


def sessions() -> dict[str, list[str] | None]:
    """What is timed: the whole command, the command without the browser tests, and the parts."""
    out = {"whole": [], "without_browser": ["--ignore=tests/browser"]}
    out.update(parts())
    return out


def time_session(args: list[str], env_extra: dict | None = None) -> dict:
    run = measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=12", *args],
                  cwd=ROOT, env=build_env(**(env_extra or {})), timeout=3600)
    lines = [line for line in run.output.strip().splitlines() if line.strip()]
    tail = next((line for line in reversed(lines) if SUMMARY.search(line) and " in " in line), lines[-1] if lines else "")
    counts = {kind: int(n) for n, kind in SUMMARY.findall(tail)}
    reported = re.search(r"in ([\d.]+)s", tail)
    slowest = [{"s": float(s), "when": when, "test": test} for s, when, test in DURATION.findall(run.output)][:12]
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.peak_rss_mb, "returncode": run.returncode,
            "load": run.load, "counts": counts, "pytest_s": float(reported.group(1)) if reported else None,
            "summary": tail.strip("= "), "slowest": slowest,
            "failures": [line for line in run.output.splitlines() if line.startswith(("FAILED", "ERROR"))][:20]}
