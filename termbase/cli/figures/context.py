"""Figures of the entries on long contexts: how each RoPE scaling method changes the frequency of
every pair. Every number comes from the snippets; drawn by hand in inches, no words (curves are
numbered, and each page says which number is which method)."""

from __future__ import annotations

from termbase.cli.figures import HEAD, INK, MUTED, PAPER, figure, text
from termbase.cli.figures.positions import Plot
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
