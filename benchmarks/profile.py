"""Where a build spends its time: cProfile of one `mkdocs build`, summarised per function."""

from __future__ import annotations

import pstats
import sys
from pathlib import Path

from benchmarks.common import build_env, measure


def profile_build(project: Path, site_dir: Path, out: Path, top: int = 25) -> dict:
    prof = out.with_suffix(".prof")
    run = measure([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "mkdocs", "build", "--strict",
                   "--site-dir", str(site_dir)], cwd=project, env=build_env())
    if run.returncode or not prof.exists():
        return {"error": run.output[-3000:]}
    stats = pstats.Stats(str(prof))
    total = stats.total_tt
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
        rows.append({"function": f"{_short(filename)}:{line}({func})", "calls": nc, "tottime_s": tt, "cumtime_s": ct})
    own = [r for r in rows if "termbase/" in r["function"]]
    return {
        "wall_s_under_profiler": run.wall_s,
        "total_s": total,
        "termbase_by_cumtime": sorted(own, key=lambda r: -r["cumtime_s"])[:top],
        "all_by_tottime": sorted(rows, key=lambda r: -r["tottime_s"])[:top],
        "all_by_cumtime": sorted(rows, key=lambda r: -r["cumtime_s"])[:top * 2],
    }


def _short(filename: str) -> str:
    for marker in ("site-packages/", "/termbase/", "lib/python3"):
        if marker in filename:
            tail = filename.split(marker, 1)[1]
            return ("termbase/" + tail) if marker == "/termbase/" else tail
    return filename
