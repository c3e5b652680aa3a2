"""Figures of gated and recurrent layers: where gated attention's queries and gates sit in
q_proj's output, the delta rule's chunks, and the cache of a hybrid stack against a dense one.

Both are computed by the entries' own snippets: the column numbers 0 .. 2 h d_k - 1 passed
through split_query_gate (snippets/gated_attention.py), and the matrix that the delta rule
applies to the values, found by running delta_rule_chunked on V = I (snippets/delta_rule.py),
and the cache counts of snippets/hybrid_attention.py.
"""

from __future__ import annotations

import torch
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

from figures import HEAD, INK, MUTED, PAPER, _values, col_labels, figure, ink_on, matrix, row_labels, text
from snippets.delta_rule import delta_rule_chunked, delta_rule_recurrent  # noqa: E402
from snippets.hybrid_attention import cache_numbers, layer_types_from_interval  # noqa: E402
from snippets.gated_attention import split_query_gate  # noqa: E402


def _cell(ax, x, y, size, color, label, light):
    """One cell: the head's colour, pale for a query, full for a gate; its column number."""
    rgba = to_rgba(color)
    if light:  # the head's colour mixed with white: the same in both schemes
        rgba = tuple(0.35 * c + 0.65 for c in rgba[:3]) + (1.0,)
    ax.add_patch(Rectangle((x, y), size, size, fc=rgba, ec=PAPER, lw=0.8, clip_on=False))
    text(ax, x + size / 2, y + size / 2, label, size=8, color=ink_on(rgba))


@figure("gated-attention-layout", (8.2, 2.9))
def gated_attention_layout(ax):
    """q_proj's output for one token, h = 4 heads of d_k = 4: [q_1 | g_1 | ... | q_4 | g_4], and
    the queries and gates split_query_gate takes from it, head by head."""
    h, d_k = 4, 4
    columns = torch.arange(2 * h * d_k).view(1, 1, -1)
    q, gate = split_query_gate(columns, h)  # (1, 1, h, d_k)
    q, gate = q[0, 0].tolist(), gate[0, 0].tolist()
    cell, x0, top = 0.23, 0.4, 1.95
    # The projection's output, one row of 2 h d_k columns.
    for i in range(h):
        for rows, light, name in ((q, True, "q"), (gate, False, "g")):
            for column in rows[i]:
                _cell(ax, x0 + column * cell, top, cell, HEAD[i], f"{column}", light)
            start = x0 + rows[i][0] * cell
            text(ax, start + d_k * cell / 2, top + cell + 0.2, f"${name}_{{{i + 1}}}$", size=11)
    ax.add_patch(Rectangle((x0, top), 2 * h * d_k * cell, cell, fc="none", ec=INK, lw=1.0, clip_on=False))
    text(ax, x0 + h * d_k * cell, top + cell + 0.55, r"$x\, [\, W_1^Q\ \ W_1^\theta\ \ \cdots\ \ W_h^Q\ \ W_h^\theta \,]$",
         size=12)
    # Below: the queries (pale) and the gates (full), one row per head.
    lower = top - 0.35
    for rows, light, name, bx in ((q, True, "q", 2.0), (gate, False, "g", 5.24)):
        for i in range(h):
            for c, column in enumerate(rows[i]):
                _cell(ax, bx + c * cell, lower - (i + 1) * cell, cell, HEAD[i], f"{column}", light)
            text(ax, bx - 0.08, lower - (i + 0.5) * cell, f"${name}_{{{i + 1}}}$", size=10, ha="right")
        ax.add_patch(Rectangle((bx, lower - h * cell), d_k * cell, h * cell, fc="none", ec=INK, lw=1.0,
                               clip_on=False))
    text(ax, x0 + h * d_k * cell, lower - h * cell / 2, r"$o_i \odot \sigma(g_i)$", size=12, color=MUTED)
    text(ax, x0 + h * d_k * cell, 0.2, r"$h = 4,\ \ d_k = 4$", size=11, color=MUTED)


@figure("delta-rule-chunks", (6.0, 5.6))
def delta_rule_chunks(ax):
    """The matrix P with O = P V of one Gated DeltaNet head, T = 10, chunks of 4: signed, future
    hatched; the diagonal blocks are what one chunk computes at once, the rest reaches a token
    through the state carried between chunks."""
    T, chunk, d_k = 10, 4, 4
    gen = torch.Generator().manual_seed(0)
    q, k = torch.nn.functional.normalize(torch.randn(2, 1, 1, T, d_k, generator=gen, dtype=torch.float64),
                                         dim=-1).unbind(0)
    beta = torch.rand(1, 1, T, generator=gen, dtype=torch.float64)
    g = -0.3 * torch.rand(1, 1, T, 1, generator=gen, dtype=torch.float64)
    eye = torch.eye(T, dtype=torch.float64).view(1, 1, T, T)  # V = I: the output is P itself
    P, _ = delta_rule_chunked(q, k, eye, beta, g, chunk)
    assert torch.allclose(P, delta_rule_recurrent(q, k, eye, beta, g)[0])
    P = P[0, 0]
    assert torch.equal(P.triu(1), torch.zeros(T, T, dtype=torch.float64))  # causal
    cell, x, top = 0.42, 0.8, 4.95
    future = [[j > i for j in range(T)] for i in range(T)]
    matrix(ax, x, top, _values(P), cell, kind="signed", masked=future, size=7)
    for start in range(0, T, chunk):  # one frame per chunk: its tokens at once
        n = min(chunk, T - start)
        ax.add_patch(Rectangle((x + start * cell, top - (start + n) * cell), n * cell, n * cell, fc="none",
                               ec=INK, lw=1.8, clip_on=False))
    col_labels(ax, x, top + 0.05, cell, [f"${j + 1}$" for j in range(T)], size=9)
    row_labels(ax, x - 0.07, top, cell, [f"${i + 1}$" for i in range(T)], size=9)
    text(ax, x - 0.5, top - T * cell / 2, "$t$", size=12, color=MUTED)
    text(ax, x + T * cell + 0.2, top + 0.15, "$s$", size=12, color=MUTED)
    text(ax, x + T * cell / 2, 0.3, r"$O = P\,V,\ \ T = 10,\ \ C = 4$", size=11, color=MUTED)


@figure("hybrid-cache", (7.8, 4.2))
def hybrid_cache(ax):
    """Numbers cached for one sequence against its length T (log-log), Qwen3NextConfig's default
    shapes: 48 full-attention layers against Qwen3-Next's 12 full-attention + 36 Gated DeltaNet."""
    from figures.variants import FIRST, SECOND, Frame

    shape = dict(kv_heads=2, head_dim=256, state_numbers=32 * 128 * 128 + 8192 * 4)
    hybrid, dense = layer_types_from_interval(48, 4), layer_types_from_interval(48, 1)
    ts = [2 ** (e / 4) for e in range(24, 73)]  # T = 64 ... 262144
    d = [cache_numbers(dense, t, **shape) for t in ts]  # numbers, not bytes
    y = [cache_numbers(hybrid, t, **shape) for t in ts]
    cross = next(t for t in range(1, 10**6) if cache_numbers(hybrid, t, **shape) < cache_numbers(dense, t, **shape))
    f = Frame(ax, 1.05, 0.7, 4.9, 3.0, (64, 262144), (2**20, 2**34), xlog=True, ylog=True)
    f.axes([(4**e, str(4**e)) for e in range(3, 10)], [(2**e, f"$2^{{{e}}}$") for e in range(20, 35, 2)], size=9)
    f.line(ts, d, FIRST)
    f.line(ts, y, SECOND)
    x, yc = f.x(cross), f.y(cache_numbers(dense, cross, **shape))
    ax.plot([x], [yc], "o", color=INK, ms=5)
    ax.plot([x, x], [f.y0, yc], color=MUTED, lw=0.8, ls=(0, (2, 2)))
    text(ax, x + 0.1, yc + 0.25, f"$T = {cross}$", size=11, ha="left")
    right = f.x0 + f.w + 0.1
    text(ax, right, f.y(d[-1]), r"$48 \times 2 G d_k T$", size=11, color=FIRST, ha="left")
    text(ax, right, f.y(y[-1]) - 0.2, r"$12 \times 2 G d_k T + 36\, s$", size=11, color=SECOND, ha="left")
    text(ax, f.x0 + f.w / 2, f.y0 - 0.5, "$T$", size=12)
    text(ax, f.x0 + f.w / 2, 3.95, r"$G = 2,\ \ d_k = 256,\ \ s = 557056$", size=11, color=MUTED)
