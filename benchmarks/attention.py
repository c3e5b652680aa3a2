"""The site's speed claim about one projection against one per head, measured alone, on CPU,
with torch.utils.benchmark, in inference (eval(), no autograd), float32, self-attention on x.

Three measurements, each on the same inputs for its variants:
- projection: the projection of one role alone: one nn.Linear(d, d) (its output viewed as
  (B, h, T, d_k), no copy) against h nn.Linear(d, d/h), each applied to the same x;
- core: the attention step alone on (B, h, T, d_k): h products on 3-D (B, T, d_k) tensors, one
  per head (the site's scaled_dot_product_attention, snippets/scaled_dot_product_attention.py),
  against one batched 4-D product (the same function on (B, h, T, d_k)) and
  F.scaled_dot_product_attention on (B, h, T, d_k);
- layer: the whole layer: snippets/per_head_projections.py PerHeadAttention (h Linear per role,
  one attention call per head), snippets/multi_head_attention.py MultiHeadAttention (one Linear
  per role, one batched attention), snippets/efficient_multi_head_attention.py
  EfficientSelfAttention (one packed Linear(d, 3d) + F.scaled_dot_product_attention) where it
  exists, and torch.nn.MultiheadAttention(batch_first=True, need_weights=False).
"""

from __future__ import annotations

import importlib
import random
import statistics
import sys
import time

from benchmarks.common import ROOT

SHAPES = [
    {"B": 8, "T": 128, "d": 512, "h": 8},
    {"B": 1, "T": 512, "d": 768, "h": 12},
    {"B": 32, "T": 64, "d": 256, "h": 4},
]
QUICK_SHAPES = [{"B": 2, "T": 32, "d": 64, "h": 4}]
# The published figure is the CPU time of the thread that runs the variant (with one torch
# thread, all of its work): on a shared machine, the time another process holds the core is not
# counted. The wall-clock figure is measured beside it, in the same rounds.
CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}
# (numerator, denominator) of each published ratio: how many times as long the first takes.
RATIOS = {
    "projection": {"per_head_over_fused": ("per_head", "fused")},
    "core": {"per_head_over_batched": ("per_head", "batched"), "per_head_over_sdpa": ("per_head", "sdpa"),
             "batched_over_sdpa": ("batched", "sdpa")},
    "layer": {"per_head_over_fused": ("per_head", "fused"), "fused_over_torch_mha": ("fused", "torch_mha"),
              "per_head_over_torch_mha": ("per_head", "torch_mha"),
              "efficient_over_torch_mha": ("efficient", "torch_mha")},
}


def _variants(shape: dict) -> tuple[dict, dict]:
    """{part: {variant: callable}}, and the checks that the variants of a part agree."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    sys.path.insert(0, str(ROOT))
    from snippets.multi_head_attention import MultiHeadAttention
    from snippets.per_head_projections import PerHeadAttention, fused_to_per_head
    from snippets.scaled_dot_product_attention import scaled_dot_product_attention

    try:
        efficient_cls = importlib.import_module("snippets.efficient_multi_head_attention").EfficientSelfAttention
    except (ImportError, AttributeError):
        efficient_cls = None

    B, T, d, h = shape["B"], shape["T"], shape["d"], shape["h"]
    d_k = d // h
    torch.manual_seed(0)
    x = torch.randn(B, T, d)

    # (a) one role's projection: the fused Linear and the same weights cut into h Linear
    fused_proj = nn.Linear(d, d).eval()
    head_projs = nn.ModuleList(nn.Linear(d, d_k) for _ in range(h)).eval()
    with torch.no_grad():
        for head, w, b in zip(head_projs, fused_proj.weight.chunk(h), fused_proj.bias.chunk(h)):
            head.weight.copy_(w)
            head.bias.copy_(b)

    def fused_projection():
        return fused_proj(x).view(B, T, h, d_k).transpose(1, 2)  # (B, h, T, d_k), a view

    def per_head_projection():
        return [proj(x) for proj in head_projs]  # h tensors of (B, T, d_k)

    # (b) the attention core, on the tensors each form has after its projections
    q4, k4, v4 = (torch.randn(B, h, T, d_k) for _ in range(3))
    per_head_qkv = [(q4[:, i].contiguous(), k4[:, i].contiguous(), v4[:, i].contiguous()) for i in range(h)]

    def per_head_core():
        return [scaled_dot_product_attention(q, k, v) for q, k, v in per_head_qkv]

    # (c) the whole layer, the per-head module holding the fused module's weights
    fused = MultiHeadAttention(d, h).eval()
    per_head = fused_to_per_head(fused, PerHeadAttention(d, h)).eval()
    torch_mha = nn.MultiheadAttention(d, h, batch_first=True).eval()
    layer = {
        "per_head": lambda: per_head(x, x, x),
        "fused": lambda: fused(x, x, x),
        "torch_mha": lambda: torch_mha(x, x, x, need_weights=False),
    }
    if efficient_cls is not None:
        efficient = efficient_cls(d, h).eval()
        layer["efficient"] = lambda: efficient(x)
    parts = {
        "projection": {"per_head": per_head_projection, "fused": fused_projection},
        "core": {"per_head": per_head_core, "batched": lambda: scaled_dot_product_attention(q4, k4, v4),
                 "sdpa": lambda: F.scaled_dot_product_attention(q4, k4, v4)},
        "layer": layer,
    }
    with torch.no_grad():
        checks = {
            "projection_max_abs_diff": (torch.stack(per_head_projection(), 1) - fused_projection()).abs().max().item(),
            "core_per_head_vs_sdpa_max_abs_diff": (torch.stack(per_head_core(), 1)
                                                   - F.scaled_dot_product_attention(q4, k4, v4)).abs().max().item(),
            "core_batched_vs_sdpa_max_abs_diff": (scaled_dot_product_attention(q4, k4, v4)
                                                  - F.scaled_dot_product_attention(q4, k4, v4)).abs().max().item(),
            "layer_per_head_vs_fused_max_abs_diff": (per_head(x, x, x) - fused(x, x, x)).abs().max().item(),
        }
    return parts, checks


def run(shapes: list[dict] | None = None, min_run_time: float | None = None, threads: int = 1,
        rounds: int | None = None) -> dict:
    import torch
    from torch.utils import benchmark

    # One thread: on a small shared machine, two OpenMP threads stall at every barrier whenever
    # another process holds the other core, and medians swing by several times between runs.
    torch.set_num_threads(threads)
    min_run_time = 0.3 if min_run_time is None else min_run_time
    rounds = rounds or 5
    rows = []
    for shape in shapes or SHAPES:
        parts, checks = _variants(shape)
        row = {"shape": shape, "checks": checks}
        for part, variants in parts.items():
            rounds_ms = {clock: {name: [] for name in variants} for clock in CLOCKS}
            # Rounds interleave the variants (in a shuffled order each round), so that a burst of
            # load on a shared machine hits them all alike; each round is one blocked_autorange
            # per clock (its median), the figure is the median of the rounds.
            for round_ in range(rounds):
                order = list(variants)
                random.Random(round_).shuffle(order)
                for name in order:
                    for clock, fn in CLOCKS.items():
                        timer = benchmark.Timer(stmt="fn()", globals={"fn": variants[name]}, num_threads=threads,
                                                setup="import torch; torch.set_grad_enabled(False)", timer=fn)
                        with torch.no_grad():
                            measured = timer.blocked_autorange(min_run_time=min_run_time)
                        rounds_ms[clock][name].append(measured.median * 1e3)
            figures = {}
            for clock in CLOCKS:
                ms = {name: statistics.median(values) for name, values in rounds_ms[clock].items()}
                figures[clock] = {"ms": ms, "ratios": {key: ms[a] / ms[b] for key, (a, b) in RATIOS[part].items()
                                                       if a in ms and b in ms}}
            row[part] = {**figures["cpu"], "wall_ms": figures["wall"]["ms"], "wall_ratios": figures["wall"]["ratios"],
                         "rounds_ms": rounds_ms}
        rows.append(row)
    return {
        "torch": torch.__version__,
        "threads": threads,
        "min_run_time_s": min_run_time,
        "rounds": rounds,
        "mode": "inference: eval(), torch.no_grad(), self-attention x, x, x, float32, CPU",
        "clock": "thread CPU time (time.thread_time); wall-clock time beside it (wall_ms)",
        "parts": list(RATIOS),
        "rows": rows,
    }
