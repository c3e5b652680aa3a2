"""`{{ benchmark_table }}`: the attention-snippet timings from benchmarks/results.json (written by
`python -m benchmarks`), as one table with the same numbers in every language."""

from __future__ import annotations

import json

from termbase.model import ROOT, ui

RESULTS = ROOT / "benchmarks" / "results.json"

def label(key: str, lang: str) -> str:
    return ui()["benchmarks"][key][lang]


def _num(value: float, lang: str, digits: int = 2) -> str:
    text = f"{value:.{digits}f}"
    return text if lang == "en" else text.replace(".", ",")


def load() -> dict | None:
    try:
        return json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def benchmark_table(slug, lang) -> str:
    results = load() or {}
    attention = results.get("attention") or {}
    rows = attention.get("rows") or []
    if not rows:
        return label("none", lang)
    has_efficient = all("efficient" in row["ms"] for row in rows)
    columns = ["shape", "per_head", "fused"] + (["efficient"] if has_efficient else []) + ["torch_mha", "speedup"]
    columns += ["vs_torch"] if has_efficient else []
    lines = ["| " + " | ".join(label(c, lang) for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        shape, ms, ratios = row["shape"], row["ms"], row["ratios"]
        cells = [f"B={shape['B']}, T={shape['T']}, d={shape['d']}, h={shape['h']}",
                 _num(ms["per_head"], lang), _num(ms["fused"], lang)]
        if has_efficient:
            cells.append(_num(ms["efficient"], lang))
        cells.append(_num(ms["torch_mha"], lang))
        speedup = ratios["per_head_over_fused"]
        cells.append(label("faster" if speedup >= 1 else "slower", lang).format(
            x=_num(speedup if speedup >= 1 else 1 / speedup, lang)))
        if has_efficient:
            cells.append(_num(ratios["efficient_over_torch_mha"], lang) + "×")
        lines.append("| " + " | ".join(cells) + " |")
    speedups = sorted(row["ratios"]["per_head_over_fused"] for row in rows)
    parts = []
    if has_efficient:
        effs = sorted(row["ratios"]["efficient_over_torch_mha"] for row in rows)
        parts.append(label("summary", lang).format(
            lo=_num(speedups[0], lang, 1), hi=_num(speedups[-1], lang, 1),
            mid=_num(speedups[len(speedups) // 2], lang, 1), elo=_num(effs[0], lang), ehi=_num(effs[-1], lang)))
    machine = results.get("machine") or {}
    caption = label("measured", lang).format(
        rounds=attention.get("rounds", "?"), torch=attention.get("torch", "?"), threads=attention.get("threads", "?"),
        cpus=machine.get("nproc", "?"), cpu=machine.get("cpu_model", "?"), date=str(results.get("started", "?"))[:10])
    return "\n\n".join(parts + ["\n".join(lines), f"<small>{caption}</small>"])
