"""The README's test command (`python -m pytest` in the repository), timed whole and without the
browser tests. Its three parts, snippets (tests/test_*.py and the claims, tests/claims/), site
(tests/site/) and browser (tests/browser/), are read from the whole session's own durations
(`--durations=0`: every test's setup, call and teardown, summed per part) or, with
`--separate-parts`, also timed each as its own session. Each session reports its slowest tests,
which say where its time goes."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

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


FAST_TIER = ["-m", "not slow and not browser"]  # what a contributor runs before a commit (README)
QUICK_CHECK_ENTRY = "causal-mask"  # one snippet, three pages: a typical new entry


# The whole command with every page visited in the browser, none of the records kept from an
# earlier passing run read again (tests/browser/crawl.py), as on a fresh clone; the other caches
# (executed blocks, notebooks, figures, pages) stay warm, unlike a fresh clone's.
SESSION_ENV = {"whole_fresh_crawl": {"TERMBASE_FRESH_CRAWL": "1"}}
WARM = ("whole", "whole_fresh_crawl", "without_browser", "fast_tier")  # timed every round, the first left out


def sessions(separate_parts: bool = False) -> dict[str, list[str] | None]:
    """What is timed: the whole command (reading the browser's kept records, and visiting every
    page), the command without the browser tests, the fast tier, and (when asked) the parts,
    each as its own session."""
    out = {"whole": [], "whole_fresh_crawl": [], "without_browser": ["--ignore=tests/browser"], "fast_tier": FAST_TIER}
    if separate_parts:
        out.update(parts())
    return out


def part_of(test: str) -> str:
    """The part a test id belongs to: browser, site or snippets (the rest of tests/)."""
    for name in ("browser", "site"):
        if test.startswith(f"tests/{name}/"):
            return name
    return "snippets"


def by_part(durations: list[tuple[float, str, str]]) -> dict[str, dict]:
    """pytest's durations summed per part, with the files that cost most in each. A session-wide
    fixture (the site build) is counted in the setup of the first test that needs it."""
    out: dict[str, dict] = {}
    for seconds, _, test in durations:
        part = out.setdefault(part_of(test), {"s": 0.0, "files": {}})
        part["s"] += seconds
        path = test.split("::")[0]
        part["files"][path] = part["files"].get(path, 0.0) + seconds
    for part in out.values():
        part["s"] = round(part["s"], 2)
        part["files"] = dict(sorted(((f, round(s, 2)) for f, s in part["files"].items()), key=lambda kv: -kv[1])[:8])
    return out


def time_quick_check(slug: str = QUICK_CHECK_ENTRY) -> dict:
    """`python -m termbase test <slug>`: the check a contributor runs on one entry."""
    run = measure([sys.executable, "-m", "termbase", "test", slug], cwd=ROOT, env=build_env(), timeout=1800)
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "returncode": run.returncode, "entry": slug,
            "last_line": (run.output.strip().splitlines() or [""])[-1][:300]}


def count_builds(started: list[list[str]]) -> dict:
    """The full builds of the real site among the builds and serves a session started (lines of
    benchmarks/count_builds.py): a serve, or a build that succeeded, of a project with at least
    the real site's pages. Builds refused by the check, and builds of the small fixture
    project, are counted apart."""
    real_pages = sum(1 for _ in (ROOT / "docs").rglob("*.md"))
    full = [row for row in started if int(row[2]) >= real_pages and (row[0] == "serve" or row[3] == "0")]
    return {"build": sum(1 for row in full if row[0] == "build"), "serve": sum(1 for row in full if row[0] == "serve"),
            "in_repository": sum(1 for row in full if Path(row[1]).resolve() == ROOT.resolve()),
            "small_project": sum(1 for row in started if int(row[2]) < real_pages),
            "refused": sum(1 for row in started if int(row[2]) >= real_pages and row[0] == "build" and row[3] != "0"),
            "started": len(started)}


def time_session(args: list[str], env_extra: dict | None = None) -> dict:
    with tempfile.NamedTemporaryFile(prefix="bench-builds-", delete=False) as fh:
        builds_log = Path(fh.name)
    # A temporary folder of its own: pytest keeps only the three newest under /tmp/pytest-of-<user>,
    # so another pytest started on this machine meanwhile would delete this session's site build.
    basetemp = Path(tempfile.mkdtemp(prefix="bench-pytest-"))
    crawl_log = basetemp / "crawl-counts.log"  # tests/browser/crawl.py: pages reused and visited
    run = measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "benchmarks.count_builds",
                   f"--basetemp={basetemp / 'run'}", "--durations=0", *args],
                  cwd=ROOT, env=build_env(TERMBASE_BENCH_BUILD_LOG=str(builds_log), TERMBASE_BENCH_CRAWL_LOG=str(crawl_log),
                                          **(env_extra or {})), timeout=3600)
    started = [line.split("\t") for line in builds_log.read_text(encoding="utf-8").splitlines() if "\t" in line]
    counted = [line.split("\t") for line in crawl_log.read_text(encoding="utf-8").splitlines()] if crawl_log.exists() else []
    crawl = {"reused": sum(int(row[1]) for row in counted), "visited": sum(int(row[2]) for row in counted)}
    builds_log.unlink(missing_ok=True)
    shutil.rmtree(basetemp, ignore_errors=True)
    builds = count_builds(started)
    lines = [line for line in run.output.strip().splitlines() if line.strip()]
    tail = next((line for line in reversed(lines) if SUMMARY.search(line) and " in " in line), lines[-1] if lines else "")
    counts = {kind: int(n) for n, kind in SUMMARY.findall(tail)}
    reported = re.search(r"in ([\d.]+)s", tail)
    durations = [(float(s), when, test) for s, when, test in DURATION.findall(run.output)]
    slowest = [{"s": s, "when": when, "test": test} for s, when, test in durations[:12]]
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.peak_rss_mb, "returncode": run.returncode,
            "load": run.load, "counts": counts, "pytest_s": float(reported.group(1)) if reported else None,
            "summary": tail.strip("= "), "slowest": slowest, "parts": by_part(durations), "builds": builds,
            "browser_pages": crawl,
            "failures": [line for line in run.output.splitlines() if line.startswith(("FAILED", "ERROR"))][:20]}
