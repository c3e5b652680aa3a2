"""The first entries' figures: heads, heatmaps, masks, groups, softmax, the SDPA pipeline."""

from __future__ import annotations

import math

import torch
from matplotlib.patches import Rectangle

from figures import (HEAD, INK, LINE, MUTED, ON_DARK, PAPER, _num, _values, arrow, box, cell_color,
                                  col_labels, figure, matrix, row_labels, text, tokens)
from snippets.attention_weights import attention_weights, multi_head_attention_weights  # noqa: E402
from snippets.grouped_query_attention import grouped_query_attention  # noqa: E402
from snippets.masks import causal_mask, combine_masks, key_padding_mask  # noqa: E402
from snippets.multi_head_attention import MultiHeadAttention  # noqa: E402
from snippets.scaled_dot_product_attention import scaled_dot_product_attention  # noqa: E402
from snippets.softmax import softmax  # noqa: E402



# --- the computations the figures show --------------------------------------------------------
def self_attention_heads():
    """(h=4, 6, 6) weights of a MultiHeadAttention(d_model=32, h=4) over 6 tokens.

    The input is scaled by 2 so that its norm is like a trained model's activations; at unit
    scale a freshly initialised layer gives nearly uniform (and uninformative) weights.
    """
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4)
    x = 2.0 * torch.randn(1, 6, 32)  # (B, L, d_model)
    return multi_head_attention_weights(mha, x, x, average=False)[0]  # (h, L, S)


def cross_attention_heads(padding=None):
    """(h=4, L=4, S=6) weights of a cross-attention: 4 target queries, 6 source keys (width 24)."""
    torch.manual_seed(1)
    mha = MultiHeadAttention(32, 4, kdim=24, vdim=24)
    target = 2.0 * torch.randn(1, 4, 32)  # (B, L, d_model)
    source = 2.0 * torch.randn(1, 6, 24)  # (B, S, kdim)
    attend = combine_masks(padding=padding) if padding is not None else None  # (B, 1, 1, S)
    return multi_head_attention_weights(mha, target, source, attend=attend, average=False)[0]


# --- the figures ------------------------------------------------------------------------------
@figure("heads-split-concat", (10.4, 4.9))
def heads_split_concat(ax):
    """X -> W^Q, W^K, W^V -> split into h=4 heads -> attention per head -> concat -> W^O -> Y."""
    weights = _values(self_attention_heads())  # (4, 6, 6): the heads drawn inside the boxes
    mid = 2.35
    # Input X: L tokens x d_model features.
    box(ax, 0.25, mid - 1.1, 0.55, 2.2, round_=0.03)
    text(ax, 0.525, mid, "$X$", size=15)
    # Projections and the split of each result into h column blocks.
    rows = [("Q", 3.85), ("K", 2.35), ("V", 0.85)]
    seg = 0.28  # height of one head's block
    bar_x, bar_w = 2.75, 0.62
    for role, yc in rows:
        arrow(ax, (0.85, mid + (yc - mid) * 0.35), (1.35, yc))
        box(ax, 1.4, yc - 0.33, 0.8, 0.66, f"$W^{role}$", size=14)
        arrow(ax, (2.25, yc), (bar_x - 0.05, yc))
        top = yc + 2 * seg
        for i in range(4):
            y0 = top - (i + 1) * seg
            ax.add_patch(Rectangle((bar_x, y0), bar_w, seg, fc=HEAD[i], ec=PAPER, lw=1.0, alpha=0.9,
                                   clip_on=False))
            text(ax, bar_x + bar_w / 2, y0 + seg / 2, f"${role}_{i + 1}$", size=10, color=ON_DARK)
    text(ax, bar_x + bar_w / 2, 4.66, "$h = 4$", size=11, color=MUTED)
    # One attention per head, on its own blocks: drawn with its real weights.
    head_x, head_w, head_h = 5.2, 1.75, 0.86
    head_y = [3.87, 2.82, 1.77, 0.72]  # centres, top to bottom
    for i, yc in enumerate(head_y):
        for r, (role, ryc) in enumerate(rows):
            src_y = ryc + 2 * seg - (i + 0.5) * seg
            end_y = yc + 0.22 - 0.22 * r
            ax.plot([bar_x + bar_w + 0.02, head_x - 0.02], [src_y, end_y], color=HEAD[i], lw=1.0,
                    alpha=0.75, clip_on=False)
        box(ax, head_x, yc - head_h / 2, head_w, head_h, fc=PAPER, ec=HEAD[i], lw=1.8)
        matrix(ax, head_x + 0.12, yc + 0.36, weights[i], 0.12, annotate=False)
        text(ax, head_x + 1.23, yc, f"$O_{i + 1}$", size=14, color=HEAD[i])
    text(ax, head_x + head_w / 2, 4.66,
         r"$O_i = \mathrm{softmax}(Q_i K_i^\top / √d_k)\, V_i$", size=11)
    # Concat: the h outputs side by side again, then W^O.
    cat_x, cat_w, cat_seg = 7.75, 0.62, 0.5
    cat_top = mid + 2 * cat_seg
    for i, yc in enumerate(head_y):
        y0 = cat_top - (i + 1) * cat_seg
        arrow(ax, (head_x + head_w + 0.03, yc), (cat_x - 0.04, y0 + cat_seg / 2), color=HEAD[i], lw=1.1)
        ax.add_patch(Rectangle((cat_x, y0), cat_w, cat_seg, fc=HEAD[i], ec=PAPER, lw=1.0, alpha=0.9,
                               clip_on=False))
        text(ax, cat_x + cat_w / 2, y0 + cat_seg / 2, f"$O_{i + 1}$", size=11, color=ON_DARK)
    text(ax, cat_x + cat_w / 2, cat_top + 0.22, r"$[O_1 \,\|\, \cdots \,\|\, O_h]$", size=11)
    arrow(ax, (cat_x + cat_w + 0.04, mid), (8.75, mid))
    box(ax, 8.8, mid - 0.33, 0.8, 0.66, "$W^O$", size=14)
    arrow(ax, (9.65, mid), (9.8, mid))
    box(ax, 9.83, mid - 1.1, 0.5, 2.2, round_=0.03)
    text(ax, 10.08, mid, "$Y$", size=15)


@figure("attention-heatmap", (5.0, 4.75))
def attention_heatmap(ax):
    """Self-attention weights of head 1 over 6 tokens: row i = query i, column j = key j."""
    w = _values(self_attention_heads()[0])  # (6, 6)
    cell, x, top = 0.62, 0.8, 4.0
    matrix(ax, x, top, w, cell, size=10)
    col_labels(ax, x, top + 0.08, cell, tokens("k", 6))
    row_labels(ax, x - 0.1, top, cell, tokens("q", 6))
    text(ax, x + 3 * cell, top + 0.5, r"$\mathrm{softmax}(QK^\top / √d_k)$", size=12)


@figure("cross-attention-heatmap", (8.4, 6.35))
def cross_attention_heatmap(ax):
    """Cross-attention, L=4 target queries x S=6 source keys, one heatmap per head (h=4)."""
    w = _values(cross_attention_heads())  # (4, 4, 6)
    cell = 0.5
    origins = [(0.6, 5.45), (4.95, 5.45), (0.6, 2.5), (4.95, 2.5)]  # upper-left corners
    for i, (x, top) in enumerate(origins):
        matrix(ax, x, top, w[i], cell, size=9)
        ax.add_patch(Rectangle((x, top - 4 * cell), 6 * cell, 4 * cell, fc="none", ec=HEAD[i], lw=2.0,
                               clip_on=False))
        col_labels(ax, x, top + 0.06, cell, tokens("k", 6), size=10)
        row_labels(ax, x - 0.08, top, cell, tokens("q", 4), size=10)
        text(ax, x + 3 * cell, top + 0.58, rf"$\mathrm{{softmax}}(Q_{i + 1} K_{i + 1}^\top / √d_k)$",
             size=12, color=HEAD[i])
    text(ax, 4.2, 0.12, r"$L = 4,\quad S = 6,\quad h = 4$", size=11, color=MUTED)


@figure("causal-mask", (10.0, 4.2))
def causal_mask_figure(ax):
    """causal_mask(6), causal_mask(3, 6) (upper-left, like SDPA is_causal) and lower-right."""
    panels = [
        (causal_mask(6), "$L = S = 6$", r"$j \leq i$"),
        (causal_mask(3, 6), "$L = 3,\\ S = 6$", r"$j \leq i$"),
        (causal_mask(3, 6, lower_right=True), "$L = 3,\\ S = 6$", r"$j \leq i + S - L$"),
    ]
    cell, top = 0.42, 3.35
    for p, (attend, title, rule) in enumerate(panels):
        x = 0.6 + p * 3.2
        attend = attend.tolist()
        rows = len(attend)
        fill = [[0.64] * 6 for _ in range(rows)]  # attended cells: one mid blue, no numbers
        hidden = [[not a for a in row] for row in attend]
        matrix(ax, x, top, fill, cell, masked=hidden, annotate=False)
        col_labels(ax, x, top + 0.05, cell, [f"${j + 1}$" for j in range(6)], size=10)
        row_labels(ax, x - 0.07, top, cell, [f"${i + 1}$" for i in range(rows)], size=10)
        text(ax, x + 3 * cell, top + 0.55, title, size=12)
        text(ax, x + 3 * cell, top - rows * cell - 0.3, rule, size=12, color=MUTED)
        text(ax, x - 0.35, top - rows * cell / 2, "$i$", size=12, color=MUTED)
        text(ax, x + 6 * cell + 0.2, top + 0.2, "$j$", size=12, color=MUTED)


@figure("padding-mask", (5.6, 3.6))
def padding_mask(ax):
    """Cross-attention head 1 with the last 2 of 6 keys padded: those columns get no weight."""
    padding = key_padding_mask(torch.tensor([4]), 6)  # (B=1, S=6), True = padding
    w = _values(cross_attention_heads(padding)[0])  # (L=4, S=6)
    masked = [padding[0].tolist() for _ in w]
    cell, x, top = 0.62, 0.85, 3.1
    matrix(ax, x, top, w, cell, masked=masked, size=10)
    grey = [MUTED if p else INK for p in padding[0].tolist()]
    col_labels(ax, x, top + 0.08, cell, tokens("k", 6), color=grey)
    row_labels(ax, x - 0.1, top, cell, tokens("q", 4))
    # Each row still sums to 1, over the 4 real keys only.
    sx = x + 6 * cell + 0.25
    text(ax, sx + 0.33, top + 0.08, r"$\Sigma_j$", size=11, color=MUTED, va="bottom")
    for i, row in enumerate(w):
        text(ax, sx + 0.33, top - (i + 0.5) * cell, f"{sum(row):.2f}", size=10, color=MUTED)
    ax.plot([sx, sx], [top, top - 4 * cell], color=LINE, lw=1.0)
    text(ax, x + 5 * cell, top - 4 * cell - 0.28, r"$-\infty \;\rightarrow\; 0$", size=11, color=MUTED)


@figure("gqa-groups", (10.4, 3.3))
def gqa_groups(ax):
    """Which K/V head each of 8 query heads reads: MHA (8 K/V heads), GQA (2), MQA (1).

    The lines are measured, not assumed: value head g holds the constant g, so the output of
    grouped_query_attention for query head i equals the index of the K/V head it reads.
    """
    panels = [("MHA", 8), ("GQA", 2), ("MQA", 1)]
    h_q, w, gap = 8, 0.28, 0.05
    for p, (name, h_kv) in enumerate(panels):
        q = torch.randn(1, h_q, 3, 4)  # (B, H_q, L, d_k)
        k = torch.randn(1, h_kv, 3, 4)  # (B, H_kv, S, d_k)
        v = torch.arange(h_kv, dtype=torch.float32).view(1, h_kv, 1, 1).expand(1, h_kv, 3, 4)
        reads = grouped_query_attention(q, k, v)[0, :, 0, 0].round().long().tolist()  # (H_q,)
        x0 = 0.75 + p * 3.4
        span = h_q * w + (h_q - 1) * gap
        qy, ky = 2.2, 0.75
        if h_kv == h_q:  # one K/V head right under each query head
            kv_w, kv_x = w, [x0 + g * (w + gap) for g in range(h_kv)]
        else:  # wider boxes, centred under their groups
            kv_w = min(span / h_kv - 2 * gap, 1.2)
            kv_gap = (span - h_kv * kv_w) / h_kv
            kv_x = [x0 + kv_gap / 2 + g * (kv_w + kv_gap) for g in range(h_kv)]
        for i, g in enumerate(reads):
            qx = x0 + i * (w + gap)
            ax.plot([qx + w / 2, kv_x[g] + kv_w / 2], [qy, ky + 0.42], color=HEAD[g], lw=1.3, alpha=0.8)
            box(ax, qx, qy, w, 0.36, f"${i + 1}$", fc=PAPER, ec=HEAD[g], lw=1.6, size=10, round_=0.04)
        for g in range(h_kv):
            box(ax, kv_x[g], ky, kv_w, 0.42, f"${g + 1}$", fc=HEAD[g], ec=HEAD[g], size=10, color=ON_DARK,
                round_=0.04)
        text(ax, x0 - 0.12, qy + 0.18, "$Q$", size=12, ha="right")
        text(ax, x0 - 0.12, ky + 0.21, "$K, V$", size=12, ha="right")
        text(ax, x0 + span / 2, 2.95, name, size=13, weight="bold")
        text(ax, x0 + span / 2, 0.35, rf"$H_q = {h_q},\ H_{{kv}} = {h_kv}$", size=11, color=MUTED)


@figure("softmax-bars", (8.6, 3.8))
def softmax_bars(ax):
    """One query against 5 keys: the scores s_j, and softmax(s)_j, the weights they become."""
    q, k = 3.0 * torch.randn(8), torch.randn(5, 8)  # d_k = 8; the query at a trained model's scale
    scores = k @ q / math.sqrt(8)  # (S,)
    weights = softmax(scores)
    assert torch.allclose(weights, attention_weights(q[None], k)[0])
    s, a = _values(scores), _values(weights)
    bar, step = 0.36, 0.58
    limit = max(abs(v) for v in s)
    # Left: the scores, around a zero line.
    x0, top, bottom = 0.75, 3.0, 0.75
    unit_s = (top - bottom) / (max(s) - min(min(s), 0.0))  # inches per unit of score
    base = bottom - min(min(s), 0.0) * unit_s
    ax.plot([x0 - 0.15, x0 + 5 * step], [base, base], color=MUTED, lw=1.0)
    text(ax, x0 - 0.22, base, "$0$", size=10, color=MUTED, ha="right")
    for j, v in enumerate(s):
        x = x0 + j * step
        ax.add_patch(Rectangle((x, min(base, base + v * unit_s)), bar, abs(v) * unit_s,
                               fc=cell_color(v, "signed", limit), ec=INK, lw=0.6, clip_on=False))
        text(ax, x + bar / 2, base + v * unit_s + (0.14 if v >= 0 else -0.14), _num(v), size=9)
        text(ax, x + bar / 2, 0.2, f"$k_{j + 1}$", size=11)
    text(ax, x0 + 2.5 * step, 3.55, r"$s_j = q \cdot k_j \,/\, √d_k$", size=12)
    # Middle: the function.
    arrow(ax, (3.85, 1.9), (4.75, 1.9), color=INK)
    text(ax, 4.3, 2.15, r"$\mathrm{softmax}$", size=12)
    # Right: the weights, on a 0..1 axis.
    x0, base, unit_w = 5.45, 0.55, 2.6
    ax.plot([x0 - 0.15, x0 + 5 * step], [base, base], color=MUTED, lw=1.0)
    ax.plot([x0 - 0.15, x0 + 5 * step], [base + unit_w] * 2, color=LINE, lw=0.8, ls=(0, (3, 3)))
    text(ax, x0 - 0.22, base, "$0$", size=10, color=MUTED, ha="right")
    text(ax, x0 - 0.22, base + unit_w, "$1$", size=10, color=MUTED, ha="right")
    for j, v in enumerate(a):
        x = x0 + j * step
        ax.add_patch(Rectangle((x, base), bar, v * unit_w, fc=cell_color(v, "weights"), ec=INK, lw=0.6,
                               clip_on=False))
        text(ax, x + bar / 2, base + v * unit_w + 0.14, f"{v:.2f}", size=9)
        text(ax, x + bar / 2, 0.2, f"$k_{j + 1}$", size=11)
    text(ax, x0 + 2.5 * step, 3.55, r"$\alpha_j = e^{s_j} \,/\, \Sigma_m\, e^{s_m}$", size=12)


@figure("sdpa-pipeline", (10.2, 3.7))
def sdpa_pipeline(ax):
    """Q K^T -> / sqrt(d_k) -> + M (causal) -> softmax -> x V, with the real intermediates."""
    L = d = 4  # L = S = 4 tokens, d_k = d_v = 4
    q, k, v = (2.0 * torch.randn(3, L, d)).unbind(0)
    attend = causal_mask(L)
    scores = q @ k.T
    scaled = scores / math.sqrt(d)
    masked = scaled.masked_fill(~attend, torch.finfo(scaled.dtype).min)
    weights = torch.softmax(masked, dim=-1)
    out = weights @ v
    assert torch.allclose(out, scaled_dot_product_attention(q, k, v, attend=attend), atol=1e-5)
    limit = scores.abs().max().item()
    stages = [  # (box label, matrix shown under it, kind, masked cells, colour scale)
        (r"$QK^\top$", scores, "signed", None, limit),
        (r"$/\,√d_k$", scaled, "signed", None, limit),
        (r"$+\,M$", scaled, "signed", (~attend).tolist(), limit),
        (r"$\mathrm{softmax}$", weights, "weights", None, 1.0),
        (r"$\cdot\, V$", out, "signed", None, None),
    ]
    cell, by, bh, step = 0.3, 2.15, 0.55, 1.85
    for role, yc in (("Q", 2.85), ("K", 1.85)):
        box(ax, 0.2, yc - 0.28, 0.55, 0.56, f"${role}$", size=14)
        arrow(ax, (0.8, yc + (by + bh / 2 - yc) * 0.25), (1.05, by + bh / 2 + (yc - 2.35) * 0.15))
    x = 1.1
    for n, (label, m, kind, mask, lim) in enumerate(stages):
        w = 4 * cell
        box(ax, x, by, w, bh, label, size=12)
        arrow(ax, (x + w / 2, by - 0.04), (x + w / 2, by - 0.2), color=LINE, lw=1.0)
        matrix(ax, x, by - 0.25, _values(m), cell, kind=kind, masked=mask, annotate=False, limit=lim)
        if n < len(stages) - 1:
            arrow(ax, (x + w + 0.05, by + bh / 2), (x + step - 0.05, by + bh / 2))
        else:  # V comes in from above
            box(ax, x + w / 2 - 0.28, 3.1, 0.56, 0.5, "$V$", size=14)
            arrow(ax, (x + w / 2, 3.05), (x + w / 2, by + bh + 0.04))
            text(ax, x + w + 0.15, by - 0.25 - 2 * cell, "$O$", size=14, ha="left")
        x += step
    text(ax, 5.0, 0.22, r"$O = \mathrm{softmax}(QK^\top / √d_k + M)\, V,"
         r"\qquad M_{ij} \in \{0, -\infty\}$", size=12)
