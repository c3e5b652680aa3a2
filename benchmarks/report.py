"""Targets and RESULTS.md from the results of one run."""

from __future__ import annotations

import json

KB = 1024


def _fmt_s(value) -> str:
    return "–" if value is None or value != value else f"{value:.2f} s"


def _fmt_x(value) -> str:
    return "–" if value is None or value != value else f"{value:.2f}×"


def _fmt_b(value) -> str:
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


def profile_summary(profile: dict | None, top: int = 6) -> str:
    """The termbase functions that take the most of a profiled build, as one line."""
    if not profile or "total_s" not in profile:
        return ""
    total = profile["total_s"] or 1
    parts = [f"{r['function']} {r['cumtime_s'] / total:.0%}" for r in profile["termbase_by_cumtime"][:top]]
    return f"cProfile of one build ({total:.1f} s under the profiler), cumulative share: " + "; ".join(parts)


def _plain_ratio(scale, n):
    return _get(scale, "by_size", n, "ratios", "termbase_over_plain_mkdocs") if n else None


def _plain_over_zensical(scale, n):
    a = _get(scale, "by_size", n, "plain_mkdocs", "median_s") if n else None
    b = _get(scale, "by_size", n, "zensical", "median_s") if n else None
    return a / b if a and b else None


def _tooltip_cause(r: dict) -> str:
    hooks = r.get("hooks") or {}
    sizes = sorted(hooks, key=int)
    ok = [n for n in sizes if "ms_per_page" in hooks[n]]
    if len(ok) < 2:
        return ""
    lo, hi = ok[0], ok[-1]
    a, b = hooks[lo]["ms_per_page"], hooks[hi]["ms_per_page"]
    compile_ = (f"; compiling its regex of every term name, which it does for every page: "
                f"{a['tooltip_regex_compile']:.1f} → {b['tooltip_regex_compile']:.1f} ms"
                if "tooltip_regex_compile" in a and "tooltip_regex_compile" in b else "")
    growth = b["tooltips"] / a["tooltips"]
    text = (f"Per page, tooltips.add_tooltips costs {a['tooltips']:.1f} ms at {lo} terms and {b['tooltips']:.1f} ms at "
            f"{hi} terms ({growth:.1f}×{compile_}), Markdown {a['markdown']:.1f} → {b['markdown']:.1f} ms, "
            f"MathML {a['mathml']:.1f} → {b['mathml']:.1f} ms, render.expand {a['expand']:.2f} → {b['expand']:.2f} ms")
    if growth > 1.5:
        return text + ": N pages × a per-page cost that grows with N is quadratic."
    return (text + ": the per-page hook work is flat (benchmarks/hooks_cost.py), so the growth beyond N is "
            "in what runs once per build over all pages (see the profile below) or in MkDocs itself.")


def _linear_fix(r: dict) -> str:
    hooks = r.get("hooks") or {}
    sizes = sorted((n for n in hooks if "ms_per_page" in hooks[n]), key=int)
    if len(sizes) >= 2 and hooks[sizes[-1]]["ms_per_page"]["tooltips"] / hooks[sizes[0]]["ms_per_page"]["tooltips"] > 1.5:
        return ("make the per-page work independent of N: look term names up in a table built once per "
                "language (not one regex of every name compiled per page)")
    return ("find the per-build step that grows faster than N in the profile of the largest size "
            "(the ones listed above), and compare with plain MkDocs' own growth on the same pages")


def _target(name, goal, measured, met, by, cause, fix):
    if measured is None:
        status = "not measured"
    else:
        status = "met" if met else "missed"
    return {"target": name, "goal": goal, "measured": measured, "status": status,
            "missed_by": None if met or measured is None else by, "cause": cause, "to_close": fix}


def targets(r: dict) -> list[dict]:
    out = []
    scale = r.get("scale") or {}
    real = r.get("real_site") or {}
    prof_scale = profile_summary(scale.get("profile"))
    prof_real = profile_summary(real.get("profile"))

    lin = _get(scale, "linearity_1000_over_250", "termbase_cold")
    lin_cpu = _get(scale, "linearity_1000_over_250_cpu", "termbase_cold")
    out.append(_target(
        "build grows linearly", "1000×3 pages within 4.5× of 250×3 (wall time, cold)",
        None if lin is None else f"{lin:.2f}× (CPU time {_fmt_x(lin_cpu)}; plain MkDocs "
        f"{_fmt_x(_get(scale, 'linearity_1000_over_250', 'plain_mkdocs'))}, Zensical "
        f"{_fmt_x(_get(scale, 'linearity_1000_over_250', 'zensical'))})",
        lin is not None and lin <= 4.5, None if lin is None else f"{lin / 4.5 - 1:.0%} over 4.5×",
        (_tooltip_cause(r) + " " + prof_scale).strip() or "needs sizes 250 and 1000 (the full run)",
        _linear_fix(r) + f" (plain MkDocs grows {_fmt_x(_get(scale, 'linearity_1000_over_250_cpu', 'plain_mkdocs'))} "
        "in CPU time from 250 to 1000 terms)"))

    largest = max((int(n) for n in _get(scale, "by_size", default={}) or {}), default=None)
    ratio_z = _get(scale, "by_size", largest, "ratios", "termbase_over_zensical") if largest else None
    out.append(_target(
        "faster than Zensical on the same pages", f"this build / Zensical < 1 (at {largest} terms × 3)",
        None if ratio_z is None else f"{ratio_z:.2f}× Zensical's time (per size: " + ", ".join(
            f"{n}: {_fmt_x(_get(v, 'ratios', 'termbase_over_zensical'))}"
            for n, v in (scale.get("by_size") or {}).items()) + ")",
        ratio_z is not None and ratio_z < 1, None if ratio_z is None else f"{ratio_z:.1f}× slower",
        "MkDocs renders and writes pages one at a time in Python (one process per language at "
        "best: 2 cores here), with Material's full nav and search index per language and the "
        "termbase hooks on every page; Zensical's Rust runtime parallelises within a build. At "
        f"{largest} terms this build takes {_fmt_x(_plain_ratio(scale, largest))} plain MkDocs' time and plain "
        f"MkDocs {_fmt_x(_plain_over_zensical(scale, largest))} Zensical's. " + prof_scale,
        "cache rendered pages keyed by a hash of their inputs (Markdown, the term records they "
        "use, the snippets they embed) so a build renders only what changed; beyond that the gap to "
        "Zensical is MkDocs' own per-page cost"))

    serve = real.get("serve") or {}
    t = serve.get("median_s")
    out.append(_target(
        "edit-to-visible, real site", "≤ 1 s from saving an entry to `mkdocs serve` serving it",
        None if t is None or t != t else f"{t:.2f} s (warm build {_fmt_s(_get(real, 'warm', 'median_s'))}; "
        f"ratio {_fmt_x(_get(real, 'ratios', 'edit_to_visible_over_warm_build'))})",
        t is not None and t == t and t <= 1, None if not t else f"{t - 1:.2f} s",
        "mkdocs serve rebuilds every page of all three languages on any change (the hooks build "
        "es and da alongside English and wait for them in on_post_build), and its server holds each "
        "request until that whole rebuild is done, so edit-to-visible ≈ one full warm build "
        "(the ratio above); the termbase check and the notebook/record loading run again on every "
        "rebuild too. " + (serve.get("error") or "") + prof_real,
        "rebuild only the edited page's language first (or only the edited page: MkDocs' "
        "--dirty, plus a page cache in the hooks) and build the other languages after serving"))

    sserve = scale.get("serve") or {}
    t = sserve.get("median_s")
    n = sserve.get("n")
    out.append(_target(
        "edit-to-visible, 1000 terms", f"≤ 3 s at 1000 terms (measured at {n} terms)",
        None if t is None or t != t else f"{t:.2f} s at {n} terms (cold build of that size "
        f"{_fmt_s(_get(scale, 'by_size', n, 'termbase_cold', 'median_s') if n else None)})",
        t is not None and t == t and t <= 3 and n == 1000, None if not t else f"{t - 3:.2f} s",
        "as above: a full three-language rebuild per save, which grows with N. " + (sserve.get("error") or ""),
        "incremental rebuilds: re-render only changed sources (and pages whose tooltips/related "
        "links name a changed term); keep the rest from the previous build"))

    nb = real.get("notebook_executions") or {}
    warm = nb.get("warm_builds")
    during = serve.get("notebook_executions_during_edits")
    measured = None if warm is None else (f"warm builds executed {warm} notebook kernels; cold builds {nb.get('cold_builds')}; "
                                          f"mkdocs serve edits of an entry: {during}")
    out.append(_target(
        "no unchanged notebook re-executed", "0 notebook executions in a warm build and in a serve rebuild",
        measured, warm is not None and all(x == 0 for x in warm) and not during,
        None if warm is None else f"{sum(warm) + (during or 0)} executions",
        "counted by benchmarks/probe/sitecustomize.py (one line per nbclient kernel start)",
        "key executed notebooks by a hash of their code and reuse the outputs"))

    tests = r.get("tests") or {}
    t = tests.get("without_browser_s")
    out.append(_target(
        "test suite without browser tests", "< 60 s (snippets + site build, wall time)",
        None if t is None else f"{t:.1f} s (snippets {_fmt_s(_get(tests, 'snippets', 'median_s'))}, "
        f"site {_fmt_s(_get(tests, 'site', 'median_s'))})",
        t is not None and t < 60, None if t is None else f"{t - 60:.1f} s",
        f"the snippet tests spend {_fmt_s(_get(tests, 'snippets', 'collect_only_s'))} of their "
        f"{_fmt_s(_get(tests, 'snippets', 'median_s'))} already in `--collect-only`: tests/snippet_blocks.py starts "
        "every declared block as a fresh `python` process at import (a thread pool of max(2, cores)), and each "
        "one imports torch (2-4 s here); tests/site builds the whole site (a cold build, see the real site) "
        "and again runs every code block copied from the HTML in a fresh interpreter",
        "a fork server: one process imports torch once, then forks a child per block (a fresh process "
        "state each, ~50 ms instead of a torch import); run the site's copied blocks through the same "
        "server, and reuse one built site for tests/site and tests/browser"))

    html = _get(real, "page_weight", "static", "entry", "html_bytes")
    parts = _get(real, "page_weight", "static", "entry", "html_parts") or {}
    out.append(_target(
        "entry page HTML", "≤ 60 KB of HTML (uncompressed)",
        None if html is None else f"{_fmt_b(html)} ({_get(real, 'page_weight', 'pages', 'entry')}; "
        f"gzip {_fmt_b(_get(real, 'page_weight', 'static', 'entry', 'html_gzip_bytes'))}; "
        f"plain MkDocs page {_fmt_b(_get(real, 'page_weight', 'plain_mkdocs_entry', 'html_bytes'))})",
        html is not None and html <= 60 * KB, None if html is None else _fmt_b(html - 60 * KB),
        "parts of the page: " + ", ".join(f"{k} {_fmt_b(v)}" for k, v in parts.items() if v is not None),
        "the code blocks are the largest part: Pygments wraps each token of the Python in a <span> "
        "(code_bytes against code_as_text_bytes above); shorter code on the entry page (e.g. the "
        "written-out helper it embeds linked rather than repeated), or lighter markup "
        "(e.g. no <span> for whitespace and plain names), brings the page under 60 KB; the nav "
        "(Material's tabs, sidebar and table of contents) is the next largest part"))

    rows = _get(r, "attention", "rows") or []
    eff = [row["ratios"].get("efficient_over_torch_mha") for row in rows]
    eff = [x for x in eff if x is not None]
    snippet = _get(r, "attention", "efficient_snippet")
    worst = max(eff) if eff else None
    out.append(_target(
        "efficient MHA snippet vs nn.MultiheadAttention", "within 1.2× of torch.nn.MultiheadAttention (every shape)",
        None if worst is None else f"worst {worst:.2f}× ({snippet['file']} {snippet['class']}; per shape: "
        + ", ".join(f"{_fmt_x(x)}" for x in eff) + ")",
        worst is not None and worst <= 1.2, None if worst is None else f"{worst / 1.2 - 1:.0%}",
        "no snippet with a fused QKV projection and F.scaled_dot_product_attention" if not snippet else
        "timed in inference (eval, no_grad), where nn.MultiheadAttention takes its native fast path",
        "use one packed Linear(d, 3d) and F.scaled_dot_product_attention"))
    return out


def _table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(r: dict) -> str:
    m = r["machine"]
    v = r.get("versions") or {}
    out = [
        "# Benchmarks",
        "",
        f"Written by `{r['command'].strip()}` on {r['started']} in {r['duration_s'] / 60:.1f} min"
        + (" (**--quick**: small sizes, fewer runs)" if r.get("quick") else "") + ". "
        "Run it again with `. .venv/bin/activate && python -m benchmarks` (about half an hour on 2 cores) or "
        "`python -m benchmarks --quick` (under 5 minutes); `--help` lists the options. Machine-readable: "
        "`benchmarks/results.json`.",
        "",
        *([f"Measured in {len(r['runs'])} invocations, merged with `--merge`: " + "; ".join(
            f"`{run['command'].strip()}` ({', '.join(run.get('sections') or [])}, {run['started']}, "
            f"{(run.get('duration_s') or 0) / 60:.0f} min)" for run in r["runs"]) + ".", ""] if r.get("runs") else []),
        "Every figure is the **median** of the runs listed next to it; every ratio compares two figures "
        "measured in this same run, interleaved (the builds of one size alternate between the tools), so "
        "that load from other processes on the machine hits both sides alike. Absolute times are "
        "context only.",
        "",
        "## Machine and versions",
        "",
        f"- {m.get('nproc')} CPUs ({m.get('cpu_model')}), {m.get('ram_gib')} GiB RAM, {m.get('platform')}",
        f"- load average at start {', '.join(f'{x:.1f}' for x in r.get('load_average_start', []))}, "
        f"at end {', '.join(f'{x:.1f}' for x in r.get('load_average_end', []))} (other work on the machine inflates absolute times)",
        "- " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        "",
        "## Targets",
        "",
        _table(["target", "goal", "measured", "status", "missed by"],
               [[t["target"], t["goal"], t["measured"] or "–", f"**{t['status']}**", t["missed_by"] or ""]
                for t in r.get("targets", [])]),
        "",
    ]
    for t in r.get("targets", []):
        if t["status"] != "met":
            out += [f"- **{t['target']}** ({t['status']}). Why: {t['cause']}. What would close it: {t['to_close']}."]
    out.append("")

    real = r.get("real_site")
    if real:
        out += ["## The real site", "",
                f"{real['terms']} terms in the term base, {real['pages_per_language']} Markdown pages per language, "
                "built in a temporary copy (`tests/site/sitetools.copy_project` plus `.git`). Cold: `.termbase-cache/` "
                "and the site removed; warm: built again with nothing changed. Plain MkDocs: the same pages per "
                "language with the `{{ marker }}` lines stripped, Material, no plugins, no hooks, three builds summed.",
                ""]
        rows = []
        for key, label in (("cold", "this build, cold"), ("warm", "this build, warm"),
                           ("plain_mkdocs", "plain MkDocs + Material (3 builds)"), ("zensical", "Zensical (3 builds)")):
            s = real.get(key)
            if s:
                rows.append([label, _fmt_s(s["median_s"]), _fmt_s(s["cpu_median_s"]), ", ".join(map(str, s["runs_s"])),
                             f"{s['peak_rss_mb']:.0f} MB" if s.get("peak_rss_mb") else "–",
                             (f"failed {s['failed_runs']}" if s["failed_runs"] else "")])
        out += [_table(["build", "median wall", "median CPU", "runs (s)", "peak RSS", ""], rows), ""]
        out += ["Ratios: " + ", ".join(f"{k.replace('_', ' ')} {_fmt_x(val)}" for k, val in real["ratios"].items()), ""]
        if real["cold"].get("error"):
            out += ["The real build failed:", "", "```", real["cold"]["error"][-1500:].strip(), "```", ""]
        serve = real.get("serve")
        if serve:
            out += [f"**Edit to visible** (`mkdocs serve`, {serve['page']} edited {len(serve['runs_s'])} times, "
                    f"polling /{serve['url']}): median {_fmt_s(serve.get('median_s'))}, runs "
                    f"{', '.join(f'{x:.2f}' for x in serve['runs_s'])} s; server start {_fmt_s(serve.get('startup_s'))}."
                    + (f" Error: {serve['error']}" if serve.get("error") else ""), ""]
        nb = real.get("notebook_executions")
        if nb:
            out += [f"**Notebook executions** (kernel starts counted by `benchmarks/probe/`): cold builds {nb['cold_builds']}, "
                    f"warm builds {nb['warm_builds']}, serve edits {(serve or {}).get('notebook_executions_during_edits')}.", ""]
        pw = real.get("page_weight")
        if pw:
            out += ["### Page weight", "",
                    "First visit: the HTML and everything it loads (static: parsed from the HTML and its CSS; "
                    "browser: Chromium with an empty cache, every response counted, including what scripts fetch). "
                    "Repeat visit: the HTML only (assets are fingerprinted or cacheable).", ""]
            rows = []
            for kind, url in pw["pages"].items():
                st = pw["static"].get(kind)
                br = pw["browser"].get(kind) or {}
                if not st:
                    rows.append([kind, "no such page in the site", "", "", "", "", ""])
                    continue
                rows.append([kind, f"/{url}", _fmt_b(st["html_bytes"]), _fmt_b(st["first_visit_bytes"]),
                             _fmt_b(br.get("first_visit_bytes")), _fmt_b(br.get("first_visit_gzip_bytes")),
                             _fmt_b(st["repeat_visit_bytes"])])
            plain = pw.get("plain_mkdocs_entry")
            if plain:
                rows.append(["entry, plain MkDocs", "", _fmt_b(plain["html_bytes"]), _fmt_b(plain["first_visit_bytes"]),
                             "", "", _fmt_b(plain["repeat_visit_bytes"])])
            out += [_table(["page", "url", "HTML", "first visit (static)", "first visit (browser)",
                            "first visit (browser, gzip)", "repeat visit"], rows), ""]
            entry = pw["static"].get("entry")
            if entry:
                out += ["Entry HTML parts: " + ", ".join(f"{k} {_fmt_b(val)}" for k, val in entry["html_parts"].items()
                                                        if val is not None) + ".", ""]
            if pw["browser"].get("error"):
                out += [f"Browser measurement failed: {pw['browser']['error']}", ""]
        if real.get("profile"):
            out += ["### Where a warm build of the real site spends its time", "", _profile_table(real["profile"]), ""]

    scale = r.get("scale")
    if scale:
        out += ["## Scale: generated terms × 3 languages", "",
                "Each size is a copy of the project whose glossary is N generated entries made from "
                "`termbase/data/templates/` (entry.md, record.yml, snippet.py; filler prose in each language, "
                "one snippet module and test per term; `termbase check` passes). This build: "
                "`mkdocs build --strict` with the project's mkdocs.yml and hooks, caches cleared except the "
                "executed notebooks (a fixed cost independent of N, see the real site's cold build). Plain "
                "MkDocs and Zensical build the same generated Markdown per language (`<page>.<lang>.md` → "
                "`<page>.md`, marker lines stripped) with one mkdocs.yml per language (the project's theme and "
                "Markdown extensions, a flat nav of the non-entry pages, no plugins or hooks); Zensical cannot "
                "build three languages in one run, so it builds each language (`zensical build --clean`, "
                "cold) and the three times are summed, as are plain MkDocs'.", ""]
        rows = []
        for n, info in scale["by_size"].items():
            tb, pm, zs = info["termbase_cold"], info["plain_mkdocs"], info.get("zensical")
            rows.append([n, info["pages"], _fmt_s(tb["median_s"]), _fmt_s(tb["cpu_median_s"]),
                         f"{tb['peak_rss_mb']:.0f} MB" if tb.get("peak_rss_mb") else "–",
                         _fmt_s(pm["median_s"]), _fmt_s((zs or {}).get("median_s")),
                         f"{zs['peak_rss_mb']:.0f} MB" if zs and zs.get("peak_rss_mb") else "–",
                         _fmt_x(info["ratios"]["termbase_over_plain_mkdocs"]),
                         _fmt_x(info["ratios"]["termbase_over_zensical"]),
                         _fmt_b(info.get("entry_html_bytes")), _fmt_b(info.get("search_index_bytes")),
                         ("check: " + info["termbase_check"][:60]) if info["termbase_check"] != "passes" else ""])
        out += [_table(["N", "pages", "this build", "CPU", "peak RSS", "plain MkDocs", "Zensical", "Zensical RSS",
                        "÷ plain", "÷ Zensical", "entry HTML", "search index (en)", ""], rows), ""]
        runs = "; ".join(f"N={n}: this {info['termbase_cold']['runs_s']}, plain {info['plain_mkdocs']['runs_s']}, "
                         f"Zensical {(info.get('zensical') or {}).get('runs_s')}" for n, info in scale["by_size"].items())
        out += [f"Runs (s): {runs}.", ""]
        if scale.get("linearity_1000_over_250"):
            out += ["Growth 1000 ÷ 250 terms (4.0 would be exactly linear): " + ", ".join(
                f"{k.replace('_', ' ')} {_fmt_x(val)}" for k, val in scale["linearity_1000_over_250"].items()) +
                "; CPU time: " + ", ".join(f"{k.replace('_', ' ')} {_fmt_x(val)}"
                                          for k, val in scale["linearity_1000_over_250_cpu"].items()) + ".", ""]
        if scale.get("growth_largest_over_smallest"):
            g = scale["growth_largest_over_smallest"]
            out += [f"Growth {g['sizes'][1]} ÷ {g['sizes'][0]} terms ({g['sizes'][1] / g['sizes'][0]:.1f} would be linear): "
                    + ", ".join(f"{k.replace('_', ' ')} {_fmt_x(val)}" for k, val in g.items() if k != "sizes") + ".", ""]
        w = scale.get("warm_at_largest") or {}
        out += [f"Warm rebuild at {max(scale['sizes'])} terms (nothing changed): this build "
                f"{_fmt_s(_get(w, 'termbase', 'median_s'))}, Zensical {_fmt_s(_get(w, 'zensical', 'median_s'))}.", ""]
        serve = scale.get("serve")
        if serve:
            cold = _get(scale, "by_size", serve["n"], "termbase_cold", "median_s")
            out += [f"**Edit to visible at {serve['n']} terms**: median {_fmt_s(serve.get('median_s'))}, runs "
                    f"{', '.join(f'{x:.2f}' for x in serve['runs_s'])} s (ratio to a warm build "
                    f"{_fmt_x(serve.get('ratio_over_warm_build'))}, to a cold build of that size "
                    f"{_fmt_x(serve['median_s'] / cold if cold and serve.get('median_s') else None)}); "
                    f"server start {_fmt_s(serve.get('startup_s'))}."
                    + (f" Error: {serve['error']}" if serve.get("error") else ""), ""]
        if scale.get("profile"):
            out += [f"### Where a build of {scale['profile'].get('n')} terms spends its time", "",
                    _profile_table(scale["profile"]), ""]

    hooks = r.get("hooks")
    if hooks:
        out += ["## Per-page cost of the hooks", "",
                "One English entry page of each generated site through each step, in a fresh interpreter "
                "whose `termbase` is that site's (`benchmarks/hooks_cost.py`), median over 15 pages, ms per page. "
                "A step whose cost grows with N makes the build grow faster than N.", ""]
        rows = []
        for n, h in hooks.items():
            ms = h.get("ms_per_page") or {}
            rows.append([n, *(f"{ms[k]:.1f}" if k in ms else "–" for k in
                              ("expand", "markdown", "mathml", "tooltips", "tooltip_regex_compile")), h.get("error", "")[:80]])
        out += [_table(["N", "render.expand", "Markdown", "mathml.to_mathml", "tooltips.add_tooltips",
                        "of which compiling its regex", ""], rows), ""]

    tests = r.get("tests")
    if tests:
        out += ["## Test suite", "", "Each part is its own `python -m pytest -q` session in the repository (wall time); "
                "the baseline is `--collect-only` of the same files (imports and collection).", ""]
        rows = []
        for name in ("snippets", "site", "browser"):
            t = tests.get(name) or {}
            if "skipped" in t:
                rows.append([name, "–", "", "", t["skipped"]])
            else:
                rows.append([name, _fmt_s(t["median_s"]), ", ".join(map(str, t["runs_s"])), _fmt_x(t["ratio_over_collect_only"]),
                             t["last"]["summary"]])
        out += [_table(["part", "median", "runs (s)", "÷ collect-only", "last result"], rows), ""]
        out += [f"Without browser tests: {_fmt_s(tests.get('without_browser_s'))}.", ""]

    for key in [k for k in r if k.startswith("attention")]:
        out += _attention(r[key])

    if r.get("errors"):
        out += ["## Sections that failed", ""]
        for name, tb in r["errors"].items():
            out += [f"**{name}**:", "", "```", tb.strip()[-2000:], "```", ""]
    return "\n".join(out) + "\n"


def _attention(att: dict) -> list[str]:
    out = []
    out += [f"## Attention snippets on CPU, {att['threads']} thread(s)", "",
            f"torch {att['torch']}, {att['threads']} threads, {att['mode']}; `torch.utils.benchmark` "
            f"blocked_autorange ({att['min_run_time_s']} s) × {att['rounds']} interleaved rounds, median of the rounds' medians. "
            "per-head: `PerHeadAttention` (h Linear per role); fused: `MultiHeadAttention` (one Linear per role, "
            "attention written out); efficient: "
            + (f"`{att['efficient_snippet']['file']}` `{att['efficient_snippet']['class']}`" if att.get("efficient_snippet")
               else "no snippet yet") +
            "; packed+SDPA: reference module in benchmarks/attention.py; nn.MHA: `torch.nn.MultiheadAttention`; "
            "cores: the attention step alone on (B, h, T, d_k).", ""]
    rows = []
    for row in att["rows"]:
        s, ms, ra = row["shape"], row["ms"], row["ratios"]
        rows.append([f"B={s['B']} T={s['T']} d={s['d']} h={s['h']}",
                     *(f"{ms[k]:.3f}" if k in ms else "–" for k in
                       ("per_head", "fused", "efficient", "packed_sdpa", "torch_mha", "manual_core", "sdpa_core")),
                     _fmt_x(ra["per_head_over_fused"]), _fmt_x(ra.get("efficient_over_torch_mha")),
                     _fmt_x(ra["fused_over_torch_mha"])])
    out += [_table(["shape", "per-head ms", "fused ms", "efficient ms", "packed+SDPA ms", "nn.MHA ms",
                    "core written out ms", "core SDPA ms", "per-head ÷ fused", "efficient ÷ nn.MHA",
                    "fused ÷ nn.MHA"], rows), ""]

    return out


def _profile_table(profile: dict) -> str:
    if "error" in profile:
        return "Profile failed: " + profile["error"][-500:]
    total = profile["total_s"] or 1
    rows = [[f"`{row['function']}`", row["calls"], f"{row['cumtime_s']:.2f}", f"{row['cumtime_s'] / total:.0%}"]
            for row in profile["termbase_by_cumtime"][:12]]
    own = _table(["termbase function", "calls", "cumulative s", "share"], rows)
    rows = [[f"`{row['function']}`", row["calls"], f"{row['tottime_s']:.2f}", f"{row['tottime_s'] / total:.0%}"]
            for row in profile["all_by_tottime"][:10]]
    return (f"cProfile, {total:.1f} s of CPU under the profiler, of the process `mkdocs build` starts (English, "
            "and whatever the hooks run in it); work the hooks hand to forked processes (the other languages) "
            "shows up only as the wait for them.\n\n" + own + "\n\n" +
            _table(["function (own time)", "calls", "own s", "share"], rows))


if __name__ == "__main__":  # re-render RESULTS.md from results.json
    import sys
    from pathlib import Path

    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["targets"] = targets(data)
    (path.parent / "RESULTS.md").write_text(markdown(data), encoding="utf-8")
