"""The serving entries' figures: DeepSeek Sparse Attention's top-k selection, KV-cache quantization.

Every number is read off the snippets' own computations: the index scores of a LightningIndexer
and the mask top_k_mask draws from them (the demo's seed and sizes).
"""

from __future__ import annotations

import torch
from matplotlib.patches import Rectangle

from termbase.cli.figures import (LINE, MASKED, MUTED, PAPER, WEIGHTS, arrow, cell_color, figure,
                                  ink_on, text)
from snippets.deepseek_sparse_attention import LightningIndexer, top_k_mask  # noqa: E402

SELECTED = WEIGHTS(0.72)  # a key the query attends to


def _cell(ax, x, y, size, fc, ec=PAPER, lw=0.8, hatch=None):
    ax.add_patch(Rectangle((x, y), size, size, fc=fc, ec=ec, lw=lw, hatch=hatch, clip_on=False))


def _masked(ax, x, y, size):
    _cell(ax, x, y, size, MASKED, ec=LINE, lw=0.6, hatch="////")


def _empty(ax, x, y, size):
    _cell(ax, x, y, size, PAPER, ec=LINE, lw=0.6)


# --- DeepSeek Sparse Attention ----------------------------------------------------------------
def dsa_state(seq_len=8, d_model=16, top_k=3):
    """The demo's index scores (L, S) and the top-k mask drawn from them."""
    torch.manual_seed(0)
    x = torch.randn(seq_len, d_model)
    indexer = LightningIndexer(d_model, n_heads=2, head_dim=4)
    scores = indexer(x, x)
    return scores, top_k_mask(scores, top_k), top_k


@figure("deepseek-sparse-attention", (10.4, 4.3))
def deepseek_sparse_attention_figure(ax):
    """Left: the indexer's scores I[i, j] (query i, key j), future keys hatched. Right: the keys each query keeps,
    the top 3 of its row (all of them while a row has 3 or fewer)."""
    scores, keep, top_k = dsa_state()
    n = scores.size(0)
    cell, top = 0.42, 3.75
    limit = scores.tril().abs().max().item()
    for panel, x0 in enumerate((0.75, 6.0)):
        for t in range(n):
            y = top - (t + 1) * cell
            text(ax, x0 - 0.14, y + cell / 2, f"${t + 1}$", size=10, color=MUTED, ha="right")
            for s in range(n):
                x = x0 + s * cell
                if s > t:
                    _masked(ax, x, y, cell)
                elif panel == 0:
                    value = round(scores[t, s].item(), 1) + 0.0  # no "-0.0"
                    rgba = cell_color(value, "signed", limit)
                    _cell(ax, x, y, cell, rgba)
                    text(ax, x + cell / 2, y + cell / 2, f"{value:.1f}".replace("-", "\u2212"),
                         size=7, color=ink_on(rgba))
                elif keep[t, s]:
                    _cell(ax, x, y, cell, SELECTED)
                else:
                    _empty(ax, x, y, cell)
        for s in range(n):
            text(ax, x0 + (s + 0.5) * cell, top + 0.14, f"${s + 1}$", size=10, color=MUTED)
        text(ax, x0 - 0.45, top - n * cell / 2, "$i$", size=13, color=MUTED)
        text(ax, x0 + n * cell / 2, top + 0.42, "$j$", size=13, color=MUTED)
    text(ax, 0.75 + n * cell / 2, 0.2, r"$I_{ij} = \sum_r w_{ir} \max(0,\ q_{ir} \cdot k_j)$",
         size=12)
    text(ax, 6.0 + n * cell / 2, 0.2, f"$k = {top_k}$", size=12)
    arrow(ax, (0.75 + n * cell + 0.25, top - n * cell / 2), (6.0 - 0.55, top - n * cell / 2))
