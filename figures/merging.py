"""Figures of attention split over parts of the keys and merged by log-sum-exp: the online
softmax, prefill and decode, ring attention."""

from __future__ import annotations

import math

import torch
from matplotlib.colors import to_rgba
from matplotlib.patches import Polygon, Rectangle

from figures import (INK, LINE, MASKED, MUTED, ON_DARK, PAPER, _num, arrow, box, cell_color,
                                  figure, ink_on, text)
from snippets.online_softmax import attend_part, merge, scores  # noqa: E402
from snippets.prefill_and_decode import arithmetic_intensity  # noqa: E402

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


# --- prefill and decode -----------------------------------------------------------------------
def generation_steps(total=10, prompt=7, chunk=3):
    """(start, stop) of each call: the prompt in chunks, then one decode step per token, as
    snippets/prefill_and_decode.generate makes them."""
    steps = [(a, min(a + chunk, prompt)) for a in range(0, prompt, chunk)]
    return steps + [(t, t + 1) for t in range(prompt, total)]


def intensities(tokens=(1, 16, 256, 2048), d=1024):
    """FLOPs per byte of a d x d bfloat16 linear layer for each number of tokens per call."""
    layer = torch.nn.Linear(d, d, bias=False, dtype=torch.bfloat16)
    return [arithmetic_intensity(layer, torch.zeros(n, d, dtype=torch.bfloat16)) for n in tokens]


@figure("prefill-and-decode", (10.4, 4.0))
def prefill_and_decode_figure(ax):
    """Left: which keys each query row uses, over T = 10 positions: a prompt of 7 in chunks of
    3, 3 and 1, then three decode steps; one colour per call, the cache it reads in light blue.
    Right: FLOPs per byte of a linear layer against tokens per call, log scale, with an A100's
    ridge (312 TFLOP/s over 2.0 TB/s)."""
    total, cell, x0, top = 10, 0.3, 0.9, 3.55
    steps = generation_steps(total)
    for s, (start, stop) in enumerate(steps):
        color = PART[s % len(PART)] if stop - start > 1 or s < 3 else MUTED
        for i in range(start, stop):
            for j in range(total):
                x, y = x0 + j * cell, top - (i + 1) * cell
                if j > i:
                    _cell(ax, x, y, cell, cell, MASKED, ec=LINE, lw=0.6, hatch="////")
                elif j >= start:
                    _cell(ax, x, y, cell, cell, color)
                else:
                    _cell(ax, x, y, cell, cell, cell_color(0.35, "weights"))
        y_mid = top - (start + stop) / 2 * cell
        label = f"$L = {stop - start}$"
        text(ax, x0 + total * cell + 0.12, y_mid, label, size=10, color=color, ha="left")
    for j in range(total):
        text(ax, x0 + (j + 0.5) * cell, top + 0.13, f"${j + 1}$", size=9, color=MUTED)
    for i in range(total):
        text(ax, x0 - 0.1, top - (i + 0.5) * cell, f"$q_{{{i + 1}}}$", size=9, ha="right")
    ax.plot([x0 - 0.05, x0 + total * cell + 0.05], [top - 7 * cell] * 2, color=INK, lw=1.4, clip_on=False)
    # Right: arithmetic intensity, log scale.
    tokens = (1, 16, 256, 2048)
    values = intensities(tokens)
    bx, by, height, width = 5.5, 0.6, 2.9, 0.7
    top_log = math.log10(1000)

    def y_of(value):
        return by + height * math.log10(value) / top_log

    for n, (t, value) in enumerate(zip(tokens, values)):
        x = bx + n * (width + 0.35)
        ridge_side = cell_color(0.8, "signed") if value >= 156 else cell_color(0.55, "weights")
        ax.add_patch(Rectangle((x, by), width, max(y_of(value) - by, 0.02), fc=ridge_side, ec=PAPER,
                               clip_on=False))
        text(ax, x + width / 2, max(y_of(value), by) + 0.15, _num(value, 1), size=10)
        text(ax, x + width / 2, by - 0.2, f"$n = {t}$", size=10)
    ridge = 312 / 2.0  # A100: 312 TFLOP/s bfloat16, 2.0 TB/s
    right = bx + 4 * (width + 0.35)
    ax.plot([bx - 0.15, right], [y_of(ridge)] * 2, color=INK, lw=1.0, ls=(0, (4, 3)), clip_on=False)
    text(ax, right + 0.05, y_of(ridge), f"${ridge:.0f}$", size=10, ha="left")
    ax.plot([bx - 0.15, bx - 0.15], [by, by + height], color=MUTED, lw=0.8, clip_on=False)
    for power in range(4):
        text(ax, bx - 0.22, y_of(10 ** power), f"$10^{{{power}}}$", size=9, color=MUTED, ha="right")


# --- ring attention ---------------------------------------------------------------------------
def ring_schedule(devices=4):
    """step[r][j]: the step at which device r attends to key/value shard j, under the rotation
    of snippets/ring_attention.ring_attention (each step, device r receives from r - 1)."""
    held = list(range(devices))
    step = [[0] * devices for _ in range(devices)]
    for s in range(devices):
        for r in range(devices):
            step[r][held[r]] = s  # counted from 0, as on the page and in the code
        held = [held[(r - 1) % devices] for r in range(devices)]
    return step


@figure("ring-attention", (10.4, 3.9))
def ring_attention_figure(ax):
    """Left: the causal score matrix of a sequence in 4 shards, rows = devices' queries, columns =
    key/value shards; each block carries the step at which its device computes it. Blocks above
    the diagonal are fully masked (lse = -inf, weight 0), the diagonal ones half. Right: the ring
    of 4 devices, each passing its key/value shard to the next."""
    n = 4
    schedule = ring_schedule(n)
    block, x0, top = 0.72, 1.1, 3.45
    for r in range(n):
        for j in range(n):
            x, y = x0 + j * block, top - (r + 1) * block
            color = PART[r]
            if j > r:
                _cell(ax, x, y, block, block, MASKED, ec=LINE, lw=0.6, hatch="////")
            elif j == r:
                _cell(ax, x, y, block, block, PAPER, ec=LINE, lw=0.6)
                ax.add_patch(Polygon([(x, y + block), (x, y), (x + block, y)], closed=True, fc=color,
                                     ec=PAPER, lw=0.8, clip_on=False))
                ax.add_patch(Polygon([(x, y + block), (x + block, y + block), (x + block, y)], closed=True,
                                     fc=MASKED, ec=LINE, lw=0.6, hatch="////", clip_on=False))
            else:
                _cell(ax, x, y, block, block, color)
            ink = INK if j > r else ink_on(to_rgba(color))
            shift = -0.16 if j == r else 0.0  # into the computed half of a diagonal block
            text(ax, x + block / 2 + shift, y + block / 2 + shift, f"{schedule[r][j]}", size=12, color=ink,
                 weight="bold")
        text(ax, x0 - 0.12, top - (r + 0.5) * block, f"$Q^{{({r})}}$", size=12, ha="right", color=PART[r])
        text(ax, x0 + (r + 0.5) * block, top + 0.17, f"$K^{{({r})}}, V^{{({r})}}$", size=10)
    # Right: the ring.
    cx, cy, radius, size = 7.3, 1.85, 1.25, 0.62
    spots = [(cx + radius * math.cos(math.pi / 2 - 2 * math.pi * r / n),
              cy + radius * math.sin(math.pi / 2 - 2 * math.pi * r / n)) for r in range(n)]
    for r, (x, y) in enumerate(spots):
        box(ax, x - size / 2, y - size / 2, size, size, f"${r}$", fc=PART[r], ec=PART[r], size=14,
            color=ON_DARK)
        nx, ny = spots[(r + 1) % n]
        dx, dy = nx - x, ny - y
        length = math.hypot(dx, dy)
        shrink = (size / 2 + 0.12) / length
        arrow(ax, (x + dx * shrink, y + dy * shrink), (nx - dx * shrink, ny - dy * shrink), lw=1.6)
    text(ax, cx, cy, "$K, V$", size=12, color=MUTED)
