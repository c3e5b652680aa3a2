"""`{{ benchmark_table }}`: the attention-snippet timings from benchmarks/results.json (written by
`python -m benchmarks`), as one table with the same numbers in every language."""

from __future__ import annotations

import json

from termbase.model import ROOT

RESULTS = ROOT / "benchmarks" / "results.json"

LABELS = {
    "shape": {"en": "Shape", "es": "Forma", "da": "Form"},
    "per_head": {"en": "h per-head projections (ms)", "es": "h proyecciones por cabeza (ms)",
                 "da": "h projektioner pr. hoved (ms)"},
    "fused": {"en": "fused projection (ms)", "es": "proyección fusionada (ms)", "da": "samlet projektion (ms)"},
    "efficient": {"en": "fused Q/K/V + SDPA (ms)", "es": "Q/K/V fusionadas + SDPA (ms)", "da": "samlet Q/K/V + SDPA (ms)"},
    "torch_mha": {"en": "`nn.MultiheadAttention` (ms)", "es": "`nn.MultiheadAttention` (ms)", "da": "`nn.MultiheadAttention` (ms)"},
    "speedup": {"en": "fused vs per-head", "es": "fusionada frente a por cabeza", "da": "samlet mod pr. hoved"},
    "vs_torch": {"en": "fused Q/K/V + SDPA ÷ `nn.MultiheadAttention`", "es": "Q/K/V fusionadas + SDPA ÷ `nn.MultiheadAttention`",
                 "da": "samlet Q/K/V + SDPA ÷ `nn.MultiheadAttention`"},
    "faster": {"en": "{x}× faster", "es": "{x} veces más rápida", "da": "{x} gange hurtigere"},
    "slower": {"en": "{x}× slower", "es": "{x} veces más lenta", "da": "{x} gange langsommere"},
    "summary": {
        "en": "On these shapes the fused projection runs {lo}–{hi}× as fast as h separate per-head projections "
              "(median {mid}×), and the fused Q/K/V snippet takes {elo}–{ehi}× the time of `nn.MultiheadAttention`.",
        "es": "En estas formas, la proyección fusionada es entre {lo} y {hi} veces tan rápida como h proyecciones "
              "separadas por cabeza (mediana {mid}), y el fragmento con Q/K/V fusionadas tarda entre {elo} y {ehi} "
              "veces lo que tarda `nn.MultiheadAttention`.",
        "da": "På disse former kører den samlede projektion {lo}–{hi} gange så hurtigt som h separate projektioner "
              "pr. hoved (median {mid}), og kodestykket med samlet Q/K/V bruger {elo}–{ehi} gange den tid, "
              "`nn.MultiheadAttention` bruger.",
    },
    "measured": {
        "en": "Median of {rounds} rounds, `torch.utils.benchmark`, PyTorch {torch}, {threads} CPU thread(s), "
              "inference (`eval()`, no gradients), float32; {cpus} × {cpu}, measured {date}.",
        "es": "Mediana de {rounds} rondas, `torch.utils.benchmark`, PyTorch {torch}, {threads} hilo(s) de CPU, "
              "inferencia (`eval()`, sin gradientes), float32; {cpus} × {cpu}, medido el {date}.",
        "da": "Median af {rounds} runder, `torch.utils.benchmark`, PyTorch {torch}, {threads} CPU-tråd(e), "
              "inferens (`eval()`, ingen gradienter), float32; {cpus} × {cpu}, målt {date}.",
    },
    "none": {
        "en": "No measurements yet: run `python -m benchmarks` to write `benchmarks/results.json`.",
        "es": "Todavía no hay mediciones: ejecute `python -m benchmarks` para escribir `benchmarks/results.json`.",
        "da": "Der er ingen målinger endnu: kør `python -m benchmarks` for at skrive `benchmarks/results.json`.",
    },
}


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
        return LABELS["none"][lang]
    has_efficient = all("efficient" in row["ms"] for row in rows)
    columns = ["shape", "per_head", "fused"] + (["efficient"] if has_efficient else []) + ["torch_mha", "speedup"]
    columns += ["vs_torch"] if has_efficient else []
    lines = ["| " + " | ".join(LABELS[c][lang] for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        shape, ms, ratios = row["shape"], row["ms"], row["ratios"]
        cells = [f"B={shape['B']}, T={shape['T']}, d={shape['d']}, h={shape['h']}",
                 _num(ms["per_head"], lang), _num(ms["fused"], lang)]
        if has_efficient:
            cells.append(_num(ms["efficient"], lang))
        cells.append(_num(ms["torch_mha"], lang))
        speedup = ratios["per_head_over_fused"]
        cells.append(LABELS["faster" if speedup >= 1 else "slower"][lang].format(
            x=_num(speedup if speedup >= 1 else 1 / speedup, lang)))
        if has_efficient:
            cells.append(_num(ratios["efficient_over_torch_mha"], lang) + "×")
        lines.append("| " + " | ".join(cells) + " |")
    speedups = sorted(row["ratios"]["per_head_over_fused"] for row in rows)
    parts = []
    if has_efficient:
        effs = sorted(row["ratios"]["efficient_over_torch_mha"] for row in rows)
        parts.append(LABELS["summary"][lang].format(
            lo=_num(speedups[0], lang, 1), hi=_num(speedups[-1], lang, 1),
            mid=_num(speedups[len(speedups) // 2], lang, 1), elo=_num(effs[0], lang), ehi=_num(effs[-1], lang)))
    machine = results.get("machine") or {}
    caption = LABELS["measured"][lang].format(
        rounds=attention.get("rounds", "?"), torch=attention.get("torch", "?"), threads=attention.get("threads", "?"),
        cpus=machine.get("nproc", "?"), cpu=machine.get("cpu_model", "?"), date=str(results.get("started", "?"))[:10])
    return "\n\n".join(parts + ["\n".join(lines), f"<small>{caption}</small>"])
