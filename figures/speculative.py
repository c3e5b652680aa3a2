"""Speculative decoding's figure: the token tree of tree attention and its mask.

The tree, the mask and the positions are read off snippets/tree_attention.py (tree_mask,
verify_inputs) for the demo's tree of 7 drafted nodes below a prefix of 5 tokens, the last of
which, the root, goes through the same pass (row 0 of the mask).
"""

from __future__ import annotations

from matplotlib.patches import Circle, Rectangle

from figures import (BOX, HEAD, INK, LINE, MUTED, PAPER, WEIGHTS, box, figure,
                                  masked_square, square, text)
from snippets.tree_attention import tree_depths, verify_inputs  # noqa: E402

PARENTS = [-1, -1, 0, 0, 1, 2, 3]  # the demo's tree
PREFIX = 5
LEAF = 5  # node 6 (index 5): its path is drawn and framed in colour
ATTEND = WEIGHTS(0.64)


def _path(node):
    path = [node]
    while PARENTS[path[0]] >= 0:
        path.insert(0, PARENTS[path[0]])
    return path


@figure("tree-attention", (10.6, 4.4))
def tree_attention_figure(ax):
    """Left: the prefix (4 cached tokens and the root, 0) and the tree of 7 drafted nodes, laid out
    by depth, with the positions p under each depth (1-based). Right: the mask, one row for the
    root and one per node, True (blue) over the whole prefix and over the node and its ancestors;
    node 6's path in colour."""
    positions, attend = verify_inputs(PARENTS, PREFIX)
    depth = tree_depths(PARENTS).tolist()
    path = _path(LEAF)
    accent = HEAD[0]
    # --- the tree ---
    slot, y_mid, x0 = 0.34, 2.3, 0.3
    for j in range(PREFIX):  # the last box is the root: not cached yet, in the pass
        box(ax, x0 + j * slot, y_mid - slot / 2, slot - 0.04, slot - 0.04, fc=BOX,
            ec=INK if j == PREFIX - 1 else MUTED, round_=0.04)
    text(ax, x0 + (PREFIX - 0.5) * slot - 0.02, y_mid - 0.02, "$0$", size=10)
    text(ax, x0 + PREFIX * slot / 2, y_mid - 0.42, "$P = 5$", size=11, color=MUTED)
    root = (x0 + PREFIX * slot - 0.04, y_mid)
    rows = {}
    for n, d in enumerate(depth):  # vertical slots per depth, in node order
        rows.setdefault(d, []).append(n)
    spot = {}
    for d, nodes in rows.items():
        for k, n in enumerate(nodes):
            spot[n] = (root[0] + 0.9 * d, y_mid + (len(nodes) - 1) * 0.55 - k * 1.1)
    for n, p in enumerate(PARENTS):
        start = root if p < 0 else spot[p]
        on_path = n in path
        ax.plot([start[0], spot[n][0]], [start[1], spot[n][1]], color=accent if on_path else MUTED,
                lw=2.0 if on_path else 1.1, zorder=1, solid_capstyle="round")
    for n, (x, y) in spot.items():
        ax.add_patch(Circle((x, y), 0.2, fc=PAPER, ec=accent if n in path else INK,
                            lw=1.8 if n in path else 1.0, zorder=2, clip_on=False))
        text(ax, x, y, f"${n + 1}$", size=11, zorder=3)
    y_pos = 0.7
    for d in rows:
        text(ax, root[0] + 0.9 * d, y_pos, f"${PREFIX + d}$", size=11, color=MUTED)
    text(ax, root[0] + 0.2, y_pos, "$p$", size=11, color=MUTED, ha="right")
    # --- the mask ---
    n_nodes = len(PARENTS)
    n_rows = n_nodes + 1  # row 0: the root
    cell, mx, top = 0.34, 5.9, 3.9
    for i in range(n_rows):
        y = top - (i + 1) * cell
        text(ax, mx - 0.12, y + cell / 2, f"${i}$", size=10,
             color=accent if i == LEAF + 1 else INK, ha="right")
        for j in range(PREFIX + n_nodes):
            x = mx + j * cell
            if attend[i, j]:
                square(ax, x, y, cell, ATTEND)
            else:
                masked_square(ax, x, y, cell)
        text(ax, mx + (PREFIX + n_nodes) * cell + 0.2, y + cell / 2, f"${positions[i].item() + 1}$",
             size=10, color=MUTED)
    for j in range(-1, n_nodes):  # -1: the root's column, the prefix's last
        text(ax, mx + (PREFIX + j + 0.5) * cell, top + 0.14, f"${j + 1}$", size=10)
    text(ax, mx + (PREFIX + n_nodes) * cell + 0.2, top + 0.14, "$p$", size=10, color=MUTED)
    # The prefix's columns, bracketed underneath; the framed row of node 6.
    y = top - n_rows * cell - 0.15
    ax.plot([mx, mx + PREFIX * cell], [y, y], color=MUTED, lw=1.0)
    text(ax, mx + PREFIX * cell / 2, y - 0.22, "$P$", size=11, color=MUTED)
    ax.plot([mx + PREFIX * cell, mx + PREFIX * cell], [top, top - n_rows * cell], color=INK,
            lw=1.2)
    ax.add_patch(Rectangle((mx, top - (LEAF + 2) * cell), (PREFIX + n_nodes) * cell, cell,
                           fc="none", ec=accent, lw=2.0, clip_on=False, zorder=4))
    ax.add_patch(Rectangle((mx, top - n_rows * cell), (PREFIX + n_nodes) * cell, n_rows * cell,
                           fc="none", ec=LINE, lw=1.0, clip_on=False))
