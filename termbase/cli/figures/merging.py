"""Figures of attention split over parts of the keys and merged by log-sum-exp: the online
softmax, prefill and decode, ring attention."""

from __future__ import annotations

import torch
from matplotlib.patches import Rectangle

from termbase.cli.figures import (INK, LINE, MASKED, MUTED, PAPER, _num, arrow, box, cell_color,
                                  figure, ink_on, text)
from snippets.online_softmax import attend_part, merge, scores  # noqa: E402

PART = ["#2ca02c", "#d62728", "#9467bd", "#8c564b"]  # one colour per part of the keys


def _cell(ax, x, y, w, h, fc, ec=PAPER, lw=0.8, hatch=None):
    ax.add_patch(Rectangle((x, y), w, h, fc=fc, ec=ec, lw=lw, hatch=hatch, clip_on=False))


# --- online softmax ---------------------------------------------------------------------------
def merged_parts(cuts=(3, 7), keys=10, pad=3):
    """One query over `keys` keys, the first `pad` of them padding, split at `cuts`: its scores,
    each part's lse, the merge weights exp(lse_j - lse) and the merged lse."""
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 8), torch.randn(keys, 8), torch.randn(keys, 4)
    allowed = torch.ones(1, keys, dtype=torch.bool)
    allowed[:, :pad] = False
    bounds = [0, *cuts, keys]
    parts = [attend_part(q, k[a:b], v[a:b], allowed[:, a:b]) for a, b in zip(bounds, bounds[1:])]
    lses = torch.stack([lse for _, lse in parts])[:, 0]  # (P,)
    _, lse = merge(torch.stack([o for o, _ in parts]), lses[:, None])
    weights = torch.exp(lses - lse)  # (P,); exp(-inf) = 0 for the padding part
    return scores(q, k, allowed)[0], bounds, lses, weights, float(lse)


@figure("online-softmax", (10.4, 3.6))
def online_softmax_figure(ax):
    """Top: one query's scaled scores over 10 keys, the first three padding (hatched), cut into
    three parts. Below each part its lse and its weight in the merge; the weights sum to 1."""
    s, bounds, lses, weights, lse = merged_parts()
    cell, x0, top = 0.62, 1.6, 3.05
    finite = s[s.isfinite()]
    limit = float(finite.abs().max())
    for j, value in enumerate(s.tolist()):
        x = x0 + j * cell
        if value == float("-inf"):
            _cell(ax, x, top - cell, cell, cell, MASKED, ec=LINE, lw=0.6, hatch="////")
        else:
            fc = cell_color(value, "signed", limit)
            _cell(ax, x, top - cell, cell, cell, fc)
            text(ax, x + cell / 2, top - cell / 2, _num(value, 1), size=9, color=ink_on(fc))
        text(ax, x + cell / 2, top + 0.15, f"$k_{{{j + 1}}}$", size=11)
    text(ax, x0 - 0.15, top - cell / 2, "$q$", size=13, ha="right")
    # The parts: a bracket under each, its lse and its merge weight.
    y_bracket = top - cell - 0.15
    for p, (a, b) in enumerate(zip(bounds, bounds[1:])):
        left, right = x0 + a * cell + 0.04, x0 + b * cell - 0.04
        color = PART[p]
        ax.plot([left, left, right, right], [y_bracket + 0.08, y_bracket, y_bracket, y_bracket + 0.08],
                color=color, lw=2.0, clip_on=False)
        mid = (left + right) / 2
        value = "-\\infty" if lses[p] == float("-inf") else _num(float(lses[p]), 2)
        text(ax, mid, y_bracket - 0.3, f"$\\lambda_{p + 1} = {value}$",
             size=11, color=color)
        text(ax, mid, y_bracket - 0.65, f"$e^{{\\lambda_{p + 1} - \\lambda}} = {_num(float(weights[p]), 2)}$",
             size=11, color=color)
        arrow(ax, (mid, y_bracket - 0.85), (x0 + 10 * cell + 0.85, 0.55))
    # The merge.
    bx = x0 + 10 * cell + 0.9
    box(ax, bx, 0.25, 1.55, 0.6, f"$\\lambda = {_num(lse, 2)}$", size=12)
    total = float(weights.sum())
    text(ax, bx + 0.78, 1.15, f"$\\sum_j e^{{\\lambda_j - \\lambda}} = {_num(total, 2)}$", size=11, color=MUTED)
    text(ax, x0 + 5 * cell, 0.3, "$o = \\sum_j e^{\\lambda_j - \\lambda}\\, o_j$", size=13, color=INK)
