"""`{{ benchmark_table }}`: the attention timings from benchmarks/results.json (written by
`python -m benchmarks`, benchmarks/attention.py) as three tables, the same numbers in every
language: the projection alone, the attention core alone, and the whole layer."""

from __future__ import annotations

import json

from termbase.core.model import TermBase

# part -> (the variants shown, in this order, with their column labels; the ratio shown last:
# (numerator, denominator, label) - "x times faster" when the numerator takes longer)
TABLES = {
    "projection": ([("per_head", "proj_per_head"), ("fused", "proj_fused")],
                   ("per_head", "fused", "fused_vs_per_head")),
    "core": ([("per_head", "core_per_head"), ("batched", "core_batched"), ("sdpa", "core_sdpa")],
             ("per_head", "batched", "batched_vs_per_head")),
    "layer": ([("per_head", "layer_per_head"), ("fused", "layer_fused"), ("efficient", "layer_efficient"),
               ("torch_mha", "torch_mha")],
              ("per_head", "fused", "fused_vs_per_head")),
}


def _num(value: float, lang: str, base: TermBase, digits: int = 2) -> str:
    text = f"{value:.{digits}f}"
    return text.replace(".", base.t("decimal_separator", lang))


def load(base: TermBase) -> dict | None:
    try:
        return json.loads((base.project.root / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _table(part: str, rows: list[dict], label, num) -> str | None:
    columns, (top, bottom, ratio_label) = TABLES[part]
    columns = [(key, name) for key, name in columns if all(key in row[part]["ms"] for row in rows)]
    if not columns:
        return None
    lines = ["| " + " | ".join([label("shape"), *(label(name) for _, name in columns), label(ratio_label)]) + " |",
             "|" + "---|" * (len(columns) + 2)]
    for row in rows:
        shape, ms = row["shape"], row[part]["ms"]
        cells = [f"B={shape['B']}, T={shape['T']}, d={shape['d']}, h={shape['h']}"]
        cells += [num(ms[key], 3 if ms[key] < 1 else 2) for key, _ in columns]
        speedup = ms[top] / ms[bottom]
        cells.append(label("faster" if speedup >= 1 else "slower").format(x=num(speedup if speedup >= 1 else 1 / speedup)))
        lines.append("| " + " | ".join(cells) + " |")
    return f"**{label(part)}**\n\n" + "\n".join(lines)


def benchmark_table(base: TermBase, lang: str) -> str:
    def label(key: str) -> str:
        return base.ui["benchmarks"][key][lang]

    def num(value, digits=2):
        return _num(value, lang, base, digits)

    results = load(base) or {}
    attention = results.get("attention") or {}
    rows = [row for row in attention.get("rows") or [] if all(part in row for part in TABLES)]
    if not rows:
        return label("none")
    tables = [t for t in (_table(part, rows, label, num) for part in TABLES) if t]
    machine = results.get("machine") or {}
    caption = label("measured").format(
        rounds=attention.get("rounds", "?"), torch=attention.get("torch", "?"), threads=attention.get("threads", "?"),
        cpus=machine.get("nproc", "?"), cpu=machine.get("cpu_model", "?"), date=str(results.get("started", "?"))[:10])
    return "\n\n".join(tables + [f"<small>{caption}</small>"])
