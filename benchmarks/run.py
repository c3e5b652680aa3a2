"""Runs the benchmarks and writes RESULTS.md and results.json.

    python -m benchmarks            # everything, several runs each (hours on 2 busy cores)
    python -m benchmarks --quick    # the same measurements, smaller and fewer (minutes)

Every figure is the median of its runs; each ratio compares two figures measured in this same
run, interleaved, so that load from other processes hits both alike. Builds happen in temporary
copies of the project (tests/site/sitetools.copy_project), run from the copy's folder so that
the copy's own `termbase` is imported (checked in every section: `termbase_imported_from`); the
real docs/ are never edited. The test suite runs in the repository itself, as the README says.
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
from benchmarks.common import (BENCH, ROOT, git_state, log, machine, median, ratio, summarise, versions,
                               write_json)

FULL_SIZES = (100, 1000)
QUICK_SIZES = (40,)
SECTIONS = ("attention", "real", "scale", "serve", "tests")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, fewer runs")
    p.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")),
                   help=f"terms per generated site (default {FULL_SIZES}, --quick {QUICK_SIZES})")
    p.add_argument("--repeats", type=int, help="runs per build figure (default 3, --quick 1)")
    p.add_argument("--edits", type=int, help="rounds of four edits under mkdocs serve at the real size "
                   "(default 5, --quick 1)")
    p.add_argument("--large-edits", type=int, help="rounds of four edits at the largest size (default 2)")
    p.add_argument("--large-profile", action="store_true",
                   help="also profile a round of edits at the largest size (else its rebuilds are explained "
                        "by the profile of a warm build of that size)")
    p.add_argument("--serve-size", type=int, help="terms of the generated site timed under mkdocs serve "
                   "(default: the largest size; 0 = none)")
    p.add_argument("--distinct-blocks", type=int, default=4,
                   help="snippet modules (distinct code blocks) the generated entries share (default 4)")
    p.add_argument("--large-repeats", type=int, help="rounds of builds at the largest size (default 2, --quick 1)")
    p.add_argument("--test-repeats", type=int, help="runs of the whole test command and of it without the browser "
                   "tests (default 2, --quick 1); the parts run in the last round")
    p.add_argument("--separate-parts", action="store_true",
                   help="also time the test suite's three parts each as its own session (else they are read "
                        "from the whole session's durations)")
    p.add_argument("--only", help=f"comma-separated sections to run: {','.join(SECTIONS)}")
    p.add_argument("--attention-shapes", choices=("tiny", "quick", "full"),
                   help="tiny: one toy shape; quick: the first realistic shape; full: the three (default)")
    p.add_argument("--no-zensical", action="store_true", help="skip the Zensical baseline")
    p.add_argument("--no-properdocs", action="store_true", help="skip ProperDocs")
    p.add_argument("--no-install", action="store_true", help="never pip-install Zensical or ProperDocs")
    p.add_argument("--no-browser-tests", action="store_true", help="do not time the browser tests")
    p.add_argument("--no-profile", action="store_true", help="no sampling profiles of builds and rebuilds")
    p.add_argument("--merge", action="store_true",
                   help="keep the sections of the existing results.json that this run does not measure")
    p.add_argument("--out", type=Path, default=BENCH, help="where RESULTS.md and results.json go (default benchmarks/)")
    args = p.parse_args(argv)
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.edits = args.edits or (1 if args.quick else 5)
    args.large_edits = args.large_edits or (1 if args.quick else 2)
    args.test_repeats = args.test_repeats or (1 if args.quick else 2)
    args.large_repeats = args.large_repeats or (1 if args.quick else 2)
    if args.serve_size is None:
        args.serve_size = max(args.sizes) if args.sizes else 0
    args.attention_shapes = args.attention_shapes or ("quick" if args.quick else "full")
    args.only = tuple(args.only.split(",")) if args.only else SECTIONS
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        p.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


def _imports_ok(logs: sites.Logs, project: Path) -> dict:
    """Where the builds imported `termbase` from: the copy built, or (a mistake) another tree."""
    found = logs.imported_from()
    inside = [f for f in found if f != "None" and Path(f).resolve().is_relative_to(project.resolve())]
    return {"files": found, "all_from_the_copy": bool(found) and len(inside) == len(found)}


def _check_state(project: Path, results: dict, key: str) -> bool:
    """`termbase check` on a project; True when the builds must go on past its problems (the
    tree's own sources fail it: then the check still runs in every build, its verdict ignored)."""
    state = generate.termbase_check(project)
    results.setdefault("check", {})[key] = state
    if not state["passes"]:
        log(f"{key}: termbase check finds {state['problems']} problem(s) "
            f"({state['generated_count']} in generated files); builds go on past them")
    return not state["passes"]


def _blocks_in_cache(project: Path) -> int:
    folder = project / ".termbase-cache" / "blocks"
    return sum(1 for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")) if folder.is_dir() else 0


# --------------------------------------------------------------------------- the real site

def bench_real(args, tmp: Path, results: dict) -> None:
    project = generate.real_project(tmp / "real")
    ignore = _check_state(project, results, "real")
    logs = sites.Logs(tmp / "logs", "real", ignore_check=ignore)
    site = tmp / "real-site"
    real = {"terms": len(list((project / "termbase" / "data" / "terms").glob("*.yml"))),
            "pages_per_language": sum(1 for _ in (project / "docs").rglob("*.en.md")),
            "check_ignored": ignore}
    results["real_site"] = real
    runs = {k: [] for k in ("cold", "warm", "blocks_cold", "plain_mkdocs", "zensical", "properdocs_cold",
                            "properdocs_warm")}
    notebooks = {"cold": [], "warm": []}
    blocks = []
    use_zensical = results["tools"].get("zensical", {}).get("ok")
    use_properdocs = results["tools"].get("properdocs", {}).get("ok")
    plain_roots = None
    for r in range(args.repeats):
        log(f"real site: round {r + 1}/{args.repeats}: this build cold, warm, blocks cold")
        sites.clear_caches(project, site)
        before = sites.count_lines(logs.notebooks)
        runs["cold"].append(sites.termbase_build(project, site, logs))
        notebooks["cold"].append(sites.count_lines(logs.notebooks) - before)
        blocks.append(_blocks_in_cache(project))
        before = sites.count_lines(logs.notebooks)
        runs["warm"].append(sites.termbase_build(project, site, logs))
        notebooks["warm"].append(sites.count_lines(logs.notebooks) - before)
        shutil.rmtree(project / ".termbase-cache" / "blocks", ignore_errors=True)
        runs["blocks_cold"].append(sites.termbase_build(project, site, logs))
        if plain_roots is None and runs["cold"][-1].returncode == 0:
            plain_roots = generate.plain_projects(project, site, tmp / "real-plain")
        if plain_roots:
            log(f"real site: round {r + 1}/{args.repeats}: plain MkDocs, Zensical")
            runs["plain_mkdocs"].append(sites.plain_build(plain_roots, tmp / "real-plain-site"))
            if use_zensical:
                runs["zensical"].append(sites.zensical_build(plain_roots))
        if use_properdocs:
            log(f"real site: round {r + 1}/{args.repeats}: ProperDocs")
            sites.clear_caches(project, tmp / "real-properdocs-site")
            runs["properdocs_cold"].append(sites.properdocs_build(project, tmp / "real-properdocs-site", logs))
            if r == 0:  # a warm ProperDocs build once: what it reuses is this plugin's cache, measured above
                runs["properdocs_warm"].append(sites.properdocs_build(project, tmp / "real-properdocs-site", logs))
    for key, measured in runs.items():
        if measured:
            real[key] = summarise(measured)
    real["notebook_executions"] = notebooks
    real["distinct_blocks"] = blocks
    real["termbase_imported_from"] = _imports_ok(logs, project)
    cold, warm = _get(real, "cold"), _get(real, "warm")
    real["ratios"] = _ratios(real)
    bc = _get(real, "blocks_cold")
    if bc.get("median_s") and warm.get("median_s") and blocks and blocks[0]:
        real["per_block_s"] = {"wall": (bc["median_s"] - warm["median_s"]) / blocks[0],
                               "cpu": (bc["cpu_median_s"] - warm["cpu_median_s"]) / blocks[0]}
    if use_properdocs and runs["properdocs_cold"]:
        pd = real["properdocs_cold"]
        real["properdocs"] = {"builds": pd["failed_runs"] == 0, "error": pd["error"],
                              "same_pages": _same_pages(site, tmp / "real-properdocs-site")}
    if cold.get("failed_runs") == len(runs["cold"]):
        log("real site: the build fails:\n" + (cold.get("error") or "")[-2000:])
        return
    if not args.no_profile:
        from benchmarks import profile

        log("real site: sampling profiles of one cold and one warm build")
        real["profile_cold"] = profile.profile_build(project, site, tmp / "real-samples-cold", logs, clean=True)
        real["profile_warm"] = profile.profile_build(project, site, tmp / "real-samples-warm", logs)
    from benchmarks import weight

    real["page_weight"] = weight.measure(site, use_browser=False)


def _get(d: dict, key: str) -> dict:
    return d.get(key) or {}


def _ratios(info: dict) -> dict:
    """Ratios of wall time and of CPU time between this build's figures and the baselines'."""
    out = {}
    pairs = {"warm_over_cold": ("warm", "cold"), "cold_over_plain_mkdocs": ("cold", "plain_mkdocs"),
             "cold_over_zensical": ("cold", "zensical"), "plain_mkdocs_over_zensical": ("plain_mkdocs", "zensical"),
             "warm_over_zensical_warm": ("warm", "zensical_warm"),
             "properdocs_cold_over_cold": ("properdocs_cold", "cold")}
    for name, (a, b) in pairs.items():
        fa, fb = _get(info, a), _get(info, b)
        if fa.get("median_s") and fb.get("median_s"):
            out[name] = {"wall": ratio(fa["median_s"], fb["median_s"]), "cpu": ratio(fa["cpu_median_s"], fb["cpu_median_s"])}
    return out


def _same_pages(a: Path, b: Path) -> dict:
    """Whether two builds wrote the same pages (paths of their HTML files)."""
    pa = {p.relative_to(a).as_posix() for p in a.rglob("*.html")} if a.is_dir() else set()
    pb = {p.relative_to(b).as_posix() for p in b.rglob("*.html")} if b.is_dir() else set()
    return {"html_files": [len(pa), len(pb)], "only_first": sorted(pa - pb)[:10], "only_second": sorted(pb - pa)[:10]}


# --------------------------------------------------------------------------- scale

def bench_scale(args, tmp: Path, results: dict) -> None:
    use_zensical = results["tools"].get("zensical", {}).get("ok")
    scale = {"sizes": list(args.sizes), "distinct_blocks": args.distinct_blocks, "by_size": {}}
    results["scale"] = scale
    projects = {}
    for n in args.sizes:
        log(f"scale {n}: generating the real site grown to {n} terms x 3 languages")
        start = time.perf_counter()
        project = tmp / f"scale-{n}"
        info = generate.scale_project(project, n, args.distinct_blocks)
        info.pop("slugs")
        info["generate_s"] = time.perf_counter() - start
        ignore = _check_state(project, results, f"scale-{n}")
        info["check_passes"] = results["check"][f"scale-{n}"]["passes"]
        info["check_problems_in_generated_files"] = results["check"][f"scale-{n}"]["generated_count"]
        logs = sites.Logs(tmp / "logs", f"scale-{n}", ignore_check=ignore)
        site = tmp / f"scale-{n}-site"
        # the first cold build makes the Markdown twins the plain projects are made of
        log(f"scale {n}: first cold build")
        sites.clear_caches(project, site)
        first = sites.termbase_build(project, site, logs)
        info["runs"] = {"cold": [first], "warm": [], "plain_mkdocs": [], "zensical": [], "zensical_warm": []}
        roots = generate.plain_projects(project, site, tmp / f"scale-{n}-plain") if first.returncode == 0 else None
        projects[n] = (project, site, logs, roots)
        scale["by_size"][n] = info
    largest = max(args.sizes)
    for r in range(args.repeats):
        for n in args.sizes:
            if n == largest and len(args.sizes) > 1 and r >= args.large_repeats:
                continue
            project, site, logs, roots = projects[n]
            runs = scale["by_size"][n]["runs"]
            log(f"scale {n}: round {r + 1}/{args.repeats}")
            if r:  # round 1's cold build is the first build above
                sites.clear_caches(project, site)
                runs["cold"].append(sites.termbase_build(project, site, logs))
            runs["warm"].append(sites.termbase_build(project, site, logs))
            if roots:
                runs["plain_mkdocs"].append(sites.plain_build(roots, tmp / f"scale-{n}-plain-site"))
                if use_zensical:
                    runs["zensical"].append(sites.zensical_build(roots))
                    runs["zensical_warm"].append(sites.zensical_build(roots, clean=False))
    for n, info in scale["by_size"].items():
        project, site, logs, _ = projects[n]
        for key, runs in info.pop("runs").items():
            if runs:
                info[key] = summarise(runs)
        info["ratios"] = _ratios(info)
        info["termbase_imported_from"] = _imports_ok(logs, project)
        info["distinct_blocks_run"] = _blocks_in_cache(project)
        entry = site / "glossary" / "attention-variant-0" / "index.html"
        info["entry_html_bytes"] = entry.stat().st_size if entry.exists() else None
        index = site / "search" / "search_index.json"
        info["search_index_bytes"] = index.stat().st_size if index.exists() else None
    if len(args.sizes) > 1:
        small, big = min(args.sizes), max(args.sizes)
        by = scale["by_size"]
        scale["growth"] = {"sizes": [small, big], "pages": [by[small]["pages_per_language"], by[big]["pages_per_language"]]}
        for key in ("cold", "warm", "plain_mkdocs", "zensical"):
            a, b = _get(by[small], key), _get(by[big], key)
            if a.get("median_s") and b.get("median_s"):
                scale["growth"][key] = {"wall": ratio(b["median_s"], a["median_s"]),
                                        "cpu": ratio(b["cpu_median_s"], a["cpu_median_s"])}
    if not args.no_profile:
        from benchmarks import profile

        n = max(args.sizes)
        project, site, logs, _ = projects[n]
        log(f"scale {n}: sampling profiles of one cold and one warm build")
        scale["profile_cold"] = {"n": n, **profile.profile_build(project, site, tmp / f"scale-{n}-samples-cold",
                                                                 logs, clean=True)}
        scale["profile_warm"] = {"n": n, **profile.profile_build(project, site, tmp / f"scale-{n}-samples-warm", logs)}


# --------------------------------------------------------------------------- mkdocs serve

SERVE_SLUG = "multi-head-attention"


def _serve_one(args, tmp: Path, results: dict, key: str, project: Path, logs: sites.Logs, edits: int,
               profile: bool = True) -> dict:
    slug = SERVE_SLUG if (project / "termbase" / "data" / "terms" / f"{SERVE_SLUG}.yml").exists() else \
        sorted((project / "termbase" / "data" / "terms").glob("*.yml"))[0].stem
    sample_dir = None if args.no_profile or not profile else tmp / f"{key}-serve-samples"
    log(f"serve {key}: mkdocs serve, {edits} round(s) of 4 edits of {slug}")
    out = sites.serve_edit_to_visible(project, slug, edits, logs, sample_dir=sample_dir)
    out["medians_s"] = {kind: median(e["s"] for e in runs) for kind, runs in out["edits"].items()}
    out["median_by_language_s"] = {kind: {lang: median(e["visible_s"].get(lang) for e in runs) for lang in sites.LANGS}
                                   for kind, runs in out["edits"].items()}
    if sample_dir is not None and sample_dir.is_dir():
        from benchmarks import profile

        out["profile"] = profile.summarise(sample_dir)
    out["termbase_imported_from"] = _imports_ok(logs, project)
    return out


def bench_serve(args, tmp: Path, results: dict) -> None:
    serve = results.setdefault("serve", {})
    project = tmp / "real"
    if not project.exists():
        generate.real_project(project)
    ignore = _check_state(project, results, "real") if "real" not in results.get("check", {}) else \
        not results["check"]["real"]["passes"]
    serve["real"] = _serve_one(args, tmp, results, "real", project, sites.Logs(tmp / "logs", "real-serve", ignore),
                               args.edits)
    serve["real"]["terms"] = len(list((project / "termbase" / "data" / "terms").glob("*.yml")))
    n = args.serve_size
    if n:
        project = tmp / f"scale-{n}"
        if not project.exists():
            generate.scale_project(project, n, args.distinct_blocks)
        key = f"scale-{n}"
        ignore = _check_state(project, results, key) if key not in results.get("check", {}) else \
            not results["check"][key]["passes"]
        serve["large"] = _serve_one(args, tmp, results, key, project, sites.Logs(tmp / "logs", f"{key}-serve", ignore),
                                    args.large_edits, profile=args.large_profile)
        serve["large"]["terms"] = n


# --------------------------------------------------------------------------- tests, attention

def bench_tests(args, tmp: Path, results: dict) -> None:
    from benchmarks import suite

    out = {"sessions": {}}
    results["tests"] = out
    order = [(name, paths) for name, paths in suite.sessions(args.separate_parts).items() if paths is not None
             and not (args.no_browser_tests and name in ("whole", "whole_fresh_crawl", "browser"))]
    for r in range(args.test_repeats):
        last = r == args.test_repeats - 1
        for name, paths in order:  # interleaved; the parts (a breakdown) in the last round only
            if name in suite.WARM or last:
                log(f"tests: {name} {r + 1}/{args.test_repeats}")
                out["sessions"].setdefault(name, []).append(suite.time_session(paths, suite.SESSION_ENV.get(name)))
    out["summary"] = {}
    for name, runs in out["sessions"].items():
        # The first round finds the block cache (and the browser's kept records) as the
        # repository has them; later rounds find what the first one left (a warm machine).
        warm = runs[1:] or runs if name in suite.WARM else runs
        out["summary"][name] = {"median_s": median(r["wall_s"] for r in warm), "cpu_median_s": median(r["cpu_s"] for r in warm),
                                "first_s": runs[0]["wall_s"], "runs_s": [round(r["wall_s"], 2) for r in runs],
                                "failed": any(r["returncode"] not in (0, 5) for r in runs), "last": runs[-1]}
    # The quick check of one entry: the first run may execute its blocks, the others find them
    # cached (a warm machine), as a contributor's second run does.
    quick = [suite.time_quick_check() for _ in range(max(2, args.test_repeats + 1))]
    out["quick_check"] = {"entry": quick[0]["entry"], "first_s": quick[0]["wall_s"],
                          "median_s": median(r["wall_s"] for r in quick[1:]), "runs_s": [round(r["wall_s"], 2) for r in quick],
                          "failed": any(r["returncode"] != 0 for r in quick), "last_line": quick[-1]["last_line"]}


def bench_attention(args, tmp: Path, results: dict) -> None:
    from benchmarks import attention

    shapes = {"tiny": attention.QUICK_SHAPES, "quick": attention.SHAPES[:1], "full": attention.SHAPES}[args.attention_shapes]
    log(f"attention: {len(shapes)} shape(s), 1 thread")
    tiny = args.attention_shapes == "tiny"
    results["attention"] = attention.run(shapes=shapes, threads=1, min_run_time=0.05 if tiny else None,
                                         rounds=1 if tiny else (3 if args.quick else None))


# --------------------------------------------------------------------------- main

def write_results(args, results: dict) -> dict:
    """results.json and RESULTS.md, merged with the previous results.json under --merge."""
    from benchmarks import report

    results = dict(results)
    if args.previous is not None:
        merged = copy.deepcopy(args.previous)
        keys = {"real": ["real_site"], "scale": ["scale"], "serve": ["serve"], "tests": ["tests"],
                "attention": ["attention"]}
        for name in args.only:
            for key in keys[name]:
                merged.pop(key, None)
            merged.get("errors", {}).pop(name, None)
        runs = merged.get("runs") or [{k: merged.get(k) for k in ("command", "started", "duration_s", "git",
                                                                 "load_average_start", "load_average_end", "sections")}]
        runs.append({k: results.get(k) for k in ("command", "started", "duration_s", "git", "load_average_start",
                                                  "load_average_end", "sections")})
        errors = {**merged.get("errors", {}), **results["errors"]}
        check = {**merged.get("check", {}), **results.get("check", {})}
        merged.update(results)
        merged["errors"], merged["runs"], merged["check"] = errors, runs, check
        merged["sections"] = sorted({s for run in runs for s in run.get("sections") or []})
        results = merged
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        results["targets"] = report.targets(results)
        text = report.markdown(results)
    except Exception:  # noqa: BLE001 - never lose the measurements to a bug in the report
        results["errors"]["report"] = traceback.format_exc()[-4000:]
        text = "# Benchmarks\n\nThe report failed:\n\n```\n" + results["errors"]["report"] + "\n```\n"
    write_json(args.out / "results.json", results)
    (args.out / "RESULTS.md").write_text(text, encoding="utf-8")
    return results


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.time()
    results = {
        "command": "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "git": git_state(),
        "machine": machine(),
        "load_average_start": os.getloadavg(),
        "sections": list(args.only),
        "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(args).items()
                     if k not in ("out", "only", "merge")},
        "tools": {},
        "errors": {},
    }
    builds = {"real", "scale"} & set(args.only)
    if builds and not args.no_zensical:
        results["tools"]["zensical"] = sites.ensure_zensical(install=not args.no_install)
    if "real" in args.only and not args.no_properdocs:
        with tempfile.TemporaryDirectory(prefix="termbase-bench-pd-") as src:
            generate.copy_project(Path(src), cache=False)
            results["tools"]["properdocs"] = sites.ensure_properdocs(Path(src), ROOT / "constraints.txt",
                                                                     install=not args.no_install)
    results["versions"] = versions({"zensical": sites.ZENSICAL_VENV / "bin" / "python",
                                    "properdocs": sites.PROPERDOCS_VENV / "bin" / "python"})
    previous = args.out / "results.json"
    args.previous = json.loads(previous.read_text(encoding="utf-8")) if args.merge and previous.exists() else None
    with tempfile.TemporaryDirectory(prefix="termbase-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name, fn in (("attention", bench_attention), ("real", bench_real), ("scale", bench_scale),
                         ("serve", bench_serve), ("tests", bench_tests)):
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
