"""Figures of the entries on positions over long contexts: how each RoPE scaling method changes
the frequency of every pair, and which layers of Llama 4 have no positions (NoPE). Every number comes from the snippets; drawn by hand in inches, no words (curves are
numbered, and each page says which number is which method)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from matplotlib.patches import Rectangle

from figures import HEAD, INK, MASKED, MUTED, PAPER, figure, text
from figures.positions import Plot
from snippets.nope import no_rope_layers  # noqa: E402
from snippets.rope_scaling import rope_frequencies, scaled_frequencies  # noqa: E402

# Llama 3.1's numbers for all four methods, so that the curves differ only by method.
SCALING_CASE = {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_theta": 500000.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0}
SCALING_METHODS = ["linear", "ntk", "yarn", "llama3"]  # curves 1, 2, 3, 4


@figure("rope-scaling", (8.6, 4.0))
def rope_scaling(ax):
    """theta_c / theta'_c (how much slower pair c turns) against the pair index c, head_dim
    128, rope_theta 500000, factor 8, 8192 trained positions, pairs counted from 1 as in the
    formulas: 1 linear (all 8), 2 NTK (from 1 to 8, smoothly), 3 YaRN (1 up to pair 19, 8 from
    pair 36, a ramp between), 4 Llama 3.1 (1 up to pair 29, 8 from pair 36)."""
    d = 128
    base = rope_frequencies(d, SCALING_CASE["rope_theta"])
    pairs = list(range(1, d // 2 + 1))
    plot = Plot(ax, 1.25, 0.95, 5.6, 2.75, (1, 64), (0.0, 9.0))
    plot.hline(1.0)
    plot.hline(8.0)
    plot.frame([1, 8, 16, 24, 32, 40, 48, 56, 64], [1, 2, 4, 6, 8], xlabel="$c$",
               ylabel=r"$\theta_c\,/\,\theta'_c$")
    # where each curve is labelled: (pair, offset in inches)
    marks = {"linear": (7, (0.0, 0.2)), "ntk": (51, (0.22, -0.2)), "yarn": (25, (-0.22, 0.12)),
             "llama3": (32, (0.25, -0.1))}
    for i, kind in enumerate(SCALING_METHODS):
        freq, _ = scaled_frequencies(d, {**SCALING_CASE, "rope_type": kind})
        ratio = (base / freq).tolist()
        plot.line(pairs, ratio, HEAD[i], lw=2.0 if i == 0 else 1.7)
        c, (dx, dy) = marks[kind]
        px, py = plot.at(c, ratio[c - 1])
        ax.plot([px + dx], [py + dy], ls="none", marker="o", ms=13, mfc=PAPER, mec=HEAD[i],
                mew=1.4, clip_on=False)
        text(ax, px + dx, py + dy, f"{i + 1}", size=10, color=HEAD[i])
    # the key, by number and colour; the page names the methods
    lx, ly = 7.25, 3.45
    for i in range(4):
        ax.plot([lx, lx + 0.4], [ly - 0.42 * i] * 2, color=HEAD[i], lw=2.0)
        text(ax, lx + 0.55, ly - 0.42 * i, f"{i + 1}", size=11, color=HEAD[i], ha="left")
    text(ax, lx, ly - 1.8, r"$d = 128$", size=11, color=MUTED, ha="left")
    text(ax, lx, ly - 2.2, r"$s = 8$", size=11, color=MUTED, ha="left")
    text(ax, lx, ly - 2.6, r"$L = 8192$", size=11, color=INK, ha="left")


# --- NoPE -------------------------------------------------------------------------------------
@figure("nope", (8.6, 3.6))
def nope(ax):
    """Left: the first 16 of the 48 layers of Llama 4's default configuration, a box per layer,
    green where the layer rotates (R_m), hatched where it is a NoPE layer (every fourth). Right:
    equal scores, a first token with value 1 and seven with 0: the causal output of token i is
    1/i (bars), the output without a mask 1/8 for every token (dashed line)."""
    layers = no_rope_layers(48)[:16]
    size, gap, x0, y0 = 0.32, 0.06, 0.45, 1.7
    for i, rope in enumerate(layers):
        x = x0 + (i % 8) * (size + gap)
        y = y0 - (i // 8) * (size + 0.5)
        if rope:
            ax.add_patch(Rectangle((x, y), size, size, fc=HEAD[0], ec=PAPER, lw=0.8))
        else:
            ax.add_patch(Rectangle((x, y), size, size, fc=MASKED, ec=HEAD[1], lw=1.2,
                                   hatch="////"))
        if (i + 1) % 4 == 0:
            text(ax, x + size / 2, y - 0.17, f"{i + 1}", size=10, color=MUTED)
    text(ax, x0 + 4 * (size + gap), y0 + size + 0.3, r"$\ell = 1, \ldots, 16$", size=11)
    ax.add_patch(Rectangle((x0, 0.35), size * 0.7, size * 0.7, fc=HEAD[0], ec=PAPER, lw=0.8))
    text(ax, x0 + 0.35, 0.35 + size * 0.35, r"$R_m$", size=11, ha="left")
    ax.add_patch(Rectangle((x0 + 1.3, 0.35), size * 0.7, size * 0.7, fc=MASKED, ec=HEAD[1],
                           lw=1.2, hatch="////"))
    text(ax, x0 + 1.65, 0.35 + size * 0.35, r"$\varnothing$", size=11, ha="left")
    # right: what a causal mask tells a token without positions
    T = 8
    q = k = torch.zeros(T, 4, dtype=torch.float64)
    v = torch.zeros(T, 1, dtype=torch.float64)
    v[0] = 1.0
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)[:, 0].tolist()
    full = F.scaled_dot_product_attention(q, k, v)[:, 0].tolist()
    plot = Plot(ax, 4.6, 0.7, 3.6, 2.4, (0.5, T + 0.5), (0.0, 1.05))
    plot.frame(list(range(1, T + 1)), [0, 0.5, 1], xlabel="$i$", ylabel=r"$o_i$")
    for i, value in enumerate(causal, start=1):
        (bx, by), (_, top) = plot.at(i - 0.3, 0.0), plot.at(i, value)
        ax.add_patch(Rectangle((bx, by), 0.6 * plot.w / T, top - by, fc=HEAD[2], ec=PAPER,
                               lw=0.8, clip_on=False))
    plot.line([0.5, T + 0.5], [full[0], full[0]], HEAD[1], lw=1.6, ls=(0, (4, 3)))
    px, py = plot.at(T + 0.5, full[0])
    text(ax, px + 0.08, py, r"$1/T$", size=11, color=HEAD[1], ha="left")
    px, py = plot.at(2.2, causal[1])
    text(ax, px + 0.1, py + 0.12, r"$1/i$", size=11, color=HEAD[2], ha="left")


# --- chunked attention -------------------------------------------------------------------------
def _weights_panel(ax, x0, top, mask, cell, label):
    """The attention weights of equal scores under `mask` (1 / number of keys seen), masked cells
    hatched, token numbers from 1 on both axes, and a label above."""
    from figures import _values, matrix

    n = mask.size(0)
    zeros = torch.zeros(n, 4, dtype=torch.float64)
    eye = torch.eye(n, dtype=torch.float64)
    weights = F.scaled_dot_product_attention(zeros, zeros, eye, attn_mask=mask)  # rows: weights
    matrix(ax, x0, top, _values(weights), cell, kind="weights", masked=(~mask).tolist(),
           annotate=False)
    for j in (0, n - 1):
        text(ax, x0 + (j + 0.5) * cell, top + 0.12, f"${j + 1}$", size=9, color=MUTED)
        text(ax, x0 - 0.08, top - (j + 0.5) * cell, f"${j + 1}$", size=9, color=MUTED, ha="right")
    text(ax, x0 - 0.3, top - n * cell / 2, "$i$", size=12, color=MUTED)
    text(ax, x0 + n * cell / 2, top + 0.3, "$j$", size=12, color=MUTED)
    text(ax, x0 + n * cell / 2, top - n * cell - 0.3, label, size=12)


@figure("chunked-attention", (9.6, 4.0))
def chunked_attention(ax):
    """Left: the weights of equal scores with chunks of C = 4 over 12 tokens (uniform over the
    keys each query sees, hatched where masked). Middle: the same with a sliding window of W = 4.
    Right: the number of keys each query sees, a sawtooth 1, 2, 3, 4 for the chunks and 1, 2, 3,
    4, 4, ... for the window."""
    from snippets.chunked_attention import chunked_mask

    T, C = 12, 4
    chunks = chunked_mask(T, chunk_size=C)
    pos = torch.arange(T)
    window = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < C)
    cell, top = 0.22, 3.35
    _weights_panel(ax, 0.55, top, chunks, cell, "$C = 4$")
    _weights_panel(ax, 3.75, top, window, cell, "$W = 4$")
    plot = Plot(ax, 7.0, 1.0, 2.3, 2.3, (0.5, T + 0.5), (0.0, 4.5))
    plot.frame([1, 4, 8, 12], [1, 2, 3, 4], xlabel="$i$", ylabel="$n_i$")
    seen_c, seen_w = chunks.sum(-1).tolist(), window.sum(-1).tolist()
    plot.line(list(range(1, T + 1)), seen_w, HEAD[1], lw=1.6, marker="s", ms=3.5)
    plot.line(list(range(1, T + 1)), seen_c, HEAD[0], lw=2.0, marker="o", ms=3.5)
    px, py = plot.at(T + 0.5, seen_w[-1])
    text(ax, px + 0.08, py + 0.15, "$W$", size=11, color=HEAD[1], ha="left")
    px, py = plot.at(T + 0.5, seen_c[-1])
    text(ax, px + 0.08, py - 0.17, "$C$", size=11, color=HEAD[0], ha="left")


# --- attention temperature ---------------------------------------------------------------------
def _log_axis(ax, plot, decades, label):
    """Ticks 10^k under a plot whose x data is log10 of the quantity."""
    for k in decades:
        px, _ = plot.at(k, plot.ylim[0])
        ax.plot([px, px], [plot.y0, plot.y0 - 0.05], color=MUTED, lw=1.0)
        text(ax, px, plot.y0 - 0.2, f"$10^{{{k}}}$", size=10, color=MUTED)
    text(ax, plot.x0 + plot.w / 2, plot.y0 - 0.5, label, size=12)


@figure("attention-temperature", (9.2, 3.8))
def attention_temperature(ax):
    """Left: Llama 4's query temperature tau(p) for p from 1 to 10^7 (log axis): 1 up to 8190, then
    steps every 8192 positions. Right: the largest weight of a row where one logit is 5 above the
    n - 1 others, n from 2 to 10^7: 1 plain softmax, 2 softmax with Llama 4's temperature of the
    last query (position n - 1), 3 Scalable-Softmax with lambda = 0.43 (Nakanishi's Figure 1)."""
    import math

    from snippets.attention_temperature import llama4_temperature, ssmax_temperature

    # left: a staircase, so sample densely on the log axis and at every step
    exps = torch.linspace(0.0, 7.0, 1401, dtype=torch.float64)
    positions = torch.unique(torch.cat([torch.round(10.0 ** exps).long(),
                                        torch.arange(8191, 10**7, 8192)]))
    tau = llama4_temperature(positions)
    left = Plot(ax, 0.85, 0.95, 3.3, 2.45, (0.0, 7.0), (0.9, 1.8))
    left.frame([], [1.0, 1.2, 1.4, 1.6, 1.8], ylabel=r"$\tau(p)$")
    _log_axis(ax, left, range(0, 8), "$p$")
    left.line(torch.log10(positions.double()).tolist(), tau.tolist(), HEAD[1], lw=1.8)
    left.vline(math.log10(8191))
    px, _ = left.at(math.log10(8191), 1.8)
    text(ax, px, 3.6, "$8191$", size=10, color=MUTED)
    # right: the largest weight, in closed form (the tests check it against torch.softmax)
    ns = torch.unique(torch.round(10.0 ** torch.linspace(math.log10(2), 7.0, 300,
                                                         dtype=torch.float64)).long())
    gap = 5.0

    def largest(t):
        return (1 / (1 + (ns.double() - 1) * torch.exp(-t * gap))).tolist()

    curves = [largest(torch.ones(len(ns), dtype=torch.float64)),
              largest(llama4_temperature(ns - 1)),
              largest(ssmax_temperature(ns, 0.43))]
    right = Plot(ax, 5.35, 0.95, 3.3, 2.45, (0.0, 7.0), (0.0, 1.05))
    right.frame([], [0, 0.5, 1], ylabel=r"$\max_j A_{ij}$")
    _log_axis(ax, right, range(0, 8), "$n$")
    xs = torch.log10(ns.double()).tolist()
    marks = [(2.2, (0.0, -0.22)), (5.6, (0.0, 0.24)), (4.0, (0.0, -0.24))]
    for i, weights in enumerate(curves):  # 2 dashed: it covers 1 up to n = 8192
        right.line(xs, weights, HEAD[i], lw=2.4 if i == 0 else 1.6,
                   **({"ls": (0, (4, 3))} if i == 1 else {}))
        at, (dx, dy) = marks[i]
        j = min(range(len(xs)), key=lambda m: abs(xs[m] - at))
        px, py = right.at(xs[j], weights[j])
        ax.plot([px + dx], [py + dy], ls="none", marker="o", ms=13, mfc=PAPER, mec=HEAD[i],
                mew=1.4, clip_on=False)
        text(ax, px + dx, py + dy, f"{i + 1}", size=10, color=HEAD[i])
    text(ax, 7.0, 3.6, r"$\Delta = 5,\ \lambda = 0.43$", size=11, color=MUTED)
