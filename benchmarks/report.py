"""Targets and RESULTS.md from the results of one run (results.json).

Every "why" and "what would close it" is assembled from figures of the same run: the sampled
profiles of the builds and rebuilds (benchmarks/profile.py), the timelines of `mkdocs serve`'s
own messages, the slowest tests pytest reports, the ratios between tools. Nothing here states
a fact about the machine or the code that the run did not measure."""

from __future__ import annotations

import json
import re

from benchmarks.common import DEFAULT, LANGS  # the project's languages, from mkdocs.yml

KB = 1024
NAMES = {"en": "English", "es": "Spanish", "da": "Danish"}  # the report's words for them; the list is LANGS
KINDS = {**{lang: f"{NAMES.get(lang, lang)} entry" for lang in LANGS}, "record": "term record"}
# The processes on the path from a save to the edited page under `mkdocs serve`: MkDocs' own
# process checks the sources, and each language (the default one too) rebuilds in its own.
ROLES = {**{lang: ("main", lang) for lang in LANGS}, "record": ("main", *LANGS)}


def _s(value) -> str:
    return "–" if value is None or value != value else f"{value:.2f} s"


def _x(value) -> str:
    return "–" if value is None or value != value else f"{value:.2f}×"


def _mb(value) -> str:
    return "–" if value is None else f"{value:.0f} MB"


def _kb(value) -> str:
    return "–" if value is None else f"{value / KB:.1f} KB"


def _get(data, *keys, default=None):
    for key in keys:
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, dict) and str(key) in data:
            data = data[str(key)]
        else:
            return default
    return data


def _table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _short(function: str) -> str:
    """`termbase/core/check/__init__.py:39(run)` -> `termbase/core/check/__init__.py:39 run`."""
    match = re.fullmatch(r"(.+?):(\d+)\((.+)\)", function)
    return f"{match.group(1)}:{match.group(2)} {match.group(3)}" if match else function


def _phase_name(phase: str) -> str:
    return " › ".join(_short(p) for p in phase.split(" > "))


def top_phases(profile: dict | None, role: str = "main", count: int = 4, per: int = 1) -> list[tuple[str, float, float]]:
    """(phase, share, seconds per build or rebuild) of the largest phases a process sampled."""
    proc = _get(profile or {}, "processes", role) or _get(profile or {}, role)
    if not proc:
        return []
    return [(_phase_name(row["function"]), row["share"], row["approx_s"] / per) for row in proc["phases"][:count]]


def _phases_text(profile, role="main", count=4, per=1) -> str:
    rows = top_phases(profile, role, count, per)
    return "; ".join(f"{name} {share:.0%} (≈{sec:.1f} s)" for name, share, sec in rows)


def _timeline(edit: dict) -> dict:
    """When, after the save, the rebuild started and each language's build ended (mkdocs serve's
    own messages, timestamped as they arrived)."""
    out = {}
    for t, line in edit.get("timeline") or []:
        if "Building documentation" in line and "start" not in out:
            out["start"] = t
        match = re.search(r"(?:\[(\w+)\] )?Documentation built in ([\d.]+) seconds", line)
        if match:
            out.setdefault(match.group(1) or "en", t)
    return out


def _median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _serve_profile(r: dict, key: str) -> tuple[dict | None, int, str]:
    """The profile that explains the rebuilds of a serve measurement: its own profiled round (one
    edit of each kind: per rebuild = ÷ 4), else the warm build of the same size (one build)."""
    s = _get(r, "serve", key) or {}
    if s.get("profile"):
        return s["profile"], 4, "sampled in the profiled round, per rebuild"
    warm = _get(r, "scale", "profile_warm") if key == "large" else _get(r, "real_site", "profile_warm")
    if warm and "processes" in warm and (key != "large" or warm.get("n") == s.get("terms")):
        return warm, 1, "sampled in a warm build of the same size (what every rebuild repeats)"
    return None, 1, ""


def _serve_cause(serve: dict, kind: str, profile=None, per: int = 4, how: str = "") -> str:
    edits = _get(serve, "edits", kind) or []
    if not edits:
        return serve.get("error") or "not measured"
    marks = [_timeline(e) for e in edits]
    start = _median(m.get("start") for m in marks)
    built = {lang: _median(m.get(lang) for m in marks) for lang in LANGS}
    parts = [f"median of {len(edits)} edits: the rebuild began {_s(start)} after the save"]
    parts += [f"the {lang} build ended at {_s(built[lang])}" for lang in LANGS if built[lang] is not None]
    text = ", ".join(parts)
    if profile:
        for role in ROLES[kind]:
            phases = _phases_text(profile, role, 3, per)
            if phases:
                text += f". {how[:1].upper()}{how[1:]}, {role} process: {phases}"
    return text


def _is_wait(phase: str) -> bool:
    """A phase that waits for another process (the other languages): its time is theirs."""
    return phase.rsplit(" > ", 1)[-1].endswith("(wait)")


def _close_from(profile, budget: float, measured: float | None, roles=("main",), per: int = 1) -> str:
    """What would have to go, from the sampled profile: the time is the slowest process's, so each
    process on the path must lose the same fraction of its own work (its waits for the others
    excluded); the largest steps of each, until that fraction is reached."""
    if measured is None or not profile:
        return "profile it (run without --no-profile) to see which steps to remove"
    procs = _get(profile, "processes") or profile
    fraction = 1 - budget / measured
    parts = []
    for role in roles:
        proc = procs.get(role)
        if not proc or not proc.get("approx_build_s"):
            continue
        phases = [row for row in proc["phases"] if not _is_wait(row["function"])]
        waited = sum(row["approx_s"] for row in proc["phases"] if _is_wait(row["function"])) / per
        own = proc["approx_build_s"] / per - waited
        picked, total = [], 0.0
        for row in phases:
            picked.append(f"{_phase_name(row['function'])} ≈{row['approx_s'] / per:.1f} s")
            total += row["approx_s"] / per
            if total >= fraction * own:
                break
        parts.append(f"{role}: ≈{fraction * own:.1f} s of its ≈{own:.1f} s of own work"
                     + (f" (it also waits ≈{waited:.1f} s for the other languages)" if waited > 0.05 else "")
                     + f", i.e. {'; '.join(picked)}")
    if not parts:
        return "no profile of the processes on this path"
    return (f"{fraction:.0%} of the time must go from every process on the path (the measured {_s(measured)} "
            f"against {_s(budget)}): " + " | ".join(parts) + " - steps to skip when their inputs did not "
            "change, or to take off the path between the save and the page")


def _target(name, goal, measured, ok, missed_by, cause, fix):
    status = "not measured" if measured is None else ("met" if ok else "missed")
    return {"target": name, "goal": goal, "measured": measured, "status": status,
            "missed_by": None if ok or measured is None else missed_by,
            "cause": None if ok else cause, "to_close": None if ok else fix}


def targets(r: dict) -> list[dict]:
    out = []
    serve = r.get("serve") or {}
    settings = r.get("settings") or {}
    for key, budget in (("real", 1.0), ("large", 3.0)):
        s = serve.get(key) or {}
        size = (f"{s['terms']} terms" if s.get("terms") else
                "real site" if key == "real" else f"{settings.get('serve_size') or 1000} terms")
        for kind in KINDS:
            t = _get(s, "medians_s", kind)
            t = None if t is None or t != t else t
            by_lang = _get(s, "median_by_language_s", kind) or {}
            shown = None if t is None else (f"{_s(t)}" + (" (" + ", ".join(f"{lang} {_s(v)}" for lang, v in by_lang.items()
                                                                          if v is not None) + ")" if kind == "record" else ""))
            out.append(_target(f"edit-to-visible, {KINDS[kind]}, {size}", f"≤ {budget:.0f} s (median)", shown,
                               t is not None and t <= budget, None if t is None else f"{t - budget:.2f} s",
                               _serve_cause(s, kind, *_serve_profile(r, key)),
                               _close_from(_serve_profile(r, key)[0], budget, t, ROLES[kind],
                                           per=_serve_profile(r, key)[1])))
    real = r.get("real_site") or {}
    scale = r.get("scale") or {}
    largest = max((int(n) for n in (scale.get("by_size") or {})), default=None) or \
        max(settings.get("sizes") or [1000])
    for label, info, profile in (("real site", real, real.get("profile_warm")),
                                 (f"{largest} terms", _get(scale, "by_size", largest) or {}, scale.get("profile_warm"))):
        w = _get(info, "ratios", "warm_over_cold")
        w = w if w and w.get("wall") is not None else None
        if not info:
            continue
        warm_s = _get(info, "warm", "median_s")
        outside = None
        if profile and profile.get("wall_s"):
            sampled = _get(profile, "processes", "main", "approx_build_s")
            outside = profile["wall_s"] - sampled if sampled else None
        cause = (f"the warm build ({_s(warm_s)}) still spends, in MkDocs' process: "
                 f"{_phases_text(profile)}" + (f"; {_s(outside)} of its wall time is outside MkDocs' "
                                                "`build` function" if outside else "")
                 + (f"; es process: {_phases_text(profile, 'es', 3)}" if _get(profile or {}, 'processes', 'es') else ""))
        cold_s = _get(info, "cold", "median_s")
        fix = (_close_from(profile, 0.3 * cold_s, warm_s, ("main", *(lang for lang in LANGS if lang != DEFAULT)))
               if cold_s else "measure the cold build")
        out.append(_target(f"warm build ≤ 0.3× cold, {label}", "warm ÷ cold ≤ 0.30 (wall; CPU beside it)",
                           None if w is None else f"{_x(w['wall'])} (CPU {_x(w['cpu'])}; warm {_s(warm_s)}, "
                           f"cold {_s(cold_s)})",
                           w is not None and w["wall"] <= 0.3, None if w is None else f"{w['wall'] - 0.3:.2f}",
                           cause, fix))
    big = _get(scale, "by_size", largest) or {}
    z = _get(big, "ratios", "cold_over_zensical")
    z = z if z and z.get("wall") is not None else None
    pz = _get(big, "ratios", "plain_mkdocs_over_zensical")
    cp = _get(big, "ratios", "cold_over_plain_mkdocs")
    out.append(_target(
        f"cold build faster than Zensical, {largest} terms × 3", "this build ÷ Zensical < 1 (wall; CPU beside it)",
        None if z is None else f"{_x(z['wall'])} (CPU {_x(z['cpu'])}; this {_s(_get(big, 'cold', 'median_s'))}, "
        f"Zensical {_s(_get(big, 'zensical', 'median_s'))})",
        z is not None and z["wall"] < 1, None if z is None else f"{_x(z['wall'])} Zensical's time",
        (f"on the same pages, plain MkDocs + Material takes {_x(_get(pz, 'wall'))} Zensical's wall time "
         f"(CPU {_x(_get(pz, 'cpu'))}) and this build {_x(_get(cp, 'wall'))} plain MkDocs' (CPU {_x(_get(cp, 'cpu'))}); "
         f"a cold build of {largest} terms spends, in MkDocs' process: {_phases_text(scale.get('profile_cold'))}; "
         f"es process: {_phases_text(scale.get('profile_cold'), 'es', 3)}"),
        (f"even with no plugin, MkDocs on these pages is {_x(_get(pz, 'wall'))} Zensical's time: the plugin's own "
         "steps listed (sampled) would have to cost less than nothing; closing it needs a builder that is faster "
         "than MkDocs on these pages, or fewer pages rendered per build (only what changed)")))
    tests = _get(r, "tests", "summary") or {}
    for name, budget, label in (("without_browser", 60, "test command without the browser tests"),
                                ("whole", 180, "whole test command, the browser reading the records of "
                                               "unchanged pages (nothing changed between rounds)"),
                                ("whole_fresh_crawl", 180, "whole test command, every page visited "
                                                           "(`TERMBASE_FRESH_CRAWL=1`; other caches warm, unlike CI)"),
                                ("fast_tier", 60, "fast tier before a commit (`-m \"not slow and not browser\"`)")):
        t = _get(tests, name, "median_s")
        t = None if t is None or t != t else t
        last = _get(tests, name, "last") or {}
        slow = "; ".join(f"{row['test']} ({row['when']}) {row['s']:.1f} s" for row in (last.get("slowest") or [])[:5])
        pages = last.get("browser_pages") or {}
        seen = f"; browser pages reused {pages['reused']}, visited {pages['visited']}" if pages.get("reused") or \
            pages.get("visited") else ""
        failed = _get(tests, name, "failed")
        in_time = t is not None and t <= budget  # then only failing tests can miss the target
        cause = f"pytest's slowest steps in that session: {slow}" if slow else "no durations reported"
        if failed:
            cause = f"failing tests: {'; '.join(last.get('failures') or [])}. {cause}"
        out.append(_target(f"{label}, warm machine", f"≤ {budget} s (wall, median of the runs after the first)",
                           None if t is None else f"{_s(t)} (first run {_s(_get(tests, name, 'first_s'))}; "
                           f"{last.get('summary', '')}{seen})",
                           in_time and not failed,
                           None if t is None else ("0 s, but tests failed" if in_time else f"{t - budget:.1f} s"),
                           cause,
                           "the failing tests must pass" if in_time else
                           f"{_s(t - budget) if t else '–'} must go: the slowest steps above are where"))
    builds = _get(tests, "whole", "last", "builds")
    if builds:
        total = builds["build"] + builds["serve"]
        out.append(_target("full builds of the real site per run of the whole test command", "≤ 3",
                           f"{total} ({builds['build']} `mkdocs build`, {builds['serve']} `mkdocs serve`; "
                           f"{builds['in_repository']} in the repository, the rest in copies; besides them "
                           f"{builds.get('small_project', '?')} of the small fixture project and "
                           f"{builds.get('refused', '?')} refused by the check)",
                           total <= 3, f"{total - 3} builds",
                           "each test that breaks or varies the project builds its own copy of it",
                           "one session-scoped variant build, and a small fixture project for the machinery tests"))
    quick = _get(r, "tests", "quick_check")
    if quick:
        t = quick.get("median_s")
        out.append(_target(f"quick check of one entry (`termbase test {quick['entry']}`), warm", "≤ 15 s",
                           None if t is None else f"{_s(t)} (first run {_s(quick['first_s'])}; {quick['last_line']})",
                           t is not None and t <= 15 and not quick.get("failed"), None if t is None else f"{t - 15:.1f} s",
                           "the check of the whole project and the entry's tests", "cache the check per file"))
    pd = real.get("properdocs") or {}
    tool = _get(r, "tools", "properdocs") or {}
    if pd or tool:
        ok = pd.get("builds") and not (_get(pd, "same_pages", "only_first") or _get(pd, "same_pages", "only_second"))
        err = (pd.get("error") or tool.get("how") or "").strip().splitlines()
        err_line = next((line for line in reversed(err) if "Error" in line or "error" in line), err[-1] if err else "")
        measured = ("builds the site: " + f"{_s(_get(real, 'properdocs_cold', 'median_s'))} cold, "
                    f"{_x(_get(real, 'ratios', 'properdocs_cold_over_cold', 'wall'))} MkDocs' time; "
                    f"HTML files {_get(pd, 'same_pages', 'html_files')}") if pd.get("builds") else \
            (f"fails: {err_line[:300]}" if (pd or not tool.get("ok")) else None)
        out.append(_target("ProperDocs 1.6.7 builds this site unchanged", "builds, same pages (or what breaks)",
                           measured, bool(ok), "it does not build" if not pd.get("builds") else "other pages",
                           "\n".join(err[-12:]) or "–", "see the error"))
    return out


# --------------------------------------------------------------------------- RESULTS.md

def _build_rows(info: dict, keys) -> list:
    rows = []
    for key, label in keys:
        s = info.get(key)
        if not s:
            continue
        cpu_over_wall = s["cpu_median_s"] / s["median_s"] if s.get("median_s") and s.get("cpu_median_s") else None
        rows.append([label, _s(s["median_s"]), _s(s["cpu_median_s"]), _x(cpu_over_wall),
                     ", ".join(map(str, s["runs_s"])), _mb(s.get("peak_rss_mb")), _mb(s.get("tree_rss_mb")),
                     ", ".join(f"{x:.1f}" for x in s.get("load_1min") or []),
                     f"failed {s['failed_runs']}" if s["failed_runs"] else ""])
    return rows


BUILD_HEADERS = ["build", "median wall", "median CPU", "CPU ÷ wall", "runs (s)", "peak RSS, one process",
                 "peak RSS, all processes", "load (1 min) at the end", ""]


def _ratio_text(ratios: dict) -> str:
    return ", ".join(f"{k.replace('_', ' ')}: wall {_x(v['wall'])}, CPU {_x(v['cpu'])}" for k, v in ratios.items())


def _profile_md(profile: dict | None, title: str, per: int = 1) -> list[str]:
    if not profile:
        return []
    if "error" in profile:
        return [f"**{title}**: the profiled build failed: `{profile['error'][-300:]}`", ""]
    wall = f", wall {_s(profile['wall_s'])} under the sampler" if profile.get("wall_s") else ""
    each = f" per rebuild (the sum over the {per} rebuilds ÷ {per})" if per > 1 else ""
    out = [f"**{title}** (sampled every 5 ms in every process{wall}; a share is of the wall time that process "
           f"spent inside MkDocs' `build`; ≈ s: that wall time{each}):", ""]
    processes = profile.get("processes") or {}
    rows = []
    for role, proc in processes.items():
        out_of = f"{proc['approx_build_s'] / per:.1f} s in build" if proc.get("approx_build_s") else ""
        for row in proc["phases"][:8]:
            rows.append([f"{role} ({out_of})" if out_of else role, f"`{_phase_name(row['function'])}`",
                         f"{row['share']:.0%}", f"{row['approx_s'] / per:.1f}"])
            out_of = ""
    out += [_table(["process", "phase (below MkDocs' build)", "share", "≈ s"], rows), ""]
    rows = []
    for role, proc in processes.items():
        for row in [r for r in proc["inclusive"] if r["function"].startswith("termbase/")
                    and "(_worker_main)" not in r["function"]][:6]:
            rows.append([role, f"`{_short(row['function'])}`", f"{row['share']:.0%}", f"{row['approx_s'] / per:.1f}"])
    if rows:
        out += [_table(["process", "termbase function (inclusive)", "share", "≈ s"], rows), ""]
    return out


def markdown(r: dict) -> str:
    m = r["machine"]
    v = r.get("versions") or {}
    g = r.get("git") or {}
    out = [
        "# Benchmarks",
        "",
        f"Written by `{r['command'].strip()}` on {r['started']} in {(r.get('duration_s') or 0) / 60:.0f} min"
        + (" (**--quick**: small sizes, fewer runs)" if r.get("quick") else "") + ". "
        f"Commit measured: `{g.get('commit')}` ({g.get('branch')}), "
        + ("**with uncommitted changes** (" + ", ".join(f"`{x.strip()}`" for x in g.get("dirty_files", [])[:6]) + ")"
           if g.get("dirty") else "clean tree") + ". Machine-readable: `benchmarks/results.json`; "
        "`python -m benchmarks --help` lists the options.",
        "",
        "Every figure is the **median** of the runs listed next to it; every ratio compares two figures "
        "measured in this same run, interleaved (the builds of one size alternate between the tools), so "
        "that load from other processes on the machine hits both sides alike. Wall time is what a person "
        "waits; CPU time (user + system of the build and every process it waited for) is what the build "
        "itself cost, and less sensitive to load. Builds that run the languages in parallel (this one, "
        "ProperDocs) are compared with baselines that build them one after the other (plain MkDocs, "
        "Zensical): both ratios are given.",
        "",
        "## Machine and versions",
        "",
        f"- {m.get('nproc')} CPUs ({m.get('cpu_model')}), {m.get('ram_gib')} GiB RAM, {m.get('platform')}",
        f"- load average at start {', '.join(f'{x:.1f}' for x in r.get('load_average_start', []))}, "
        f"at end {', '.join(f'{x:.1f}' for x in r.get('load_average_end', []))} (1, 5, 15 min; each build's "
        "1-minute load at its end is in the tables)",
        "- " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
    ]
    z = _get(r, "tools", "zensical") or {}
    if z:
        out.append(f"- Zensical pinned at {z.get('pinned')} in its own venv ({z.get('venv')}): {z.get('how')}. "
                   + "Newer releases, asked of this machine's package index with `pip install --dry-run`: "
                   + "; ".join(f"`{spec}`: {msg}" for spec, msg in (z.get("newer") or {}).items()) + ".")
    p = _get(r, "tools", "properdocs") or {}
    if p:
        out.append(f"- ProperDocs pinned at {p.get('pinned')} in its own venv ({p.get('venv')}) with this site's build "
                   f"requirements and our plugin: {p.get('how') if p.get('ok') else 'install failed: ' + str(p.get('how'))[-500:]}"
                   + (f" (MkDocs {p['mkdocs_also_installed']} is installed beside it, pulled in by Material and "
                      "mkdocs-jupyter; ProperDocs aliases its imports)" if p.get("mkdocs_also_installed") else "") + ".")
    check = r.get("check") or {}
    failing = {k: c for k, c in check.items() if not c.get("passes")}
    if failing:
        out += ["", "**The sources fail `termbase check`** at this commit: " + "; ".join(
            f"{k}: {c['problems']} problem(s), {c.get('generated_count', len(c.get('generated_problems') or []))} of them in generated files"
            for k, c in failing.items()) + ". A build would stop there; so that the builds can be timed, "
            "the probe (`benchmarks/probe/sitecustomize.py`, TERMBASE_BENCH_IGNORE_CHECK) lets every build run "
            "the whole check (its cost stays in every figure) and go on past its verdict. First problems of the "
            "real site: " + "; ".join(f"`{x[:160]}`" for x in (next(iter(failing.values())).get("real_site_problems")
                                                              or [])[:3]) + "."]
    out += ["", "## Targets", "",
            _table(["target", "goal", "measured", "status", "missed by"],
                   [[t["target"], t["goal"], (t["measured"] or "–").replace("\n", " "), f"**{t['status']}**",
                     t["missed_by"] or ""] for t in r.get("targets", [])]), ""]
    for t in r.get("targets", []):
        if t["status"] == "missed":
            out += [f"- **{t['target']}** (missed by {t['missed_by']}). Why: {t['cause']}. What would close it: "
                    f"{t['to_close']}."]
    out.append("")

    real = r.get("real_site")
    if real:
        out += ["## The real site", "",
                f"{real['terms']} terms, {real['pages_per_language']} Markdown pages per language, built in a "
                "temporary copy with the repository's history (translation status reads it). Cold: no "
                "`.termbase-cache/` (notebooks and code blocks executed again) and no site; warm: built again with "
                "nothing changed; blocks cold: only the code-block cache removed. Plain MkDocs and Zensical build "
                "the same pages: the Markdown twin of every page that this build publishes beside its HTML "
                "(`<page>/index.md`, every marker and snippet expanded), per language, with the project's theme, "
                "assets and Markdown extensions, its nav and search, no other plugin; one build per language, in "
                "sequence, summed. ProperDocs builds this project itself, unchanged.", ""]
        out += [_table(BUILD_HEADERS, _build_rows(real, (
            ("cold", "this build, cold"), ("warm", "this build, warm"), ("blocks_cold", "this build, blocks cold"),
            ("plain_mkdocs", "plain MkDocs + Material (3 builds)"), ("zensical", "Zensical (3 builds)"),
            ("properdocs_cold", "ProperDocs, cold"), ("properdocs_warm", "ProperDocs, warm")))), ""]
        out += ["Ratios: " + _ratio_text(real.get("ratios") or {}) + ".", ""]
        nb = real.get("notebook_executions") or {}
        out += [f"Notebook executions (kernel starts counted by the probe): cold builds {nb.get('cold')}, warm builds "
                f"{nb.get('warm')}. Distinct code blocks executed by a cold build: {real.get('distinct_blocks')}; one block "
                f"costs {_s(_get(real, 'per_block_s', 'wall'))} of wall time and {_s(_get(real, 'per_block_s', 'cpu'))} "
                "of CPU ((blocks cold − warm) ÷ blocks). The builds imported `termbase` from: "
                f"{_get(real, 'termbase_imported_from', 'files')} (all from the copy: "
                f"{_get(real, 'termbase_imported_from', 'all_from_the_copy')}).", ""]
        if real.get("properdocs"):
            pd = real["properdocs"]
            out += [f"ProperDocs: {'builds the site' if pd['builds'] else 'fails'}; HTML files (this build, ProperDocs): "
                    f"{_get(pd, 'same_pages', 'html_files')}" + (f"; only in this build: {pd['same_pages']['only_first']}"
                                                                  if _get(pd, 'same_pages', 'only_first') else "")
                    + (f"; only in ProperDocs': {pd['same_pages']['only_second']}" if _get(pd, 'same_pages', 'only_second')
                       else "") + ".", ""]
            if pd.get("error"):
                out += ["```", pd["error"][-2500:].strip(), "```", ""]
        if _get(real, "cold", "error"):
            out += ["The real build failed:", "", "```", real["cold"]["error"][-1500:].strip(), "```", ""]
        out += _profile_md(real.get("profile_cold"), "Where a cold build of the real site spends its time")
        out += _profile_md(real.get("profile_warm"), "Where a warm build of the real site spends its time")
        entry = _get(real, "page_weight", "static", "entry")
        if entry:
            out += [f"Page weight of /{_get(real, 'page_weight', 'pages', 'entry')}: HTML {_kb(entry.get('html_bytes'))}, "
                    f"first visit {_kb(entry.get('first_visit_bytes'))} (static: the files the HTML and its CSS "
                    "reference).", ""]

    scale = r.get("scale")
    if scale:
        out += ["## Scale: the real site grown to N terms × 3 languages", "",
                "Each size is the real site plus generated entries up to N terms, each made as `termbase new` "
                "makes one (`termbase/data/templates/`: record, three pages, and code) with prose of real words "
                "in each language (benchmarks/generate.py); `termbase check` is run on each (see above). The "
                f"generated entries share {scale.get('distinct_blocks')} snippet modules, so a cold build executes "
                "that many generated code blocks, not one per entry: one more block costs what the real site's "
                "per-block figure says (above).", ""]
        rows = []
        for n, info in scale["by_size"].items():
            rows.append([n, info.get("pages_per_language"), _s(_get(info, "cold", "median_s")),
                         _s(_get(info, "cold", "cpu_median_s")), _s(_get(info, "warm", "median_s")),
                         _s(_get(info, "plain_mkdocs", "median_s")), _s(_get(info, "zensical", "median_s")),
                         _s(_get(info, "zensical_warm", "median_s")),
                         _x(_get(info, "ratios", "cold_over_zensical", "wall")),
                         _x(_get(info, "ratios", "cold_over_zensical", "cpu")),
                         _x(_get(info, "ratios", "warm_over_cold", "wall")),
                         _mb(_get(info, "cold", "tree_rss_mb")), _mb(_get(info, "zensical", "tree_rss_mb")),
                         info.get("distinct_blocks_run"),
                         "passes" if info.get("check_passes") else
                         f"fails ({info.get('check_problems_in_generated_files')} in generated files)"])
        out += [_table(["N", "pages / language", "cold", "cold CPU", "warm", "plain MkDocs", "Zensical",
                        "Zensical warm", "÷ Zensical", "÷ Zensical, CPU", "warm ÷ cold", "peak RSS, all",
                        "Zensical RSS", "blocks run", "check"], rows), ""]
        for n, info in scale["by_size"].items():
            out += [f"N={n}:", "", _table(BUILD_HEADERS, _build_rows(info, (
                ("cold", "this build, cold"), ("warm", "this build, warm"), ("plain_mkdocs", "plain MkDocs (3 builds)"),
                ("zensical", "Zensical, cold (3 builds)"), ("zensical_warm", "Zensical, warm (3 builds)")))), "",
                "Ratios: " + _ratio_text(info.get("ratios") or {}) + ".", ""]
        gr = scale.get("growth")
        if gr:
            out += [f"Growth from {gr['sizes'][0]} to {gr['sizes'][1]} terms ({gr['pages'][0]} → {gr['pages'][1]} pages "
                    "per language): " + ", ".join(f"{k.replace('_', ' ')} wall {_x(v['wall'])}, CPU {_x(v['cpu'])}"
                                                  for k, v in gr.items() if isinstance(v, dict)) + ".", ""]
        out += _profile_md(scale.get("profile_cold"), f"Where a cold build of {_get(scale, 'profile_cold', 'n')} terms "
                                                      "spends its time")
        out += _profile_md(scale.get("profile_warm"), f"Where a warm build of {_get(scale, 'profile_warm', 'n')} terms "
                                                      "spends its time")

    serve = r.get("serve")
    if serve:
        out += ["## Edit to visible under `mkdocs serve`", "",
                "`mkdocs serve` in a copy; each round edits the English, the Spanish and the Danish page of one "
                "entry (a sentence appended, real words so that the check of every rebuild passes) and its term "
                "record (each language's short definition), in turn, and times from the save until the served "
                "page shows the edit: each entry edit on its own language's page, the record on the entry's page in "
                "every language, all requested from the save on. The edited page is written from its preview, "
                "rendered before the rebuild (termbase/site/preview.py); every other page is the last one published "
                "until its language has rebuilt, and \"every language rebuilt\" is when the server's "
                "/.termbase/serve.json says so (termbase/site/serve.py). Every language has rebuilt before the next "
                "edit.", ""]
        for key, s in serve.items():
            rows = []
            for kind in KINDS:
                edits = _get(s, "edits", kind) or []
                by_lang = _get(s, "median_by_language_s", kind) or {}
                rows.append([KINDS[kind], _s(_get(s, "medians_s", kind)),
                             ", ".join(f"{lang} {_s(v)}" for lang, v in by_lang.items() if v is not None),
                             ", ".join(f"{e['s']:.2f}" for e in edits),
                             _s(_median(e["all_rebuilt_s"] for e in edits))])
            out += [f"**{s.get('terms')} terms** (entry `{s.get('slug')}`; server start {_s(s.get('startup_s'))}; "
                    f"notebook executions during the edits: {s.get('notebook_executions_during_edits')}):", "",
                    _table(["edit", "median", "per language", "runs (s)", "every language rebuilt"], rows), ""]
            if s.get("error"):
                out += ["```", s["error"][-2000:].strip(), "```", ""]
            edit = (_get(s, "edits", "en") or [None])[0]
            if edit:
                out += ["A timeline of the first English edit (seconds after the save, mkdocs serve's messages): "
                        + "; ".join(f"{t:.2f} {line.strip()[:90]}" for t, line in edit["timeline"]) + ".", ""]
            out += _profile_md({"processes": s["profile"]} if s.get("profile") else None,
                               "Where the rebuilds of the profiled round (one edit of each kind) spend their time", per=4)

    tests = r.get("tests")
    if tests:
        out += ["## Test suite", "",
                "The README's test command in the repository: whole (`python -m pytest`) and without the browser "
                "tests (`--ignore=tests/browser`); its parts (snippets and claims, site, browser) are the sums of "
                "pytest's own durations in the whole session (a session fixture such as the site build counts "
                "in the first test that needs it), or their own sessions with `--separate-parts`. Rounds "
                "interleave the sessions; the first round finds the "
                "repository's cache of executed blocks and notebooks as it was, the later rounds a warm machine. "
                "`whole` reads the browser's records of the pages that have not changed since a passing run of "
                "the whole command (tests/browser/crawl.py): between rounds nothing changes, so its later rounds "
                "are its best case; `whole_fresh_crawl` visits every page, with every other cache warm (CI, on "
                "a fresh clone, has none: its time is in the CI log, not here). The parts of `whole` count the "
                "browser tests with the records read.", ""]
        rows = []
        for name, s in (tests.get("summary") or {}).items():
            rows.append([name, _s(s["median_s"]), _s(s["cpu_median_s"]), _s(s["first_s"]), ", ".join(map(str, s["runs_s"])),
                         s["last"].get("summary", "")])
        out += [_table(["session", "median (warm)", "CPU", "first run", "runs (s)", "last result"], rows), ""]
        for name, s in (tests.get("summary") or {}).items():
            slow = s["last"].get("slowest") or []
            if slow:
                out += [f"Slowest in `{name}`: " + "; ".join(f"{row['test']} ({row['when']}) {row['s']:.1f} s"
                                                            for row in slow[:6]) + "."]
            parts = s["last"].get("parts") or {}
            if parts:
                out += [f"Parts of `{name}` (pytest's durations, summed): " + "; ".join(
                    f"{part} {v['s']:.1f} s (" + ", ".join(f"{f} {t:.1f} s" for f, t in list(v["files"].items())[:4]) + ")"
                    for part, v in parts.items()) + "."]
            if s["last"].get("failures"):
                out += [f"Failures in `{name}`: " + "; ".join(s["last"]["failures"][:5]) + "."]
        out.append("")

    att = r.get("attention")
    if att:
        out += _attention(att)

    if r.get("errors"):
        out += ["## Sections that failed", ""]
        for name, tb in r["errors"].items():
            out += [f"**{name}**:", "", "```", tb.strip()[-2000:], "```", ""]
    return "\n".join(out) + "\n"


def _attention(att: dict) -> list[str]:
    out = [f"## Attention on CPU, {att['threads']} thread", "",
           f"torch {att['torch']}, {att['mode']}; `torch.utils.benchmark` blocked_autorange "
           f"({att['min_run_time_s']} s) × {att['rounds']} interleaved rounds, median of the rounds' medians; "
           f"clock: {att.get('clock', 'wall')}. The three parts are measured alone, each on the same inputs for "
           "its variants (benchmarks/attention.py): the projection of one role (one `nn.Linear(d, d)`, its output "
           "viewed as heads, against h `nn.Linear(d, d/h)` holding the same weights), the attention core on "
           "(B, h, T, d_k) (h products of 3-D tensors, one per head, against one 4-D product and "
           "`F.scaled_dot_product_attention`), and the whole layer (`PerHeadAttention`, `MultiHeadAttention`, "
           "`EfficientSelfAttention`, `nn.MultiheadAttention`). ms: CPU time (wall time in brackets).", ""]
    columns = {"projection": ["per_head", "fused"], "core": ["per_head", "batched", "sdpa"],
               "layer": ["per_head", "fused", "efficient", "torch_mha"]}
    for part, names in columns.items():
        rows = []
        ratio_keys = []
        for row in att["rows"]:
            if part not in row:
                continue
            s, p = row["shape"], row[part]
            ratio_keys = list(p["ratios"])
            rows.append([f"B={s['B']} T={s['T']} d={s['d']} h={s['h']}",
                         *(f"{p['ms'][k]:.3f} ({p['wall_ms'][k]:.3f})" if k in p["ms"] else "–" for k in names),
                         *(f"{_x(p['ratios'][k])} ({_x(p['wall_ratios'].get(k))})" for k in ratio_keys)])
        if rows:
            out += [f"**{part}**", "", _table(["shape", *(f"{k} ms" for k in names), *(k.replace("_", " ") for k in ratio_keys)],
                                              rows), ""]
    checks = [row.get("checks") for row in att["rows"]]
    out += ["The variants of each part compute the same numbers (largest absolute differences, float32): "
            + "; ".join(", ".join(f"{k} {v:.1e}" for k, v in c.items()) for c in checks if c) + ".", ""]
    return out


if __name__ == "__main__":  # re-render RESULTS.md from results.json
    import sys
    from pathlib import Path

    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["targets"] = targets(data)
    (path.parent / "RESULTS.md").write_text(markdown(data), encoding="utf-8")
