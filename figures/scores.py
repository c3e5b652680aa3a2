"""Score functions and their variants: additive scores over the key plane, the saturation of
unscaled dot products, block-sparse layouts, and the two maps of differential attention."""

from __future__ import annotations

import math

import torch
from matplotlib.patches import Rectangle

from snippets.additive_attention import AdditiveAttention
from snippets.differential_attention import differential_attention, lambda_init
from snippets.multiplicative_attention import LuongScore, luong_attention
from snippets.sparse_attention import bigbird_layout, fixed_mask, strided_mask, tile_layout
from figures import (INK, LINE, MASKED, MUTED, ON_DARK, PAPER, SIGNED, WEIGHTS, _num, _values, cell_color,
                                  col_labels, figure, matrix, row_labels, text, tokens)


def _style_axes(axes):
    """A plot inside the canvas: muted ticks and frame, the site's font sizes."""
    for spine in axes.spines.values():
        spine.set_color(MUTED)
        spine.set_linewidth(0.8)
    axes.tick_params(colors=MUTED, labelcolor=INK, labelsize=9, width=0.8)


# --- additive attention ------------------------------------------------------------------------
def demo_additive():
    """The additive_attention demo's layer (d_q = d_k = d_a = 2), its query and its three keys."""
    attn = AdditiveAttention(d_q=2, d_k=2, d_attn=2)
    attn.w_q.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]).T)
    attn.w_k.weight.copy_(torch.tensor([[0.5, -0.5], [1.0, 0.5]]).T)
    attn.v.weight.copy_(torch.tensor([[1.0, -1.0]]))
    q = torch.tensor([[[1.0, 0.0]]])
    keys = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    return attn, q, keys


@figure("additive-scores", (7.6, 4.3))
def additive_scores(ax):
    """e(q, k) = tanh(q W_q + k W_k) v for every key k of the plane, the demo's keys marked."""
    attn, q, keys = demo_additive()
    n, lim = 31, 3.0
    axis = torch.linspace(-lim, lim, n)
    grid = torch.stack(torch.meshgrid(axis, axis, indexing="xy"), dim=-1)  # (n, n, 2): [x, y]
    scores = attn.scores(q, grid.reshape(1, -1, 2))[0, 0].reshape(n, n)
    z = _values(scores)
    plot = ax.inset_axes((0.75, 0.55, 3.3, 3.3), transform=ax.transData)
    levels = [x / 4 for x in range(-8, 9)]  # the score lies in [-|v|_1, |v|_1] = [-2, 2]
    xs = _values(axis)
    plot.contourf(xs, xs, z, levels=levels, cmap=SIGNED, vmin=-2.4, vmax=2.4)
    plot.contour(xs, xs, z, levels=[0.0], colors=[INK], linewidths=0.9)
    plot.set_xlim(-lim, lim)
    plot.set_ylim(-lim, lim)
    plot.set_xticks([-3, -2, -1, 0, 1, 2, 3])
    plot.set_yticks([-3, -2, -1, 0, 1, 2, 3])
    _style_axes(plot)
    plot.set_xlabel("$k_{j1}$", color=INK, fontsize=11, labelpad=2)
    plot.set_ylabel("$k_{j2}$", color=INK, fontsize=11, labelpad=2)
    # The demo's three keys, their scores and weights (the same numbers the demo prints).
    e = _values(attn.scores(q, keys)[0, 0])
    _, weights = attn(q, keys, torch.zeros(1, 3, 1))
    w = _values(weights[0, 0])
    for j, (kx, ky) in enumerate(_values(keys[0])):
        plot.plot([kx], [ky], marker="o", markersize=6, color=INK, markeredgecolor=PAPER, lw=0)
        plot.annotate(f"$k_{{{j + 1}}}$", (kx, ky), xytext=(6, 5), textcoords="offset points", fontsize=11,
                      color=INK)
    text(ax, 2.4, 4.12, r"$e_j = \tanh(q\, W_q + k_j W_k)\, v$", size=12)
    # The table of the three keys, right of the plot.
    x0, top = 5.0, 3.3
    col_x = [x0, x0 + 0.75, x0 + 1.55]
    for x, head in zip(col_x, ["$j$", "$e_j$", r"$\alpha_j$"]):
        text(ax, x, top, head, size=12)
    for j in range(3):
        y = top - 0.5 * (j + 1)
        text(ax, col_x[0], y, f"${j + 1}$", size=11)
        text(ax, col_x[1], y, _num(e[j]), size=11)
        text(ax, col_x[2], y, _num(w[j]), size=11)
    ax.plot([x0 - 0.35, x0 + 1.95], [top - 0.25] * 2, color=LINE, lw=1.0)
    text(ax, x0 + 0.8, top - 2.2, r"$q = (1,\ 0)$", size=11, color=MUTED)
    text(ax, x0 + 0.8, top - 2.65, r"$|e_j| \leq \|v\|_1 = 2$", size=11, color=MUTED)


# --- multiplicative (dot-product) attention ----------------------------------------------------
def top_weights(widths, n=2048, S=16, seed=0):
    """Mean over n queries of the largest softmax weight over S keys, for each width d_k:
    unscaled (Luong's dot score) and scaled by 1/sqrt(d_k). Entries are independent N(0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    unscaled, scaled = [], []
    for d in widths:
        q = torch.randn(1, n, d, generator=gen)
        keys = torch.randn(1, S, d, generator=gen)
        dot = LuongScore(d, d, kind="dot")
        unscaled.append(luong_attention(dot, q, keys)[1].amax(-1).mean())
        scaled.append(luong_attention(dot, q / math.sqrt(d), keys)[1].amax(-1).mean())
    return _values(torch.stack(unscaled)), _values(torch.stack(scaled))


@figure("dot-product-scaling", (6.4, 4.0))
def dot_product_scaling(ax):
    """The top softmax weight against d_k: unscaled dot products saturate, scaled ones do not."""
    widths = [2 ** p for p in range(1, 11)]
    unscaled, scaled = top_weights(widths)
    plot = ax.inset_axes((0.85, 0.6, 4.1, 2.9), transform=ax.transData)
    hot, cool = SIGNED(0.85), WEIGHTS(0.8)
    plot.plot(widths, unscaled, color=hot, lw=2.0, marker="o", markersize=4)
    plot.plot(widths, scaled, color=cool, lw=2.0, marker="o", markersize=4)
    plot.axhline(1 / 16, color=MUTED, lw=1.0, ls=(0, (4, 3)))
    plot.set_xscale("log", base=2)
    plot.set_xticks(widths[::2] + [widths[-1]])
    plot.set_xticklabels([str(w) for w in widths[::2] + [widths[-1]]])
    plot.set_ylim(0, 1)
    plot.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    plot.set_yticklabels([_num(y) for y in [0, 0.25, 0.5, 0.75, 1.0]])
    plot.minorticks_off()
    _style_axes(plot)
    plot.set_xlabel("$d_k$", color=INK, fontsize=12, labelpad=2)
    plot.set_ylabel(r"$\max_j A_{ij}$", color=INK, fontsize=12, labelpad=4)
    # Line labels at the right end, in the lines' colours.
    text(ax, 5.1, 0.6 + 2.9 * unscaled[-1], r"$q\, k^\top$", size=12, color=hot, ha="left")
    text(ax, 5.1, 0.6 + 2.9 * scaled[-1] + 0.12, r"$q\, k^\top / \sqrt{d_k}$", size=12, color=cool, ha="left")
    text(ax, 5.1, 0.6 + 2.9 / 16 - 0.12, "$1/S$", size=11, color=MUTED, ha="left")
    text(ax, 2.9, 3.78, r"$S = 16,\quad q_c,\ k_c \sim \mathcal{N}(0, 1)$", size=11, color=MUTED)


# --- sparse attention --------------------------------------------------------------------------
def _mask_panel(ax, x, y_top, attend, cell, *, shades=None, block=None):
    """A boolean mask as cells: allowed cells blue (or the shade given per cell), the rest hatched
    grey under one rectangle; optional tile borders every `block` cells."""
    rows, cols = len(attend), len(attend[0])
    ax.add_patch(Rectangle((x, y_top - rows * cell), cols * cell, rows * cell, fc=MASKED, ec=LINE, lw=0.6,
                           hatch="////", clip_on=False))
    for i, row in enumerate(attend):
        for j, allowed in enumerate(row):
            if allowed:
                shade = shades[i][j] if shades is not None else 0.6
                ax.add_patch(Rectangle((x + j * cell, y_top - (i + 1) * cell), cell, cell,
                                       fc=cell_color(shade, "weights"), ec=PAPER, lw=0.5, clip_on=False))
    if block:
        for t in range(0, rows + 1, block):
            ax.plot([x, x + cols * cell], [y_top - t * cell] * 2, color=INK, lw=0.9)
        for t in range(0, cols + 1, block):
            ax.plot([x + t * cell] * 2, [y_top, y_top - rows * cell], color=INK, lw=0.9)
    else:
        ax.add_patch(Rectangle((x, y_top - rows * cell), cols * cell, rows * cell, fc="none", ec=LINE, lw=1.0,
                               clip_on=False))


@figure("block-sparse-layout", (10.2, 4.2))
def block_sparse_layout(ax):
    """BigBird's block layout (the sparse_attention demo's), and Child et al.'s strided and fixed
    masks at token level with the 4 x 4 tiles a block-sparse kernel computes."""
    layout = bigbird_layout(8, window=1, num_global=1, num_random=1, seed=0)
    i, j = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    glob = (i == 0) | (j == 0)
    window = (i - j).abs() <= 1
    shade = torch.where(glob, 0.9, torch.where(window, 0.6, 0.3)).tolist()
    top = 3.45
    cell = 0.3
    _mask_panel(ax, 0.55, top, layout.tolist(), cell, shades=shade)
    for r in range(8):
        for c in range(8):
            if layout[r, c]:
                kind = "g" if glob[r, c] else ("w" if window[r, c] else "r")
                text(ax, 0.55 + (c + 0.5) * cell, top - (r + 0.5) * cell, f"${kind}$", size=9,
                     color=ON_DARK if kind == "g" else INK)
    done = int(layout.sum())
    text(ax, 0.55 + 4 * cell, top + 0.3, "$8 \\times 8$", size=12)
    text(ax, 0.55 + 4 * cell, top - 8 * cell - 0.3, f"${done} / 64$", size=12, color=MUTED)
    for p, (attend, title) in enumerate([(strided_mask(16, 4), "$l = 4$"), (fixed_mask(16, 4, c=1), "$l = 4,\\ c = 1$")]):
        x = 3.85 + p * 3.2
        _mask_panel(ax, x, top, attend.tolist(), 0.15, block=4)
        tiles = tile_layout(attend, 4)
        text(ax, x + 1.2, top + 0.3, title, size=12)
        text(ax, x + 1.2, top - 2.4 - 0.3,
             f"${int(attend.sum())} / 256,\\quad {int(tiles.sum())} / 16$", size=12, color=MUTED)


# --- differential attention --------------------------------------------------------------------
def differential_example(T=6, layer=8):
    """Two maps that share a common pattern: every query of map 2 looks at key 1 (a sink), map 1
    looks at key 1 and at one relevant key. Keys are 3 e_j, so q . k_j picks coordinates."""
    d = T
    keys = 3.0 * torch.eye(T)[None]  # (1, T, d)
    sink = torch.zeros(T, d)
    sink[:, 0] = 3.0
    relevant = torch.tensor([0, 0, 1, 1, 2, 3])  # key index each query should find
    q1 = sink + 3.0 * torch.eye(d)[relevant]
    q2 = sink
    lam = torch.tensor(lambda_init(layer))
    attend = torch.ones(T, T, dtype=torch.bool).tril()
    eye = torch.eye(T)[None]  # values = identity: the output is the map itself
    a1 = differential_attention(q1[None], keys, q1[None], keys, eye, 0.0, attend=attend)[0]
    a2 = differential_attention(q2[None], keys, q2[None], keys, eye, 0.0, attend=attend)[0]
    diff = differential_attention(q1[None], keys, q2[None], keys, eye, lam, attend=attend)[0]
    return a1, lam * a2, diff, lam, attend


@figure("differential-maps", (10.4, 3.9))
def differential_maps(ax):
    """A1, lambda A2 and their difference, each 6 x 6 with the causal mask hatched."""
    a1, la2, diff, lam, attend = differential_example()
    hidden = (~attend).tolist()
    cell, top = 0.42, 3.0
    panels = [(a1, "weights", r"$A_1$"), (la2, "weights", r"$\lambda A_2$"), (diff, "signed", r"$A_1 - \lambda A_2$")]
    for p, (m, kind, title) in enumerate(panels):
        x = 0.55 + p * 3.35
        values = [[v if abs(v) >= 0.005 else 0.0 for v in row] for row in _values(m)]  # no -0.00
        matrix(ax, x, top, values, cell, kind=kind, masked=hidden, size=8,
               limit=1.0 if kind == "signed" else None)
        col_labels(ax, x, top + 0.05, cell, tokens("k", 6), size=10)
        row_labels(ax, x - 0.07, top, cell, tokens("q", 6), size=10)
        text(ax, x + 3 * cell, top + 0.55, title, size=13)
    text(ax, 0.55 + 6 * cell + 0.27, top - 3 * cell, "$-$", size=16)
    text(ax, 0.55 + 3.35 + 6 * cell + 0.27, top - 3 * cell, "$=$", size=16)
    text(ax, 5.2, 0.2, f"$\\lambda = \\lambda_{{init}}(8) = {_num(float(lam))}$", size=11, color=MUTED)
