"""Runs the benchmarks and writes RESULTS.md and results.json.

    python -m benchmarks            # everything, several runs each (about half an hour on 2 cores)
    python -m benchmarks --quick    # the same measurements, smaller and fewer (under 5 minutes)

Every figure is the median of its runs; each ratio compares two figures measured in this same
run, interleaved, so that load from other processes hits both alike. Builds happen in
temporary copies of the project (tests/site/sitetools.copy_project): the real docs/ are never
edited.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchmarks import generate, sites
from benchmarks.common import BENCH, ROOT, Run, log, machine, median, ratio, versions, write_json

FULL_SIZES = (100, 250, 300, 1000)
QUICK_SIZES = (10, 40)
SECTIONS = ("real", "scale", "tests", "attention", "hooks")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, fewer runs: ends within 5 minutes")
    p.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")),
                   help=f"terms per generated site (default {FULL_SIZES}, --quick {QUICK_SIZES})")
    p.add_argument("--repeats", type=int, help="runs per figure (default 3, --quick 2)")
    p.add_argument("--edits", type=int, help="edits timed under mkdocs serve (default 5, --quick 2)")
    p.add_argument("--serve-size", type=int, help="terms of the generated site timed under mkdocs serve "
                   "(default: the largest size; --quick: none; 0 = none)")
    p.add_argument("--only", help=f"comma-separated sections to run: {','.join(SECTIONS)}")
    p.add_argument("--attention-shapes", choices=("tiny", "quick", "full"),
                   help="tiny: one toy shape; quick: the first realistic shape; full: three (default)")
    p.add_argument("--threads", type=lambda s: tuple(int(x) for x in s.split(",")),
                   help="torch threads for the attention snippets; the first is the published figure "
                        "(default 1,2; --quick 1)")
    p.add_argument("--no-zensical", action="store_true", help="skip the Zensical baseline")
    p.add_argument("--no-install", action="store_true", help="never pip-install Zensical (skip it if missing)")
    p.add_argument("--no-browser", action="store_true", help="page weight from the HTML only, without Chromium")
    p.add_argument("--no-warm", action="store_true", help="no warm rebuilds of the largest generated site")
    p.add_argument("--no-prime", action="store_true", help="no untimed priming build per generated site")
    p.add_argument("--no-profile", action="store_true", help="skip the cProfile of a build")
    p.add_argument("--merge", action="store_true",
                   help="keep the sections of the existing results.json that this run does not measure")
    p.add_argument("--out", type=Path, default=BENCH, help="where RESULTS.md and results.json go (default benchmarks/)")
    args = p.parse_args(argv)
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    args.repeats = args.repeats or (2 if args.quick else 3)
    args.edits = args.edits or (2 if args.quick else 5)
    if args.serve_size is None:  # --quick times mkdocs serve on the real site only
        args.serve_size = 0 if args.quick else max(args.sizes)
    args.attention_shapes = args.attention_shapes or ("quick" if args.quick else "full")
    args.threads = args.threads or ((1,) if args.quick else (1, 2))
    if args.quick:  # each of these costs another build or test session; --quick stays under 5 minutes
        args.no_profile = args.no_prime = args.no_warm = True
    args.only = tuple(args.only.split(",")) if args.only else SECTIONS
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        p.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


def summarise(runs: list[Run]) -> dict:
    ok = [r for r in runs if r.returncode == 0]
    return {
        "median_s": median(r.wall_s for r in ok),
        "cpu_median_s": median(r.cpu_s for r in ok),
        "runs_s": [round(r.wall_s, 3) for r in runs],
        "peak_rss_mb": max((r.peak_rss_mb for r in runs), default=None),
        "failed_runs": len(runs) - len(ok),
        "error": next((r.output[-4000:] for r in runs if r.returncode), None),
    }


def _notebook_runs(log_file: Path, before: int) -> int:
    from benchmarks.common import count_lines

    return count_lines(log_file) - before


# --------------------------------------------------------------------------- the real site

def bench_real(args, tmp: Path, results: dict) -> None:
    from benchmarks.common import count_lines

    project = generate.real_project(tmp / "real")
    site = tmp / "real-site"
    nb_log = tmp / "real-notebooks.log"
    plain_roots = generate.plain_projects(project, tmp / "real-plain")
    cold, warm, plain, zensical = [], [], [], []
    notebooks_cold, notebooks_warm = [], []
    use_zensical = "zensical" in results["baselines"]
    for r in range(args.repeats):
        log(f"real site: cold build {r + 1}/{args.repeats}")
        sites.clear_caches(project, site)
        before = count_lines(nb_log)
        cold.append(sites.termbase_build(project, site, nb_log))
        notebooks_cold.append(_notebook_runs(nb_log, before))
        log(f"real site: warm build {r + 1}/{args.repeats}")
        before = count_lines(nb_log)
        warm.append(sites.termbase_build(project, site, nb_log))
        notebooks_warm.append(_notebook_runs(nb_log, before))
        plain.append(sites.plain_build(plain_roots, tmp / "real-plain-site"))
        if use_zensical:
            zensical.append(sites.zensical_build(plain_roots))
    real = {
        "pages_per_language": sum(1 for _ in (project / "docs").rglob("*.en.md")),
        "terms": len(list((project / "termbase" / "terms").glob("*.yml"))),
        "cold": summarise(cold),
        "warm": summarise(warm),
        "plain_mkdocs": summarise(plain),
        "notebook_executions": {"cold_builds": notebooks_cold, "warm_builds": notebooks_warm},
    }
    if zensical:
        real["zensical"] = summarise(zensical)
    real["ratios"] = {
        "cold_over_plain_mkdocs": ratio(real["cold"]["median_s"], real["plain_mkdocs"]["median_s"]),
        "warm_over_cold": ratio(real["warm"]["median_s"], real["cold"]["median_s"]),
    }
    if zensical:
        real["ratios"]["cold_over_zensical"] = ratio(real["cold"]["median_s"], real["zensical"]["median_s"])
    results["real_site"] = real
    if real["cold"]["failed_runs"] == len(cold):
        log("real site: the build fails; skipping serve and page weight")
        return
    # page weight: entry and notebook page of the real site, against the plain MkDocs page
    from benchmarks import weight

    log("real site: page weight")
    real["page_weight"] = weight.measure(site, use_browser=not args.no_browser)
    entry = real["page_weight"]["pages"].get("entry")
    plain_site = tmp / "real-plain-site" / "en"
    if entry and (plain_site / entry / "index.html").is_file():
        real["page_weight"]["plain_mkdocs_entry"] = weight.static_weight(plain_site, entry)
    # edit to visible under mkdocs serve
    entry_src = project / "docs" / "glossary" / "multi-head-attention.en.md"
    if not entry_src.exists():
        entry_src = next((p for p in sorted((project / "docs" / "glossary").glob("*.en.md"))
                          if not p.name.startswith("index.")), None)
    if entry_src is not None:
        log(f"real site: mkdocs serve, {args.edits} edits of {entry_src.name}")
        url = f"glossary/{entry_src.name[:-len('.en.md')]}/"
        real["serve"] = sites.serve_edit_to_visible(project, entry_src, url, args.edits, nb_log)
        real["serve"]["median_s"] = median(real["serve"]["runs_s"])
        real["ratios"]["edit_to_visible_over_warm_build"] = ratio(real["serve"]["median_s"], real["warm"]["median_s"])
    if not args.no_profile:
        from benchmarks import profile

        log("real site: cProfile of one warm build")
        real["profile"] = profile.profile_build(project, site, tmp / "real-build")


# --------------------------------------------------------------------------- scale

def bench_scale(args, tmp: Path, results: dict) -> None:
    from benchmarks.common import count_lines

    use_zensical = "zensical" in results["baselines"]
    scale = {"sizes": list(args.sizes), "by_size": {}}
    projects = {}
    for n in args.sizes:
        log(f"scale: generating {n} terms x 3 languages")
        start = time.perf_counter()
        project = generate.scale_project(tmp / f"scale-{n}", n)
        info = {"generate_s": time.perf_counter() - start, "pages": project["pages"]}
        ok, out = generate.termbase_check(tmp / f"scale-{n}")
        info["termbase_check"] = "passes" if ok else out[-3000:]
        roots = generate.plain_projects(tmp / f"scale-{n}", tmp / f"scale-{n}-plain")
        projects[n] = (tmp / f"scale-{n}", roots)
        # one untimed build first: executes the notebooks once (a fixed cost that does not grow
        # with N, measured by the real-site cold build) and warms the file cache
        if not args.no_prime:
            log(f"scale {n}: priming build")
            prime = sites.termbase_build(tmp / f"scale-{n}", tmp / f"scale-{n}-site", tmp / "scale-notebooks.log")
            info["priming_build"] = {"wall_s": prime.wall_s, "returncode": prime.returncode,
                                     "error": prime.output[-3000:] if prime.returncode else None}
        info["termbase_cold"], info["plain_mkdocs"], info["zensical"] = [], [], []
        scale["by_size"][n] = info
    for r in range(args.repeats):
        for n in args.sizes:
            project, roots = projects[n]
            info = scale["by_size"][n]
            log(f"scale {n}: run {r + 1}/{args.repeats}")
            sites.clear_caches(project, tmp / f"scale-{n}-site", keep=("notebooks",))
            info["termbase_cold"].append(sites.termbase_build(project, tmp / f"scale-{n}-site", tmp / "scale-notebooks.log"))
            info["plain_mkdocs"].append(sites.plain_build(roots, tmp / f"scale-{n}-plain-site"))
            if use_zensical:
                info["zensical"].append(sites.zensical_build(roots))
    largest = max(args.sizes)
    warm, zwarm = [], []
    for r in range(0 if args.no_warm else args.repeats):
        log(f"scale {largest}: warm builds {r + 1}/{args.repeats}")
        project, roots = projects[largest]
        warm.append(sites.termbase_build(project, tmp / f"scale-{largest}-site", tmp / "scale-notebooks.log"))
        if use_zensical:
            zwarm.append(sites.zensical_build(roots, clean=False))
    for n, info in scale["by_size"].items():
        for key in ("termbase_cold", "plain_mkdocs", "zensical"):
            info[key] = summarise(info[key]) if info[key] else None
        site = tmp / f"scale-{n}-site"
        entry = next(iter(sorted((site / "glossary").glob("*-attention/index.html"))), None)
        info["entry_html_bytes"] = entry.stat().st_size if entry else None
        index = site / "search" / "search_index.json"
        info["search_index_bytes"] = index.stat().st_size if index.exists() else None
        info["ratios"] = {
            "termbase_over_plain_mkdocs": ratio(info["termbase_cold"]["median_s"], info["plain_mkdocs"]["median_s"]),
            "termbase_over_zensical": ratio(info["termbase_cold"]["median_s"], (info["zensical"] or {}).get("median_s")),
        }
    scale["warm_at_largest"] = {"termbase": summarise(warm) if warm else None,
                                "zensical": summarise(zwarm) if zwarm else None}
    by = scale["by_size"]
    if 250 in by and 1000 in by:
        scale["linearity_1000_over_250"] = {
            tool: ratio((by[1000][tool] or {}).get("median_s"), (by[250][tool] or {}).get("median_s"))
            for tool in ("termbase_cold", "plain_mkdocs", "zensical")
        }
        scale["linearity_1000_over_250_cpu"] = {
            tool: ratio((by[1000][tool] or {}).get("cpu_median_s"), (by[250][tool] or {}).get("cpu_median_s"))
            for tool in ("termbase_cold", "plain_mkdocs", "zensical")
        }
    small, big = min(args.sizes), max(args.sizes)
    if small != big:
        scale["growth_largest_over_smallest"] = {
            "sizes": [small, big],
            **{tool: ratio((by[big][tool] or {}).get("median_s"), (by[small][tool] or {}).get("median_s"))
               for tool in ("termbase_cold", "plain_mkdocs", "zensical")},
        }
    results["scale"] = scale
    if args.serve_size and args.serve_size in projects:
        project, _ = projects[args.serve_size]
        slug = sorted((project / "termbase" / "terms").glob("*.yml"))[0].stem
        log(f"scale {args.serve_size}: mkdocs serve, {args.edits} edits")
        before = count_lines(tmp / "scale-notebooks.log")
        serve = sites.serve_edit_to_visible(project, project / "docs" / "glossary" / f"{slug}.en.md",
                                            f"glossary/{slug}/", args.edits, tmp / "scale-notebooks.log")
        serve["n"] = args.serve_size
        serve["median_s"] = median(serve["runs_s"])
        serve["notebook_executions_total"] = count_lines(tmp / "scale-notebooks.log") - before
        serve["ratio_over_warm_build"] = ratio(serve["median_s"], (scale["warm_at_largest"]["termbase"] or {}).get("median_s")) \
            if args.serve_size == largest else None
        scale["serve"] = serve
    if not args.no_profile:
        from benchmarks import profile

        n = 250 if 250 in projects else largest
        log(f"scale {n}: cProfile of one build")
        project, _ = projects[n]
        scale["profile"] = profile.profile_build(project, tmp / f"scale-{n}-profile-site", tmp / f"scale-{n}")
        scale["profile"]["n"] = n


def bench_hooks(args, tmp: Path, results: dict) -> None:
    """Per-page cost of the termbase hooks at each size (see benchmarks/hooks_cost.py)."""
    from benchmarks import hooks_cost

    out = {}
    for n in args.sizes:
        project = tmp / f"hooks-{n}"
        if not project.exists():
            generate.scale_project(project, n)
        log(f"hooks: per-page cost at {n} terms")
        out[n] = hooks_cost.measure(project)
    results["hooks"] = out


# --------------------------------------------------------------------------- tests, attention

def bench_tests(args, tmp: Path, results: dict) -> None:
    from benchmarks import suite

    out = {}
    repeats = 1 if args.quick else args.repeats
    for name, paths in suite.parts().items():
        if paths is None:
            out[name] = {"skipped": f"tests/{name if name != 'snippets' else 'test_*.py'} does not exist"}
            continue
        if args.quick and name == "browser":
            out[name] = {"skipped": "not run by --quick"}
            continue
        runs = []
        for r in range(repeats):
            log(f"tests: {name} {r + 1}/{repeats}")
            runs.append(suite.time_part(paths))
        collect_s = None
        if not args.quick:
            collect_s = suite.measure([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                                       *paths], cwd=ROOT, env=suite.build_env()).wall_s
        out[name] = {"median_s": median(r["wall_s"] for r in runs), "runs_s": [round(r["wall_s"], 2) for r in runs],
                     "last": runs[-1], "collect_only_s": collect_s,
                     "ratio_over_collect_only": ratio(median(r["wall_s"] for r in runs), collect_s)}
    parts = [out[n]["median_s"] for n in ("snippets", "site") if "median_s" in out.get(n, {})]
    out["without_browser_s"] = sum(parts) if parts else None
    results["tests"] = out


def bench_attention(args, tmp: Path, results: dict) -> None:
    from benchmarks import attention

    shapes = {"tiny": attention.QUICK_SHAPES, "quick": attention.SHAPES[:1], "full": attention.SHAPES}[args.attention_shapes]
    quick = args.attention_shapes != "full"
    for i, threads in enumerate(args.threads):
        log(f"attention snippets: {len(shapes)} shape(s), {threads} thread(s)")
        out = attention.run(shapes=shapes, threads=threads, min_run_time=0.05 if args.attention_shapes == "tiny" else None,
                            rounds=1 if args.attention_shapes == "tiny" else (3 if quick else None))
        results["attention" if i == 0 else f"attention_threads_{threads}"] = out


# --------------------------------------------------------------------------- main

def write_results(args, results: dict) -> dict:
    """results.json and RESULTS.md, merged with the previous results.json under --merge."""
    from benchmarks import report

    results = dict(results)

    if args.previous is not None:
        merged = copy.deepcopy(args.previous)
        section_keys = {"real": ["real_site"], "scale": ["scale"], "tests": ["tests"], "hooks": ["hooks"],
                        "attention": [k for k in merged if k.startswith("attention")]}
        for name in args.only:  # sections measured now replace the old ones
            for key in section_keys[name]:
                merged.pop(key, None)
            merged.get("errors", {}).pop(name, None)
        runs = merged.get("runs") or [{k: merged.get(k) for k in ("command", "started", "duration_s",
                                                                 "load_average_start", "load_average_end", "sections")}]
        runs.append({k: results.get(k) for k in ("command", "started", "duration_s", "load_average_start",
                                                  "load_average_end", "sections")})
        errors = {**merged.get("errors", {}), **results["errors"]}
        merged.update(results)
        merged["errors"], merged["runs"] = errors, runs
        merged["sections"] = sorted({s for run in runs for s in run.get("sections") or []})
        merged["baselines"] = sorted(set(merged.get("baselines", [])) | set(results["baselines"]))
        results = merged
    results["targets"] = report.targets(results)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "results.json", results)
    (args.out / "RESULTS.md").write_text(report.markdown(results), encoding="utf-8")
    return results


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.time()
    results = {
        "command": "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": machine(),
        "load_average_start": os.getloadavg(),
        "baselines": ["plain_mkdocs"],
        "sections": list(args.only),
        "errors": {},
    }
    if not args.no_zensical and ({"real", "scale"} & set(args.only)):
        ok, how = sites.ensure_zensical(install=not args.no_install)
        results["zensical_install"] = how
        if ok:
            results["baselines"].append("zensical")
    results["versions"] = versions(sites.zensical_python())
    previous = args.out / "results.json"
    args.previous = json.loads(previous.read_text(encoding="utf-8")) if args.merge and previous.exists() else None
    with tempfile.TemporaryDirectory(prefix="termbase-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name, fn in (("attention", bench_attention), ("scale", bench_scale), ("hooks", bench_hooks),
                         ("real", bench_real), ("tests", bench_tests)):
            if name not in args.only:
                continue
            try:
                fn(args, tmp, results)
            except Exception:  # noqa: BLE001 - one section failing must not lose the others
                results["errors"][name] = traceback.format_exc()[-4000:]
                log(f"{name}: FAILED\n" + results["errors"][name])
            # written after every section: a long run that is stopped keeps what it measured
            results["load_average_end"] = os.getloadavg()
            results["duration_s"] = time.time() - started
            write_results(args, results)
    results["load_average_end"] = os.getloadavg()
    results["duration_s"] = time.time() - started
    write_results(args, results)
    log(f"wrote {args.out / 'RESULTS.md'} and results.json in {results['duration_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
