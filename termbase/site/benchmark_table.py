"""`{{ benchmark_table }}`: the attention-snippet timings from benchmarks/results.json (written by
`python -m benchmarks`), as one table with the same numbers in every language."""

from __future__ import annotations

import json

from termbase.core.model import TermBase


def _num(value: float, lang: str, base: TermBase, digits: int = 2) -> str:
    text = f"{value:.{digits}f}"
    return text.replace(".", base.t("decimal_separator", lang))


def load(base: TermBase) -> dict | None:
    try:
        return json.loads((base.project.root / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def benchmark_table(base: TermBase, lang: str) -> str:
    def label(key: str) -> str:
        return base.ui["benchmarks"][key][lang]

    def num(value, digits=2):
        return _num(value, lang, base, digits)

    results = load(base) or {}
    attention = results.get("attention") or {}
    rows = attention.get("rows") or []
    if not rows:
        return label("none")
    has_efficient = all("efficient" in row["ms"] for row in rows)
    columns = ["shape", "per_head", "fused"] + (["efficient"] if has_efficient else []) + ["torch_mha", "speedup"]
    columns += ["vs_torch"] if has_efficient else []
    lines = ["| " + " | ".join(label(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        shape, ms, ratios = row["shape"], row["ms"], row["ratios"]
        cells = [f"B={shape['B']}, T={shape['T']}, d={shape['d']}, h={shape['h']}", num(ms["per_head"]), num(ms["fused"])]
        if has_efficient:
            cells.append(num(ms["efficient"]))
        cells.append(num(ms["torch_mha"]))
        speedup = ratios["per_head_over_fused"]
        cells.append(label("faster" if speedup >= 1 else "slower").format(x=num(speedup if speedup >= 1 else 1 / speedup)))
        if has_efficient:
            cells.append(num(ratios["efficient_over_torch_mha"]) + "×")
        lines.append("| " + " | ".join(cells) + " |")
    speedups = sorted(row["ratios"]["per_head_over_fused"] for row in rows)
    parts = []
    if has_efficient:
        effs = sorted(row["ratios"]["efficient_over_torch_mha"] for row in rows)
        parts.append(label("summary").format(
            lo=num(speedups[0], 1), hi=num(speedups[-1], 1), mid=num(speedups[len(speedups) // 2], 1),
            elo=num(effs[0]), ehi=num(effs[-1])))
    machine = results.get("machine") or {}
    caption = label("measured").format(
        rounds=attention.get("rounds", "?"), torch=attention.get("torch", "?"), threads=attention.get("threads", "?"),
        cpus=machine.get("nproc", "?"), cpu=machine.get("cpu_model", "?"), date=str(results.get("started", "?"))[:10])
    return "\n\n".join(parts + ["\n".join(lines), f"<small>{caption}</small>"])
