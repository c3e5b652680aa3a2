"""Figures of the attention variants: MLA's cache per token, the cost of linear attention, the
StreamingLLM mask, logit growth with and without QK-norm, and soft-capping with its gradient.

Every curve and bar is computed by the entry's own snippet (snippets/multi_head_latent_attention.py,
linear_attention.py, attention_sink.py, qk_norm.py, logit_soft_capping.py). The plots are drawn
by hand on the shared inch canvas, like the other figures: a frame, ticks and polylines in the
shared colours, so that the dark variant swaps them like everything else.
"""

from __future__ import annotations

import math

import torch
from matplotlib.patches import Rectangle

from figures import INK, LINE, MUTED, SIGNED, cell_color, col_labels, figure, matrix, row_labels, text
from snippets.attention_sink import SinkCache, streaming_mask  # noqa: E402
from snippets.linear_attention import multiply_adds  # noqa: E402
from snippets.logit_soft_capping import soft_cap  # noqa: E402
from snippets.multi_head_latent_attention import MultiHeadLatentAttention, kv_cache_bytes_per_token  # noqa: E402
from snippets.qk_norm import QKNormSelfAttention, logit_bound  # noqa: E402

FIRST = SIGNED(0.88)  # the usual form (softmax, no norm): orange
SECOND = SIGNED(0.12)  # the variant: purple


class Frame:
    """A plot area on the inch canvas: data coordinates -> inches, on linear or log axes."""

    def __init__(self, ax, x0, y0, w, h, xr, yr, xlog=False, ylog=False):
        self.ax, self.x0, self.y0, self.w, self.h = ax, x0, y0, w, h
        self.xr, self.yr, self.xlog, self.ylog = xr, yr, xlog, ylog

    @staticmethod
    def _unit(v, r, log):
        lo, hi = (math.log(r[0]), math.log(r[1])) if log else r
        return ((math.log(v) if log else v) - lo) / (hi - lo)

    def x(self, v):
        return self.x0 + self._unit(v, self.xr, self.xlog) * self.w

    def y(self, v):
        return self.y0 + self._unit(v, self.yr, self.ylog) * self.h

    def axes(self, xticks, yticks, grid=True, size=10):
        """xticks, yticks: [(value, label)]. Axis lines at the lower and left edges."""
        ax = self.ax
        for v, label in xticks:
            x = self.x(v)
            if grid:
                ax.plot([x, x], [self.y0, self.y0 + self.h], color=LINE, lw=0.6, zorder=0)
            ax.plot([x, x], [self.y0, self.y0 - 0.05], color=MUTED, lw=0.8)
            text(ax, x, self.y0 - 0.1, label, size=size, color=MUTED, va="top")
        for v, label in yticks:
            y = self.y(v)
            if grid:
                ax.plot([self.x0, self.x0 + self.w], [y, y], color=LINE, lw=0.6, zorder=0)
            ax.plot([self.x0 - 0.05, self.x0], [y, y], color=MUTED, lw=0.8)
            text(ax, self.x0 - 0.1, y, label, size=size, color=MUTED, ha="right")
        ax.plot([self.x0, self.x0 + self.w], [self.y0, self.y0], color=INK, lw=0.9)
        ax.plot([self.x0, self.x0], [self.y0, self.y0 + self.h], color=INK, lw=0.9)

    def line(self, xs, ys, color, lw=1.8, **kw):
        self.ax.plot([self.x(v) for v in xs], [self.y(v) for v in ys], color=color, lw=lw, **kw)


def _int(n):
    """An integer as the snippets print it: digits only, no separator (the same in every language)."""
    return str(int(n))


# --- the computations the figures show --------------------------------------------------------
def mla_cache_sizes():
    """Bytes per token and layer in bfloat16 for DeepSeek-V2's shapes (arXiv 2405.04434, 3.1.2),
    and a check that MLA's entry is what the module really caches (d_c + d_r numbers)."""
    sizes = kv_cache_bytes_per_token(num_heads=128, head_dim=128, num_kv_heads=8, kv_rank=512,
                                     rope_dim=64, dtype=torch.bfloat16)
    small = MultiHeadLatentAttention(32, 4, 8, 12, 4)
    c_kv, k_r = small.compress(torch.randn(1, 3, 32), torch.arange(3))
    assert kv_cache_bytes_per_token(num_heads=4, head_dim=8, num_kv_heads=4, kv_rank=12, rope_dim=4,
                                    dtype=torch.float32)["MLA"] == (c_kv.size(-1) + k_r.size(-1)) * 4
    return sizes


def qk_norm_growth(scales):
    """max |logit| of the same layer with and without QK-norm (RMSNorm), inputs scaled by s;
    the setup of the snippet's logit_growth demo, and the norm's bound."""
    torch.manual_seed(0)
    plain = QKNormSelfAttention(64, 4, norm=None)
    normed = QKNormSelfAttention(64, 4, norm="rms")
    normed.load_state_dict(plain.state_dict(), strict=False)  # the same W^Q, W^K
    x = torch.randn(1, 16, 64)
    rows = [(plain.logits(s * x).abs().max().item(), normed.logits(s * x).abs().max().item()) for s in scales]
    return rows, logit_bound(normed).item()


# --- the figures ------------------------------------------------------------------------------
@figure("mla-cache-bytes", (8.4, 3.3))
def mla_cache_bytes(ax):
    """Bytes one token adds to one layer's cache: MHA, GQA (8 KV heads), MQA, MLA (log axis)."""
    sizes = mla_cache_sizes()
    rows = [("MHA", "$2hd_k$", sizes["MHA"]), ("GQA", "$2Gd_k$", sizes["GQA, 8 KV heads"]),
            ("MQA", "$2d_k$", sizes["MQA"]), ("", "$d_c + d_r$", sizes["MLA"])]
    f = Frame(ax, 2.0, 0.75, 5.6, 2.0, (2**8, 2**17), (0, 4), xlog=True)
    f.axes([(2**e, _int(2**e)) for e in range(8, 18, 2)], [], size=9)
    bar = 0.3
    for n, (name, formula, value) in enumerate(rows):
        yc = f.y(3.5 - n)
        highlight = n == 3
        ax.add_patch(Rectangle((f.x0, yc - bar / 2), f.x(value) - f.x0, bar,
                               fc=cell_color(0.85 if highlight else 0.45, "weights"), ec=INK, lw=0.6,
                               clip_on=False))
        text(ax, f.x(value) + 0.08, yc, _int(value), size=10, ha="left")
        text(ax, 0.95, yc, name, size=11, ha="right", weight="bold")
        text(ax, 1.05, yc, formula, size=11, ha="left")
    text(ax, f.x0 + f.w / 2, 3.05, r"$h = 128,\ \ d_k = 128,\ \ G = 8,\ \ d_c = 512,\ \ d_r = 64$",
         size=11, color=MUTED)


@figure("linear-attention-cost", (7.8, 4.2))
def linear_attention_cost(ax):
    """Multiply-adds of one head against T (log-log): softmax T^2 (d_k + d_v), linear 2 T d_k d_v + T d_k."""
    d = 64
    ts = [2 ** (e / 4) for e in range(16, 57)]  # T = 16 ... 16384
    soft = [multiply_adds(t, d, d, form="softmax") for t in ts]
    lin = [multiply_adds(t, d, d, form="linear") for t in ts]
    cross = next(t for t in range(1, 10 * d)
                 if multiply_adds(t, d, d, form="linear") < multiply_adds(t, d, d, form="softmax"))
    f = Frame(ax, 1.05, 0.7, 4.9, 3.0, (16, 16384), (1e4, 1e11), xlog=True, ylog=True)
    f.axes([(4**e, _int(4**e)) for e in range(2, 8)], [(10**e, f"$10^{{{e}}}$") for e in range(4, 12)], size=9)
    f.line(ts, soft, FIRST)
    f.line(ts, lin, SECOND)
    x, y = f.x(cross), f.y(multiply_adds(cross, d, d, form="softmax"))
    ax.plot([x], [y], "o", color=INK, ms=5)
    ax.plot([x, x], [f.y0, y], color=MUTED, lw=0.8, ls=(0, (2, 2)))
    text(ax, x + 0.1, y + 0.22, f"$T = {cross}$", size=11, ha="left")
    text(ax, f.x(ts[-1]) + 0.1, f.y(soft[-1]), r"$T^2 (d_k + d_v)$", size=11, color=FIRST, ha="left")
    text(ax, f.x(ts[-1]) + 0.1, f.y(lin[-1]), r"$2 T d_k d_v + T d_k$", size=11, color=SECOND, ha="left")
    text(ax, f.x0 + f.w / 2, f.y0 - 0.5, "$T$", size=12)
    text(ax, f.x0 + f.w / 2, 3.95, r"$d_k = d_v = 64$", size=11, color=MUTED)


@figure("streaming-mask", (5.6, 5.9))
def streaming_mask_figure(ax):
    """streaming_mask(14, n_sink=4, window=6): the first 4 keys (sinks) and the last 6 per query."""
    T, n_sink, window = 14, 4, 6
    attend = streaming_mask(T, n_sink=n_sink, window=window)
    cache = SinkCache(n_sink=n_sink, window=window)
    for t in range(T):  # the cache after each step keeps exactly the keys of that row
        cache.append(torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1))
        assert attend[t].nonzero().flatten().tolist() == cache.positions.tolist()
    shade = [[0.82 if j < n_sink else 0.45 for j in range(T)] for _ in range(T)]  # sinks darker
    hidden = [[not a for a in row] for row in attend.tolist()]
    cell, x, top = 0.3, 0.75, 5.15
    matrix(ax, x, top, shade, cell, masked=hidden, annotate=False)
    col_labels(ax, x, top + 0.04, cell, [f"${j + 1}$" for j in range(T)], size=8)
    row_labels(ax, x - 0.06, top, cell, [f"${i + 1}$" for i in range(T)], size=8)
    text(ax, x - 0.45, top - T * cell / 2, "$i$", size=12, color=MUTED)
    text(ax, x + T * cell + 0.2, top + 0.15, "$j$", size=12, color=MUTED)
    # Braces of a sort: which columns are sinks, how wide the window is on the last row.
    ax.plot([x, x + n_sink * cell], [top + 0.32, top + 0.32], color=INK, lw=1.2)
    text(ax, x + n_sink * cell / 2, top + 0.45, "$j \\leq n$", size=11)
    last = top - T * cell - 0.12
    ax.plot([x + (T - window) * cell, x + T * cell], [last, last], color=INK, lw=1.2)
    text(ax, x + (T - window / 2) * cell, last - 0.2, "$i - w < j \\leq i$", size=11)
    text(ax, x + T * cell / 2, 0.2, r"$n = 4,\ \ w = 6,\ \ n + w = 10$", size=11, color=MUTED)


@figure("qk-norm-logits", (7.8, 4.2))
def qk_norm_logits(ax):
    """max |logit| against the input scale s, without and with QK-norm (log-log), and the bound."""
    scales = [2 ** (e / 2) for e in range(-4, 13)]  # 1/4 ... 64
    rows, bound = qk_norm_growth(scales)
    plain, normed = [r[0] for r in rows], [r[1] for r in rows]
    assert max(normed) <= bound
    f = Frame(ax, 1.05, 0.7, 4.9, 3.0, (0.25, 64), (1e-2, 1e5), xlog=True, ylog=True)
    f.axes([(2.0**e, f"$2^{{{e}}}$") for e in range(-2, 7, 2)], [(10.0**e, f"$10^{{{e}}}$") for e in range(-2, 6)],
           size=9)
    f.line([scales[0], scales[-1]], [bound, bound], MUTED, lw=1.0, ls=(0, (4, 3)))
    f.line(scales, plain, FIRST)
    f.line(scales, normed, SECOND)
    right = f.x0 + f.w + 0.1
    text(ax, right, f.y(plain[-1]), r"$\max\,|q_i \cdot k_j| / √d_k$", size=11, color=FIRST, ha="left")
    text(ax, right, f.y(normed[-1]) - 0.2, r"$\max\,|\hat q_i \cdot \hat k_j| / √d_k$", size=11, color=SECOND,
         ha="left")
    text(ax, right, f.y(bound) + 0.2, r"$√d_k\, \max\,|g_q g_k|$", size=11, color=MUTED, ha="left")
    text(ax, f.x0 + f.w / 2, f.y0 - 0.5, "$s$", size=12)
    text(ax, f.x0 + f.w / 2, 3.95, r"$X \rightarrow sX$", size=11, color=MUTED)


@figure("soft-cap", (8.8, 3.6))
def soft_cap_figure(ax):
    """c tanh(s / c) for c = 50 with the identity, and its gradient 1 - tanh(s/c)^2 (autograd)."""
    c = 50.0
    s = torch.linspace(-4 * c, 4 * c, 161, dtype=torch.float64)
    with torch.enable_grad():
        leaf = s.clone().requires_grad_()
        soft_cap(leaf, c).sum().backward()
    capped, grad = soft_cap(s, c), leaf.grad
    assert torch.allclose(grad, 1 - torch.tanh(s / c) ** 2)
    xs = s.tolist()
    xticks = [(k * c, "$0$" if k == 0 else f"${k}c$") for k in (-4, -2, 0, 2, 4)]
    # Left: the cap.
    f = Frame(ax, 0.75, 0.7, 3.4, 2.3, (-4 * c, 4 * c), (-1.5 * c, 1.5 * c))
    f.axes(xticks, [(-c, "$-c$"), (0, "$0$"), (c, "$c$")], size=10)
    f.line([-1.5 * c, 1.5 * c], [-1.5 * c, 1.5 * c], MUTED, lw=1.0, ls=(0, (4, 3)))
    f.line(xs, capped.tolist(), SECOND)
    text(ax, f.x0 + f.w / 2, 3.3, r"$c\, \tanh(s / c)$", size=12, color=SECOND)
    text(ax, f.x(1.5 * c) + 0.05, f.y(1.5 * c), "$s$", size=11, color=MUTED, ha="left")
    # Right: its derivative.
    g = Frame(ax, 5.05, 0.7, 3.4, 2.3, (-4 * c, 4 * c), (0, 1.15))
    g.axes(xticks, [(0, "$0$"), (1, "$1$")], size=10)
    g.line(xs, grad.tolist(), SECOND)
    text(ax, g.x0 + g.w / 2, 3.3, r"$1 - \tanh^2(s / c)$", size=12, color=SECOND)
    for k in (1, 2):  # the gradient at s = c and 2c, as the demo prints it
        value = 1 - math.tanh(k) ** 2
        ax.plot([g.x(k * c)], [g.y(value)], "o", color=INK, ms=4)
    text(ax, 4.6, 0.15, r"$c = 50$", size=11, color=MUTED)
