"""The site's attention snippets on CPU, timed with torch.utils.benchmark.

Variants, all in inference (eval mode, no autograd), self-attention on one input x:
- per_head:   snippets/per_head_projections.py PerHeadAttention (h separate Linear per role)
- fused:      snippets/multi_head_attention.py MultiHeadAttention (one Linear per role holding
              every head; attention written out by snippets/scaled_dot_product_attention.py)
- efficient:  the site's efficient snippet (a fused QKV projection + F.scaled_dot_product_attention)
              when one exists in snippets/, else absent (see `efficient_snippet`)
- packed_sdpa: reference written here, not on the site: one packed Linear(d, 3d) +
              F.scaled_dot_product_attention + output Linear (what such a snippet would do)
- torch_mha:  torch.nn.MultiheadAttention(batch_first=True), need_weights=False
- sdpa_core / manual_core: the attention core only on (B, h, T, d_k): F.scaled_dot_product_attention
              vs the snippet's written-out scaled_dot_product_attention
"""

from __future__ import annotations

import ast
import importlib
import inspect
import random
import statistics
import sys
from pathlib import Path

from benchmarks.common import ROOT

SHAPES = [
    {"B": 8, "T": 128, "d": 512, "h": 8},
    {"B": 1, "T": 512, "d": 768, "h": 12},
    {"B": 32, "T": 64, "d": 256, "h": 4},
]
QUICK_SHAPES = [{"B": 2, "T": 32, "d": 64, "h": 4}]


def find_efficient_snippet(root: Path = ROOT) -> dict | None:
    """A snippet class (nn.Module) whose code uses F.scaled_dot_product_attention and one fused
    projection to 3 * d_model: the 'efficient multi-head attention' the site promises."""
    for path in sorted((root / "snippets").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "scaled_dot_product_attention(" not in text or "3 *" not in text.replace("3*", "3 *"):
            continue
        if not any(call in text for call in ("F.scaled_dot_product_attention", "functional.scaled_dot_product_attention")):
            continue
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                "Module" in ast.unparse(base) for base in node.bases
            ):
                source = ast.unparse(node)
                if "scaled_dot_product_attention" in source and "3 *" in source:
                    return {"module": f"snippets.{path.stem}", "class": node.name, "file": f"snippets/{path.name}"}
    return None


def run(shapes: list[dict] | None = None, min_run_time: float | None = None, threads: int | None = None,
        rounds: int | None = None) -> dict:
    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.utils import benchmark

    sys.path.insert(0, str(ROOT))
    from snippets.multi_head_attention import MultiHeadAttention
    from snippets.per_head_projections import PerHeadAttention, fused_to_per_head
    from snippets.scaled_dot_product_attention import scaled_dot_product_attention

    # One thread by default: on a small shared machine, two OpenMP threads stall at every barrier
    # whenever another process holds the other core, and medians swing by 10x between runs.
    threads = threads or 1
    torch.set_num_threads(threads)
    min_run_time = min_run_time if min_run_time is not None else 0.3
    rounds = rounds or 5
    shapes = shapes or SHAPES

    class PackedSDPA(nn.Module):
        """Reference: one packed in-projection, PyTorch's fused attention kernel, W^O."""

        def __init__(self, d_model, num_heads):
            super().__init__()
            self.h = num_heads
            self.in_proj = nn.Linear(d_model, 3 * d_model)
            self.out_proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.in_proj(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            out = F.scaled_dot_product_attention(q, k, v)
            return self.out_proj(out.transpose(1, 2).reshape(b, t, d))

    efficient = find_efficient_snippet()
    efficient_cls = None
    if efficient:
        try:
            efficient_cls = getattr(importlib.import_module(efficient["module"]), efficient["class"])
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            efficient["error"] = repr(exc)

    rows = []
    for shape in shapes:
        B, T, d, h = shape["B"], shape["T"], shape["d"], shape["h"]
        torch.manual_seed(0)
        x = torch.randn(B, T, d)
        fused = MultiHeadAttention(d, h).eval()
        per_head = fused_to_per_head(fused, PerHeadAttention(d, h)).eval()
        torch_mha = nn.MultiheadAttention(d, h, batch_first=True).eval()
        packed = PackedSDPA(d, h).eval()
        q4 = torch.randn(B, h, T, d // h)
        k4, v4 = torch.randn_like(q4), torch.randn_like(q4)
        variants = {
            "per_head": lambda: per_head(x, x, x),
            "fused": lambda: fused(x, x, x),
            "packed_sdpa": lambda: packed(x),
            "torch_mha": lambda: torch_mha(x, x, x, need_weights=False),
            "manual_core": lambda: scaled_dot_product_attention(q4, k4, v4),
            "sdpa_core": lambda: F.scaled_dot_product_attention(q4, k4, v4),
        }
        if efficient_cls is not None:
            try:
                module = efficient_cls(d, h).eval()
                required = [p for p in inspect.signature(module.forward).parameters.values()
                            if p.default is inspect.Parameter.empty
                            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
                args = (x,) * max(1, len(required))
                with torch.no_grad():
                    module(*args)
                variants["efficient"] = lambda module=module, args=args: module(*args)
            except Exception as exc:  # noqa: BLE001
                efficient["error"] = repr(exc)
        with torch.no_grad():
            diff = (fused(x, x, x) - per_head(x, x, x)).abs().max().item()
        row = {"shape": shape, "threads": threads, "fused_vs_per_head_max_abs_diff": diff,
               "ms": {}, "rounds_ms": {name: [] for name in variants}}
        # Rounds interleave the variants, so that a burst of load on a shared machine hits them
        # all alike; each round is one blocked_autorange (its median), the figure their median.
        for round_ in range(rounds):
            order = list(variants)
            random.Random(round_).shuffle(order)
            for name in order:
                timer = benchmark.Timer(stmt="fn()", globals={"fn": variants[name]}, num_threads=threads,
                                        setup="import torch; torch.set_grad_enabled(False)")
                with torch.no_grad():
                    m = timer.blocked_autorange(min_run_time=min_run_time)
                row["rounds_ms"][name].append(m.median * 1e3)
        row["ms"] = {name: statistics.median(values) for name, values in row["rounds_ms"].items()}
        ms = row["ms"]
        row["ratios"] = {
            "per_head_over_fused": ms["per_head"] / ms["fused"],  # how much faster fused is
            "fused_over_torch_mha": ms["fused"] / ms["torch_mha"],
            "packed_sdpa_over_torch_mha": ms["packed_sdpa"] / ms["torch_mha"],
            "manual_core_over_sdpa_core": ms["manual_core"] / ms["sdpa_core"],
        }
        if "efficient" in ms:
            row["ratios"]["efficient_over_torch_mha"] = ms["efficient"] / ms["torch_mha"]
        rows.append(row)
    return {
        "torch": torch.__version__,
        "threads": threads,
        "min_run_time_s": min_run_time,
        "rounds": rounds,
        "mode": "inference: eval(), torch.no_grad(), self-attention x, x, x, float32, CPU",
        "efficient_snippet": efficient,
        "rows": rows,
    }
