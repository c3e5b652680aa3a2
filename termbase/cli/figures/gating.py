"""Figures of gated layers: where gated attention's queries and gates sit in q_proj's output.

The layout is computed by the entry's own snippet (snippets/gated_attention.py): the column
numbers 0 .. 2 h d_k - 1 are passed through split_query_gate, and each cell shows the column it
came from.
"""

from __future__ import annotations

import torch
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

from termbase.cli.figures import HEAD, INK, MUTED, PAPER, figure, ink_on, text
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
