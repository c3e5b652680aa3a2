"""benchmarks/ runs end to end (`--quick`, a toy shape, into a temporary directory), the page's
tables render from what it wrote, and the generator makes entries with no placeholder left.

Only that they run and write their files: timings are never pass/fail here (they live in
benchmarks/RESULTS.md, made by `python -m benchmarks`)."""

import json
import os
import subprocess
import sys

import yaml

from termbase.core.model import TermBase
from termbase.core.project import load
from termbase.site import benchmark_table
from tests.site.sitetools import LANGS, ROOT, build_env


def test_quick_benchmark_runs_and_writes_results(tmp_path, monkeypatch):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "attention", "--attention-shapes", "tiny",
         "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, env=build_env(), timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert not data["errors"], data["errors"]
    assert {"nproc", "cpu_model", "ram_gib"} <= data["machine"].keys()
    assert data["git"]["commit"]
    row = data["attention"]["rows"][0]
    assert set(row["projection"]["ms"]) == {"per_head", "fused"}
    assert {"per_head", "batched", "sdpa"} <= row["core"]["ms"].keys()
    assert {"per_head", "fused", "torch_mha"} <= row["layer"]["ms"].keys()
    assert max(row["checks"].values()) < 1e-5  # the variants of each part compute the same thing
    report = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
    assert "## Targets" in report and "## Attention on CPU" in report
    # the benchmarks page renders the three tables from such a results.json, in every language
    base = TermBase(load(ROOT))
    monkeypatch.setattr(benchmark_table, "load", lambda _: data)
    for lang in LANGS:
        page = benchmark_table.benchmark_table(base, lang)
        assert page.count("| B=2, T=32, d=64, h=4 |") == 3, page
        for part in ("projection", "core", "layer"):
            assert base.ui["benchmarks"][part][lang] in page


def test_generated_entries_have_no_placeholder_left_and_pass_the_check(tmp_path):
    """A grown site the check refuses would be measured checking again on every warm build:
    the generator keeps up with the check's rules (a gender for each name, `proposed`, the
    style guides' forms)."""
    from benchmarks import generate

    real = len(list((ROOT / "termbase" / "data" / "terms").glob("*.yml")))
    info = generate.scale_project(tmp_path / "p", real + 3, distinct_blocks=2)
    assert info["generated_terms"] == 3 and info["distinct_generated_blocks"] == 2
    project = tmp_path / "p"
    for slug in info["slugs"]:
        record = yaml.safe_load((project / "termbase" / "data" / "terms" / f"{slug}.yml").read_text(encoding="utf-8"))
        assert set(LANGS) <= record.keys() and record["code"]
        for lang in LANGS:
            page = (project / "docs" / "glossary" / f"{slug}.{lang}.md").read_text(encoding="utf-8")
            assert "TODO(termbase)" not in page and "{{ code }}" in page
    for path in [*(project / "snippets").glob("attention_variant_code_*.py"),
                 *(project / "tests").glob("test_attention_variant_code_*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "TODO(termbase)" not in text
        compile(text, str(path), "exec")
    checked = generate.termbase_check(project, info["slugs"])
    assert checked["passes"], checked["generated_problems"] + checked["real_site_problems"]


def test_the_suite_parts_are_read_from_the_whole_sessions_durations():
    from benchmarks import suite
    from tests.browser import crawl

    output = ("12.50s setup    tests/browser/test_reading.py::test_a[en]\n"
              "3.00s call     tests/browser/test_reading.py::test_a[en]\n"
              "2.25s call     tests/site/test_build.py::test_b\n"
              "0.75s call     tests/claims/test_sdpa.py::test_c\n"
              "0.25s teardown tests/test_softmax.py::test_d\n")
    parts = suite.by_part([(float(s), when, test) for s, when, test in suite.DURATION.findall(output)])
    assert {name: part["s"] for name, part in parts.items()} == {"browser": 15.5, "site": 2.25, "snippets": 1.0}
    assert parts["snippets"]["files"] == {"tests/claims/test_sdpa.py": 0.75, "tests/test_softmax.py": 0.25}
    assert set(suite.sessions()) == {"whole", "whole_fresh_crawl", "without_browser", "fast_tier"}
    # the same command, visiting every page as a fresh clone does (tests/browser/crawl.py)
    assert suite.sessions()["whole_fresh_crawl"] == suite.sessions()["whole"] == []
    assert suite.SESSION_ENV["whole_fresh_crawl"] == {crawl.FRESH: "1"}
    assert suite.sessions()["fast_tier"] == ["-m", "not slow and not browser"]  # the README's tier
    assert {"snippets", "site", "browser"} <= set(suite.sessions(separate_parts=True))


def test_the_suite_counts_the_builds_its_tests_start(tmp_path):
    """benchmarks/count_builds.py, loaded into a pytest session as the benchmark loads it."""
    (tmp_path / "test_starts.py").write_text(
        "import subprocess, sys\n"
        "def test_builds(tmp_path):\n"
        "    subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--help'], capture_output=True)\n"
        "    subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--no-such-option'], capture_output=True)\n"
        "    (tmp_path / 'docs').mkdir()\n"
        "    (tmp_path / 'docs' / 'index.md').write_text('# Small')\n"
        "    subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--help'], cwd=tmp_path, capture_output=True)\n"
        "    subprocess.run([sys.executable, '-c', 'pass'])\n"
        "def test_serves():\n"
        "    subprocess.Popen([sys.executable, '-m', 'mkdocs', 'serve', '--help'],\n"
        "                     stdout=subprocess.DEVNULL).wait()\n", encoding="utf-8")
    log = tmp_path / "builds.log"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "-p", "benchmarks.count_builds", str(tmp_path / "test_starts.py")],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "TERMBASE_BENCH_BUILD_LOG": str(log)})
    assert done.returncode == 0, done.stdout + done.stderr
    started = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines()]
    assert sorted(row[0] for row in started) == ["build", "build", "build", "serve"]
    from benchmarks import suite

    counted = suite.count_builds(started)  # the real site's folder: one build that succeeded, one serve
    assert (counted["build"], counted["serve"], counted["refused"], counted["small_project"]) == (1, 1, 1, 1), counted
