"""Where a build spends its time, in every process it runs: the probe's sampling profiler
(benchmarks/probe/sitecustomize.py, TERMBASE_BENCH_SAMPLE_DIR) records, every 5 ms, the stack of
each thread inside MkDocs' `build`, in MkDocs' own process and in each language's, weighted by
the wall time since its previous sample; this module sums what it wrote. A share is of the wall
time a process spent inside MkDocs' `build`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchmarks import sites

# Functions whose inclusive share is worth a row: the site's machinery, MkDocs' per-page steps,
# the plugins' events, Markdown and templates (a row of the table is a measured share, never a
# guess at what the function does).
INTERESTING = ("termbase/", "mkdocs/commands/build.py", "mkdocs/structure/pages.py", "mkdocs/structure/files.py",
               "material/", "mkdocs_jupyter/", "jinja2/environment.py", "markdown/core.py", "search_index.py",
               "mkdocs/config/base.py", "pymdownx/")


def _role(dump: dict) -> str:
    name = dump.get("process") or ""
    if name.startswith("termbase-"):
        return name.removeprefix("termbase-")  # a language's build process
    return "main"


def summarise(folder: Path, top: int = 14) -> dict:
    """Per process (main = MkDocs' own, building the default language; es, da = the language
    processes): samples, seconds sampled, the phases below `build` and the functions with the
    largest inclusive and self shares."""
    out = {}
    for path in sorted(folder.glob("*.json")):
        try:
            dump = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        role = _role(dump)
        if role in out:  # a second process in the same role (a restarted language): add its samples
            role = f"{role}-{dump['pid']}"
        total = dump.get("seconds_in_build") or 1e-9

        def rows(weights, keep=None):
            items = [(name, s) for name, s in weights.items() if keep is None or keep(name)]
            items.sort(key=lambda item: -item[1])
            return [{"function": name, "share": s / total, "approx_s": s} for name, s in items[:top]]

        out[role] = {
            "samples": dump["samples"], "approx_build_s": dump.get("seconds_in_build"), "cpu_s": dump.get("cpu_s"),
            "phases": rows(dump.get("phases") or {}),
            "inclusive": rows(dump["inclusive"], lambda n: n.startswith(INTERESTING) and "(build)" not in n),
            "self": rows(dump["self"]),
        }
    return out


def profile_build(project: Path, site_dir: Path, folder: Path, logs: sites.Logs, clean: bool = False) -> dict:
    """One `mkdocs build` of `project` with the sampler on (after the measured builds: the
    sampler's own cost stays out of every other figure). `clean`: a cold build (no cache)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if clean:
        sites.clear_caches(project, site_dir)
    run = sites.termbase_build(project, site_dir, logs, TERMBASE_BENCH_SAMPLE_DIR=str(folder))
    if run.returncode:
        return {"error": run.output[-3000:]}
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "cold": clean, "processes": summarise(folder)}
