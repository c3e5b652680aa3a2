"""Mask figures: document masking, the prefix LM mask, FlexAttention's block mask."""

from __future__ import annotations

import torch
from matplotlib.patches import Rectangle

from figures import (INK, LINE, MASKED, MUTED, ON_DARK, PAPER, WEIGHTS, col_labels, figure,
                                  matrix, row_labels, text)
from snippets.document_masking import document_ids, document_mask, document_positions  # noqa: E402
from snippets.prefix_lm_mask import prefix_lm_mask  # noqa: E402

ATTEND = 0.64  # the mid blue of an attended cell, as in the causal-mask figure
HATCH = "////"


def _outline(ax, x, y_top, cell, first, n, color=INK, lw=1.8, ls="-"):
    """A square frame around rows and columns first .. first + n - 1 of a grid."""
    ax.add_patch(Rectangle((x + first * cell, y_top - (first + n) * cell), n * cell, n * cell, fc="none",
                           ec=color, lw=lw, ls=ls, clip_on=False))


@figure("document-mask", (6.2, 6.0))
def document_mask_figure(ax):
    """Three documents of 3, 2 and 4 tokens and 3 pads packed into one row of 12: the
    block-diagonal causal mask of document_mask, and the restarted positions p of
    document_positions along both sides."""
    lengths, total = [3, 2, 4], 12
    ids = document_ids(lengths, total)
    attend = document_mask(ids).tolist()
    positions = [f"${p}$" for p in document_positions(ids).tolist()]
    cell, x, top = 0.38, 1.1, 5.15
    fill = [[ATTEND] * total for _ in range(total)]
    matrix(ax, x, top, fill, cell, masked=[[not a for a in row] for row in attend], annotate=False)
    start = 0
    for n in lengths:  # one frame per document, dashed for the padding
        _outline(ax, x, top, cell, start, n)
        start += n
    _outline(ax, x, top, cell, start, total - start, color=MUTED, ls=(0, (3, 2)))
    col_labels(ax, x, top + 0.06, cell, positions, size=10)
    row_labels(ax, x - 0.08, top, cell, positions, size=10)
    text(ax, x + total * cell + 0.25, top + 0.18, "$p_j$", size=12, color=MUTED)
    text(ax, x - 0.55, top + 0.18, "$p_i$", size=12, color=MUTED)
    text(ax, x + total * cell / 2, top - total * cell - 0.32,
         r"$\delta_i = \delta_j \ \wedge\ j \leq i$", size=12, color=MUTED)


@figure("prefix-lm-mask", (5.0, 5.3))
def prefix_lm_mask_figure(ax):
    """prefix_lm_mask with a prefix of P = 4 in 8 tokens: the prefix block is bidirectional
    (darker), the rest causal."""
    prefix, total = 4, 8
    attend = prefix_lm_mask(torch.tensor([prefix]), total)[0].tolist()
    cell, x, top = 0.42, 1.0, 4.5
    # Darker where a query sees a key it could not see under a plain causal mask.
    fill = [[0.92 if j > i else ATTEND for j in range(total)] for i in range(total)]
    matrix(ax, x, top, fill, cell, masked=[[not a for a in row] for row in attend], annotate=False)
    _outline(ax, x, top, cell, 0, prefix)
    col_labels(ax, x, top + 0.05, cell, [f"${j + 1}$" for j in range(total)], size=10)
    row_labels(ax, x - 0.07, top, cell, [f"${i + 1}$" for i in range(total)], size=10)
    text(ax, x - 0.45, top - total * cell / 2, "$i$", size=12, color=MUTED)
    text(ax, x + total * cell + 0.2, top + 0.2, "$j$", size=12, color=MUTED)
    # The prefix length, under the columns it covers.
    y = top - total * cell - 0.18
    ax.plot([x, x + prefix * cell], [y, y], color=INK, lw=1.2)
    for end in (x, x + prefix * cell):
        ax.plot([end, end], [y - 0.05, y + 0.05], color=INK, lw=1.2)
    text(ax, x + prefix * cell / 2, y - 0.25, "$P = 4$", size=11)
    text(ax, x + total * cell / 2, y - 0.62, r"$j \leq \max(i, P)$", size=12, color=MUTED)


def _block_panel(ax, x, top, attend, kinds, tile, cell):
    """A token-level mask drawn block by block: full blocks solid, empty (skipped) ones hatched,
    and in a partial block the attended cells, one bar per run in a row, on the grey of a
    masked cell."""
    full = WEIGHTS(0.04 + 0.88 * 0.92)
    part = WEIGHTS(0.04 + 0.88 * ATTEND)
    side = tile * cell
    for r, row in enumerate(kinds):
        for c, kind in enumerate(row):
            x0, y0 = x + c * side, top - (r + 1) * side
            if kind == 0:
                ax.add_patch(Rectangle((x0, y0), side, side, fc=MASKED, ec=LINE, lw=0.6, hatch=HATCH,
                                       clip_on=False))
            elif kind == 2:
                ax.add_patch(Rectangle((x0, y0), side, side, fc=full, ec="none", clip_on=False))
            else:
                ax.add_patch(Rectangle((x0, y0), side, side, fc=MASKED, ec="none", clip_on=False))
                for i in range(r * tile, (r + 1) * tile):
                    j = c * tile
                    while j < (c + 1) * tile:  # runs of attended keys in this row of the tile
                        if not attend[i][j]:
                            j += 1
                            continue
                        start = j
                        while j < (c + 1) * tile and attend[i][j]:
                            j += 1
                        ax.add_patch(Rectangle((x + start * cell, top - (i + 1) * cell), (j - start) * cell,
                                               cell, fc=part, ec="none", clip_on=False))
            if kind == 1:  # on a background of bars: give the number a plate
                text(ax, x0 + side / 2, y0 + side / 2, f"${kind}$", size=12, color=INK,
                     bbox=dict(boxstyle="round,pad=0.18", fc=PAPER, ec=LINE, lw=0.6))
            else:
                text(ax, x0 + side / 2, y0 + side / 2, f"${kind}$", size=12, color=ON_DARK if kind else INK)
    n = len(kinds)
    for t in range(n + 1):  # tile borders
        ax.plot([x + t * side] * 2, [top, top - n * side], color=INK, lw=1.0)
        ax.plot([x, x + n * side], [top - t * side] * 2, color=INK, lw=1.0)


@figure("flex-block-mask", (9.4, 4.9))
def flex_block_mask_figure(ax):
    """The blocks create_block_mask records at T = 32 in blocks of 8 x 8, as block_kinds reads them:
    2 = full, 1 = partial, 0 = skipped; left the causal mask, right documents of 10, 6 and
    12 tokens and 4 pads."""
    from snippets.document_masking import document_mask_mod
    from snippets.flex_attention import block_kinds, causal_mask_mod, create_block_mask

    total, tile, cell = 32, 8, 0.105
    ids = document_ids([10, 6, 12], total)
    panels = [
        (causal_mask_mod, torch.ones(total, total, dtype=torch.bool).tril(), r"$j \leq i$"),
        (document_mask_mod(ids[None]), document_mask(ids), r"$\delta_i = \delta_j \ \wedge\ j \leq i$"),
    ]
    top = 4.15
    for p, (mask_mod, attend, rule) in enumerate(panels):
        x = 0.75 + p * 4.7
        block_mask = create_block_mask(mask_mod, None, None, total, total, device="cpu", BLOCK_SIZE=tile)
        kinds = block_kinds(block_mask)[0, 0].tolist()
        _block_panel(ax, x, top, attend.tolist(), kinds, tile, cell)
        side = total * cell
        ticks = [f"${t * tile + 1}$" for t in range(total // tile)]
        for t, label in enumerate(ticks):  # the first position of each tile
            text(ax, x + t * tile * cell, top + 0.12, label, size=9, color=MUTED, ha="left", va="bottom")
            text(ax, x - 0.08, top - t * tile * cell, label, size=9, color=MUTED, ha="right", va="top")
        text(ax, x + side / 2, top - side - 0.32, rule, size=12, color=MUTED)
    text(ax, 4.7, 0.22, r"$T = 32,\quad 8 \times 8$", size=11, color=MUTED)
