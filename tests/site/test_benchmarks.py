"""benchmarks/ runs end to end (`--quick`, tiny sizes, into a temporary directory).

Only that it runs and writes its two files: timings are never pass/fail here (they live in
benchmarks/RESULTS.md, made by `python -m benchmarks`)."""

import json
import subprocess
import sys

from tests.site.sitetools import ROOT, build_env


def test_quick_benchmark_runs_and_writes_results(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--sizes", "3", "--repeats", "1",
         "--only", "scale,attention", "--attention-shapes", "tiny", "--threads", "1",
         "--serve-size", "0", "--no-zensical", "--no-browser", "--no-profile", "--no-prime", "--no-warm",
         "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, env=build_env(), timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert not data["errors"], data["errors"]
    assert {"nproc", "cpu_model", "ram_gib"} <= data["machine"].keys()
    size = data["scale"]["by_size"]["3"]
    assert size["termbase_check"] == "passes"
    assert size["termbase_cold"]["failed_runs"] == 0, size["termbase_cold"]["error"]
    assert size["plain_mkdocs"]["failed_runs"] == 0, size["plain_mkdocs"]["error"]
    assert size["termbase_cold"]["median_s"] > 0 and size["entry_html_bytes"] > 0
    row = data["attention"]["rows"][0]
    assert {"per_head", "fused", "torch_mha"} <= row["ms"].keys()
    assert row["fused_vs_per_head_max_abs_diff"] < 1e-5  # the two snippets compute the same thing
    report = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
    assert "## Targets" in report and "## Scale" in report
