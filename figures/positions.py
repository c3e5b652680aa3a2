"""The position entries' figures: the sinusoidal table, RoPE's two layouts, ALiBi's biases per
head, T5's buckets. Every number is computed by the snippets; the plots are drawn by hand in
inches on the shared canvas, like the other figures (no layout engine, no words)."""

from __future__ import annotations

import torch

from figures import (HEAD, INK, LINE, MUTED, _num, _values, cell_color, col_labels, figure,
                                  matrix, row_labels, text)
from snippets.alibi import alibi_bias, alibi_slopes  # noqa: E402
from snippets.positional_encoding import sinusoidal_positional_encoding  # noqa: E402
from snippets.relative_position_bias import t5_relative_position_bucket  # noqa: E402
from snippets.rotary_position_embedding import apply_rope, interleaved_to_half_rows  # noqa: E402


class Plot:
    """A data rectangle on the canvas: (x0, y0) lower-left corner and size in inches, and the
    data range it shows. `at(x, y)` turns data coordinates into inches."""

    def __init__(self, ax, x0, y0, w, h, xlim, ylim):
        self.ax, self.x0, self.y0, self.w, self.h = ax, x0, y0, w, h
        self.xlim, self.ylim = xlim, ylim

    def at(self, x, y):
        (a, b), (c, d) = self.xlim, self.ylim
        return self.x0 + (x - a) / (b - a) * self.w, self.y0 + (y - c) / (d - c) * self.h

    def line(self, xs, ys, color, lw=1.6, **kw):
        points = [self.at(x, y) for x, y in zip(xs, ys)]
        self.ax.plot([p[0] for p in points], [p[1] for p in points], color=color, lw=lw,
                     clip_on=False, **kw)

    def vline(self, x, color=MUTED, lw=0.9, dashes=(3, 3)):
        (px, y0), (_, y1) = self.at(x, self.ylim[0]), self.at(x, self.ylim[1])
        self.ax.plot([px, px], [y0, y1], color=color, lw=lw, ls=(0, dashes), clip_on=False)

    def hline(self, y, color=LINE, lw=0.8, dashes=(3, 3)):
        (x0, py), (x1, _) = self.at(self.xlim[0], y), self.at(self.xlim[1], y)
        self.ax.plot([x0, x1], [py, py], color=color, lw=lw, ls=(0, dashes), clip_on=False)

    def frame(self, xticks, yticks, xlabel=None, ylabel=None, size=10):
        """The two axes, with ticks and their numbers, and a symbol under / beside each axis."""
        ax = self.ax
        ax.plot([self.x0, self.x0 + self.w], [self.y0, self.y0], color=MUTED, lw=1.0)
        ax.plot([self.x0, self.x0], [self.y0, self.y0 + self.h], color=MUTED, lw=1.0)
        for x in xticks:
            px, _ = self.at(x, self.ylim[0])
            ax.plot([px, px], [self.y0, self.y0 - 0.05], color=MUTED, lw=1.0)
            text(ax, px, self.y0 - 0.17, _tick(x), size=size, color=MUTED)
        for y in yticks:
            _, py = self.at(self.xlim[0], y)
            ax.plot([self.x0, self.x0 - 0.05], [py, py], color=MUTED, lw=1.0)
            text(ax, self.x0 - 0.09, py, _tick(y), size=size, color=MUTED, ha="right")
        if xlabel:
            text(ax, self.x0 + self.w / 2, self.y0 - 0.45, xlabel, size=12)
        if ylabel:
            text(ax, self.x0 - 0.55, self.y0 + self.h / 2, ylabel, size=12, rotation=90)


def _tick(v):
    """A tick number: an integer without decimals, a true minus sign."""
    return _num(v, 0) if float(v).is_integer() else _num(v, 1)


# --- positional encoding ----------------------------------------------------------------------
@figure("sinusoidal-table", (8.6, 4.0))
def sinusoidal_table(ax):
    """PE of 24 positions (columns) and d_model = 12 (rows): sin on odd rows, cos on even
    rows, each pair turning slower than the one above it."""
    positions, d_model = 24, 12
    pe = sinusoidal_positional_encoding(positions, d_model, dtype=torch.float64)  # (T, d)
    # colours in steps of 0.1 (21 shades): the SVG keeps one style per shade
    shades = torch.round(pe.T * 10) / 10
    cell, x, top = 0.25, 1.3, 3.45
    matrix(ax, x, top, _values(shades), cell, kind="signed", annotate=False, limit=1.0)
    col_labels(ax, x, top + 0.05, cell, [f"${p + 1}$" if p in (0, 7, 15, 23) else "" for p in range(positions)],
               size=10, color=MUTED)
    rows = [rf"$\sin\,\omega_{{{c // 2 + 1}}}$" if c % 2 == 0 else rf"$\cos\,\omega_{{{c // 2 + 1}}}$"
            for c in range(d_model)]
    row_labels(ax, x - 0.08, top, cell, rows, size=9)
    text(ax, x + positions * cell / 2, top + 0.4, "$p$", size=12, color=MUTED)
    text(ax, 4.3, 0.17,
         r"$PE_{p,\,2c-1} = \sin\,\omega_c (p-1),\quad PE_{p,\,2c} = \cos\,\omega_c (p-1),"
         r"\quad \omega_c = 10000^{-2(c-1)/d_{model}}$", size=11)
    # colour scale: -1 .. 1
    sx, sy, sh = x + positions * cell + 0.35, top - d_model * cell, d_model * cell
    steps = 20
    for i in range(steps + 1):
        v = -1 + 2 * i / steps
        ax.add_patch(_rect(sx, sy + i * sh / (steps + 1), 0.16, sh / (steps + 1), cell_color(v, "signed", 1.0)))
    for v in (-1, 0, 1):
        text(ax, sx + 0.24, sy + (v + 1) / 2 * sh, _tick(v), size=10, color=MUTED, ha="left")


def _rect(x, y, w, h, color):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, fc=color, ec=color, lw=0.3, clip_on=False)


# --- rotary position embedding ----------------------------------------------------------------
def rope_scores(q, k, distances, layout):
    """q rotated to position m = max distance, k to n = m - s, for each s: q_m . k_n."""
    m = int(max(distances))
    q_m = apply_rope(q[None], torch.tensor([m]), layout=layout)  # (1, d)
    k_n = apply_rope(k.expand(len(distances), -1), m - torch.tensor(distances), layout=layout)
    return (k_n @ q_m[0]).tolist()  # (S,)


@figure("rope-layouts", (8.6, 4.0))
def rope_layouts(ax):
    """q . k against m - n for one head (d = 16), the same weights read in the two layouts:
    interleaved (the checkpoint's own), half-split with the rows as stored (the silent bug),
    and half-split with the rows permuted by interleaved_to_half_rows (same curve as the first)."""
    d = 16
    q = torch.randn(d, dtype=torch.float64)
    k = q + 0.5 * torch.randn(d, dtype=torch.float64)
    distances = list(range(0, 49))
    pairs = rope_scores(q, k, distances, "interleaved")
    stored = rope_scores(q, k, distances, "half")
    converted = rope_scores(interleaved_to_half_rows(q, 1), interleaved_to_half_rows(k, 1), distances, "half")
    assert max(abs(a - b) for a, b in zip(pairs, converted)) < 1e-9
    top = max(max(pairs), max(stored)) * 1.1
    low = min(min(pairs), min(stored)) * 1.1
    plot = Plot(ax, 1.25, 0.95, 5.3, 2.75, (0, 48), (low, top))
    plot.hline(0.0)
    yticks = [v for v in range(-40, 41, 10) if low <= v <= top]
    plot.frame([0, 8, 16, 24, 32, 40, 48], yticks, xlabel="$m - n$",
               ylabel=r"$q_m k_n^\top$")
    plot.line(distances, pairs, HEAD[0], lw=2.0)
    plot.line(distances, stored, HEAD[1], lw=1.6)
    xs, ys = zip(*[plot.at(s, v) for s, v in zip(distances, converted)])
    ax.plot(xs[::2], ys[::2], ls="none", marker="o", ms=4.5, mfc="none", mec=INK, mew=1.0, clip_on=False)
    # legend: pairs of coordinates each curve rotates together
    lx, ly = 6.85, 3.35
    ax.plot([lx, lx + 0.4], [ly, ly], color=HEAD[0], lw=2.0)
    text(ax, lx + 0.5, ly, r"$(x_{2c-1},\ x_{2c})$", size=11, ha="left")
    ax.plot([lx, lx + 0.4], [ly - 0.45, ly - 0.45], color=HEAD[1], lw=1.6)
    text(ax, lx + 0.5, ly - 0.45, r"$(x_{c},\ x_{c+d/2})$", size=11, ha="left")
    ax.plot([lx + 0.2], [ly - 0.9], ls="none", marker="o", ms=4.5, mfc="none", mec=INK, mew=1.0)
    text(ax, lx + 0.5, ly - 0.9, r"$(x_{c},\ x_{c+d/2}),\ xP$", size=11, ha="left")
    text(ax, lx + 0.5, ly - 1.35, r"$d = 16$", size=11, color=MUTED, ha="left")


# --- ALiBi ------------------------------------------------------------------------------------
@figure("alibi-biases", (8.6, 3.9))
def alibi_biases(ax):
    """Left: the bias of head 1 (slope 1/2) for 6 tokens, the causal mask folded in.
    Right: -m_h (i - j) against the distance i - j for the 8 heads' slopes 2^-1 .. 2^-8."""
    bias = alibi_bias(8, 6)  # (H, L, S), -inf above the diagonal
    head1 = bias[0]
    masked = head1.isinf().tolist()
    shown = head1.masked_fill(head1.isinf(), 0.0)
    cell, x, top = 0.42, 0.75, 3.2
    matrix(ax, x, top, _values(shown), cell, kind="signed", masked=masked, limit=3.0, size=9, digits=1)
    col_labels(ax, x, top + 0.05, cell, [f"${j + 1}$" for j in range(6)], size=10)
    row_labels(ax, x - 0.07, top, cell, [f"${i + 1}$" for i in range(6)], size=10)
    text(ax, x - 0.38, top - 3 * cell, "$i$", size=12, color=MUTED)
    text(ax, x + 6 * cell + 0.2, top + 0.2, "$j$", size=12, color=MUTED)
    text(ax, x + 3 * cell, top - 6 * cell - 0.32, r"$m_1 = 2^{-1}$", size=12, color=HEAD[0])
    # right: one line per head
    slopes = alibi_slopes(8, dtype=torch.float64).tolist()
    distances = list(range(0, 25))
    plot = Plot(ax, 4.55, 0.8, 3.2, 2.5, (0, 24), (-12.0, 0.0))
    plot.frame([0, 8, 16, 24], [-12, -8, -4, 0], xlabel="$i - j$", ylabel=r"$-m_h\,(i - j)$")
    for h, m in enumerate(slopes):
        plot.line(distances, [-m * s for s in distances], HEAD[h], lw=1.6)
        px, py = plot.at(24, -m * 24)
        if h in (0, 1, 2, 3, 7):
            text(ax, px + 0.08, py, rf"$2^{{-{h + 1}}}$", size=10, color=HEAD[h], ha="left")
    # every bias row is the last row of a longer one: the same numbers at any length
    last = alibi_bias(8, 1, 25, dtype=torch.float64)[:, 0]  # (H, S): the last of 25 tokens
    assert torch.allclose(last.flip(-1), -torch.tensor(slopes)[:, None] * torch.arange(25.0).double(),
                          atol=1e-6)


# --- T5 relative position bias ----------------------------------------------------------------
@figure("t5-buckets", (8.6, 3.9))
def t5_buckets(ax):
    """T5's bucket of each relative position j - i (32 buckets, max_distance 128): exact for
    small distances, logarithmic after, one bucket for everything beyond 128. Bidirectional
    (encoder) and causal (decoder)."""
    rel = torch.arange(-160, 161)
    both = t5_relative_position_bucket(rel, bidirectional=True).tolist()
    causal = t5_relative_position_bucket(rel, bidirectional=False).tolist()
    plot = Plot(ax, 1.1, 0.85, 6.2, 2.65, (-160, 160), (0, 31))
    for edge in (-128, 128):
        plot.vline(edge)
    plot.vline(-8, color=LINE)
    plot.vline(8, color=LINE)
    plot.vline(-16, color=LINE, dashes=(1, 2))
    plot.frame([-160, -128, -64, -16, 0, 16, 64, 128, 160], [0, 8, 16, 24, 31], xlabel="$j - i$",
               ylabel=r"$b(j - i)$")
    _steps(plot, rel.tolist(), both, HEAD[2], lw=1.8)
    _steps(plot, rel.tolist(), causal, HEAD[3], lw=1.8)
    lx, ly = 7.55, 3.3
    ax.plot([lx, lx + 0.35], [ly, ly], color=HEAD[2], lw=1.8)
    text(ax, lx + 0.45, ly, r"$j \lessgtr i$", size=11, ha="left")
    ax.plot([lx, lx + 0.35], [ly - 0.45, ly - 0.45], color=HEAD[3], lw=1.8)
    text(ax, lx + 0.45, ly - 0.45, r"$j \leq i$", size=11, ha="left")


def _steps(plot, xs, ys, color, lw):
    """A step function: flat at each integer, a vertical jump between two integers."""
    px, py = [], []
    for n, (x, y) in enumerate(zip(xs, ys)):
        if n and y != ys[n - 1]:
            px.append(x - 0.5)
            py.append(ys[n - 1])
            px.append(x - 0.5)
            py.append(y)
    points = [(xs[0], ys[0])] + list(zip(px, py)) + [(xs[-1], ys[-1])]
    plot.line([p[0] for p in points], [p[1] for p in points], color, lw=lw)
