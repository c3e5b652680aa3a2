"""Trainable block-sparse attention: Native Sparse Attention's three branches and MoBA's blocks,
for one query of the snippet's demo."""

from __future__ import annotations

import math

import torch
from matplotlib.patches import Rectangle

from figures import (INK, LINE, MUTED, PAPER, WEIGHTS, cell_color, empty_square, figure,
                                  masked_square, square, text)

from snippets.native_sparse_attention import NativeSparseAttention, moba_select  # noqa: E402

SELECTED = WEIGHTS(0.72)  # a key the query attends to (as in the DeepSeek Sparse Attention figure)
FORCED = WEIGHTS(0.92)  # a block NSA always selects: the first and the two local ones
QUERY = 27  # the query drawn, counted from 1


def nsa_state(T=32, d_model=16, heads=4, groups=2, d_k=8):
    """The demo's layer and input (same seed, same order of random draws): for query QUERY and
    the first GQA group, the compressed blocks' weights (summed over the group's heads), the
    selected blocks, the window, and MoBA's blocks for the demo's MoBA keys (head 1)."""
    torch.manual_seed(0)
    nsa = NativeSparseAttention(d_model, heads, groups, d_k)
    x = torch.randn(T, d_model)
    q, kvs, masks, _ = nsa.prepare(x)
    k, _ = torch.randn(2, heads, T, d_k).unbind(0)  # the demo's MoBA keys and values
    i = QUERY - 1
    k_cmp = kvs["cmp"][0][0, 0]  # group 1's compressed keys, (C, d_k)
    seen = masks["cmp"][i]
    scores = q[0, : heads // groups, i] @ k_cmp.T / math.sqrt(d_k)
    weights = scores.masked_fill(~seen, -math.inf).softmax(-1).sum(0)  # (C,)
    moba = moba_select(q[0], k, block=8, top_k=2)[0, i]  # head 1, (4,)
    return nsa, weights, seen, nsa.chosen[0, i], masks["win"][i], moba, T


@figure("native-sparse-attention", (10.4, 3.7))
def native_sparse_attention_figure(ax):
    """One query (i = 27 of 32) and the keys each branch gives it. Top: the 15 compressed blocks of
    4 keys with stride 2, in two staggered rows, shaded by their softmax weight (hatched: not yet
    complete). Then NSA's selected blocks of 4 (forced ones darker), the window of 8, and MoBA's
    blocks of 8 (its own block and the best other). Future keys are hatched."""
    nsa, weights, seen, chosen, window, moba, T = nsa_state()
    cell, x0 = 0.24, 1.5
    i = QUERY
    tops = {"cmp": 2.95, "slc": 2.2, "win": 1.6, "moba": 0.85}
    for j in range(T):  # position numbers above every fourth key
        if j % 4 == 3 or j == 0:
            text(ax, x0 + (j + 0.5) * cell, 3.2, f"${j + 1}$", size=9, color=MUTED)
    text(ax, x0 + (i - 0.5) * cell, 3.45, r"$i$", size=11, color=INK)
    # compressed blocks: block m covers keys (m-1)*2+1 .. (m-1)*2+4
    limit = weights.max().item()
    for m in range(weights.numel()):
        y = tops["cmp"] - (0.2 if m % 2 else 0.0) - 0.17
        x = x0 + m * nsa.stride * cell
        width = nsa.block * cell - 0.03
        if seen[m]:
            fc = cell_color(weights[m].item() / limit, "weights")
            ax.add_patch(Rectangle((x, y), width, 0.15, fc=fc, ec=LINE, lw=0.5, clip_on=False))
        else:
            ax.add_patch(Rectangle((x, y), width, 0.15, fc=PAPER, ec=LINE, lw=0.5, hatch="////",
                                   clip_on=False))
    text(ax, x0 - 0.15, tops["cmp"] - 0.2, r"$\tilde{k}_m$", size=12, ha="right")
    rows = [("slc", [chosen[j // nsa.sel_block] for j in range(T)], nsa.sel_block),
            ("win", [window[j] for j in range(T)], None),
            ("moba", [moba[j // 8] for j in range(T)], 8)]
    forced = {0, (i - 1) // nsa.sel_block, (i - 1) // nsa.sel_block - 1}
    for name, keep, block in rows:
        y = tops[name] - cell
        for j in range(T):
            x = x0 + j * cell
            if j >= i:
                masked_square(ax, x, y, cell)
            elif keep[j]:
                dark = name == "slc" and j // nsa.sel_block in forced
                square(ax, x, y, cell, FORCED if dark else SELECTED)
            else:
                empty_square(ax, x, y, cell)
        if block:  # block boundaries
            for s in range(0, T + 1, block):
                ax.plot([x0 + s * cell] * 2, [y - 0.05, y + cell + 0.05], color=INK, lw=1.0,
                        clip_on=False)
    text(ax, x0 - 0.15, tops["slc"] - cell / 2, r"$n = 5$", size=12, ha="right")
    text(ax, x0 - 0.15, tops["win"] - cell / 2, r"$w = 8$", size=12, ha="right")
    text(ax, x0 - 0.15, tops["moba"] - cell / 2, r"$k = 2$", size=12, ha="right")
    text(ax, x0 + T * cell + 0.2, tops["slc"] - cell / 2, r"$b = 4$", size=11, color=MUTED, ha="left")
    text(ax, x0 + T * cell + 0.2, tops["moba"] - cell / 2, r"$b = 8$", size=11, color=MUTED,
         ha="left")
    text(ax, x0 + T * cell + 0.2, tops["cmp"] - 0.2, r"$\ell = 4,\ \delta = 2$", size=11, color=MUTED,
         ha="left")
    ax.plot([0.3, 10.1], [1.15, 1.15], color=LINE, lw=0.8, clip_on=False)
    text(ax, x0 + T * cell / 2, 0.3, r"$j$", size=13, color=MUTED)
