"""The serving entries' figures: DeepSeek Sparse Attention's top-k selection, KV-cache quantization,
prefix caching, cross-layer KV sharing.

Every number is read off the snippets' own computations: the index scores of a LightningIndexer
and the mask top_k_mask draws from them (the demo's seed and sizes), and the round-trip error of
quantize_int / dequantize_int on keys with an outlier channel, and the tokens a PrefixCache
reuses for the demo's two requests, and the layers whose K/V a SharedKVDecoder caches.
"""

from __future__ import annotations

import torch
from matplotlib.patches import Rectangle

from figures import (BOX, INK, MUTED, WEIGHTS, _num, _values, arrow,
                                  box, cell_color, empty_square, figure, ink_on, masked_square, matrix,
                                  square, text)
from snippets.cross_layer_kv_sharing import SharedKVDecoder  # noqa: E402
from snippets.deepseek_sparse_attention import LightningIndexer, top_k_mask  # noqa: E402
from snippets.kv_cache_quantization import dequantize_int, quantize_int  # noqa: E402
from snippets.prefix_caching import PrefixCache, TinyDecoder  # noqa: E402

SELECTED = WEIGHTS(0.72)  # a key the query attends to
READ_KV = WEIGHTS(0.45)  # keys and values read from a cache (as in the KV-cache figure)
NEW_KV = cell_color(0.8, "signed")  # keys and values computed now: orange


# --- DeepSeek Sparse Attention ----------------------------------------------------------------
def dsa_state(seq_len=8, d_model=16, top_k=3):
    """The demo's index scores (L, S) and the top-k mask drawn from them."""
    torch.manual_seed(0)
    x = torch.randn(seq_len, d_model)
    indexer = LightningIndexer(d_model, n_heads=2, head_dim=4)
    scores = indexer(x, x)
    return scores, top_k_mask(scores, top_k), top_k


@figure("deepseek-sparse-attention", (10.4, 4.3))
def deepseek_sparse_attention_figure(ax):
    """Left: the indexer's scores I[i, j] (query i, key j), future keys hatched. Right: the keys each query keeps,
    the top 3 of its row (all of them while a row has 3 or fewer)."""
    scores, keep, top_k = dsa_state()
    n = scores.size(0)
    cell, top = 0.42, 3.75
    limit = scores.tril().abs().max().item()
    for panel, x0 in enumerate((0.75, 6.0)):
        for t in range(n):
            y = top - (t + 1) * cell
            text(ax, x0 - 0.14, y + cell / 2, f"${t + 1}$", size=10, color=MUTED, ha="right")
            for s in range(n):
                x = x0 + s * cell
                if s > t:
                    masked_square(ax, x, y, cell)
                elif panel == 0:
                    value = round(scores[t, s].item(), 1) + 0.0  # no "-0.0"
                    rgba = cell_color(value, "signed", limit)
                    square(ax, x, y, cell, rgba)
                    text(ax, x + cell / 2, y + cell / 2, f"{value:.1f}".replace("-", "\u2212"),
                         size=7, color=ink_on(rgba))
                elif keep[t, s]:
                    square(ax, x, y, cell, SELECTED)
                else:
                    empty_square(ax, x, y, cell)
        for s in range(n):
            text(ax, x0 + (s + 0.5) * cell, top + 0.14, f"${s + 1}$", size=10, color=MUTED)
        text(ax, x0 - 0.45, top - n * cell / 2, "$i$", size=13, color=MUTED)
        text(ax, x0 + n * cell / 2, top + 0.42, "$j$", size=13, color=MUTED)
    text(ax, 0.75 + n * cell / 2, 0.2, r"$I_{ij} = \sum_r w_{ir} \max(0,\ q_{ir} \cdot k_j)$",
         size=12)
    text(ax, 6.0 + n * cell / 2, 0.2, f"$k = {top_k}$", size=12)
    arrow(ax, (0.75 + n * cell + 0.25, top - n * cell / 2), (6.0 - 0.55, top - n * cell / 2))


# --- KV-cache quantization --------------------------------------------------------------------
def quantized_keys(tokens=8, channels=8, outlier=3, bits=2):
    """Keys with one outlier channel, and their 2-bit round-trip error per token and per channel."""
    torch.manual_seed(0)
    k = torch.randn(1, tokens, channels)
    k[..., outlier] += 6.0
    errors = [(dequantize_int(*quantize_int(k, dim, bits)) - k).abs()[0] for dim in (-1, -2)]
    return k[0], errors


@figure("kv-cache-quantization", (10.4, 3.9))
def kv_cache_quantization_figure(ax):
    """Left: a key matrix, tokens as rows and channels as columns, one channel much larger.
    Middle and right: |K_hat - K| after 2-bit quantization with a scale per token (row) and a
    scale per channel (column), on one colour scale: per token, the outlier's range spoils every
    row; per channel, it stays in its column."""
    k, errors = quantized_keys()
    n, m = k.shape
    cell, top = 0.36, 3.5
    panels = [(0.55, "$K$"), (4.0, r"$|\hat K - K|,\ s_j$"), (7.3, r"$|\hat K - K|,\ s_c$")]
    worst = max(e.max().item() for e in errors)
    matrix(ax, panels[0][0], top, _values(k), cell, kind="signed", annotate=False)
    for (x0, _), error in zip(panels[1:], errors):
        matrix(ax, x0, top, _values(error / worst), cell, kind="weights", annotate=False)
    for x0, label in panels:
        text(ax, x0 + m * cell / 2, top + 0.2, label, size=13)
        text(ax, x0 - 0.14, top - n * cell / 2, "$j$", size=12, color=MUTED, ha="right")
        text(ax, x0 + m * cell / 2, top - n * cell - 0.22, "$c$", size=12, color=MUTED)
    # The slices that share a scale: a row per token, a column per channel.
    x1, x2 = panels[1][0], panels[2][0]
    ax.add_patch(Rectangle((x1, top - cell), m * cell, cell, fc="none", ec=INK, lw=1.6, clip_on=False))
    ax.add_patch(Rectangle((x2 + 3 * cell, top - n * cell), cell, n * cell, fc="none", ec=INK, lw=1.6,
                           clip_on=False))
    text(ax, x1 + m * cell / 2, 0.12, f"$\\max = {_num(errors[0].max().item())}$", size=11, color=MUTED)
    text(ax, x2 + m * cell / 2, 0.12, f"$\\max = {_num(errors[1].max().item())}$", size=11, color=MUTED)


# --- prefix caching ---------------------------------------------------------------------------
def prefix_requests():
    """The demo's two requests: (tokens, tokens reused) each, through the snippet's PrefixCache."""
    torch.manual_seed(0)
    model, cache = TinyDecoder(), PrefixCache(block_size=4)
    system = [5, 17, 3, 42, 8, 8, 23, 1, 30, 11]
    rows = []
    for question in ([7, 9, 2, 60], [33, 4, 12]):
        tokens = system + question
        rows.append((tokens, cache.prefill(model, tokens)[2]))
    return rows, cache.block_size


@figure("prefix-caching", (10.4, 3.2))
def prefix_caching_figure(ax):
    """Each request's tokens in blocks of 4: blue = read from the cache, orange = computed. Under
    every full block its hash h_j, chained to the block before; B's third block holds two
    tokens of its own question, so its hash differs and only two blocks are reused."""
    rows, size = prefix_requests()
    cell, gap, x0 = 0.44, 0.2, 1.0
    for r, (tokens, reused) in enumerate(rows):
        y = 2.35 - r * 1.45
        text(ax, x0 - 0.35, y + cell / 2, f"${'AB'[r]}$", size=14)
        for pos, token in enumerate(tokens):
            x = x0 + pos * cell + (pos // size) * gap
            fc = READ_KV if pos < reused else NEW_KV
            square(ax, x, y, cell, fc)
            text(ax, x + cell / 2, y + cell / 2, f"{token}", size=9, color=ink_on(fc))
        for j in range(len(tokens) // size):  # one hash per full block
            xc = x0 + (j * size + size / 2) * cell + j * gap
            text(ax, xc, y - 0.25, f"$h_{{{j + 1}}}$", size=11,
                 color=INK if (j + 1) * size <= reused else MUTED)
            if j:
                arrow(ax, (xc - size * cell - gap + 0.22, y - 0.25), (xc - 0.22, y - 0.25), lw=0.9)


# --- cross-layer KV sharing -------------------------------------------------------------------
@figure("cross-layer-kv-sharing", (10.4, 3.9))
def cross_layer_kv_sharing_figure(ax):
    """The demo's three layouts of 6 layers, bottom to top: orange layers produce keys and values
    (and are cached), grey ones only make queries; an arrow leads from each of those to the layer
    whose K/V it reads. Under each stack, the number of cached layers."""
    torch.manual_seed(0)
    layouts = [[0, 1, 2, 3, 4, 5], [0, 0, 2, 2, 4, 4], [0, 1, 2, 3, 2, 3]]
    w, h, step = 1.1, 0.36, 0.5
    for c, source in enumerate(layouts):
        cache = SharedKVDecoder(source)(torch.tensor([1, 2]))[1]  # the layers that cache
        x0 = 1.2 + c * 3.3
        for i, s in enumerate(source):
            y = 0.75 + i * step
            produces = i in cache
            box(ax, x0, y, w, h, f"${i + 1}$", fc=NEW_KV if produces else BOX,
                color=ink_on(NEW_KV) if produces else INK, size=11)
            if not produces:  # a curve on the right from this layer down to its source
                ys = 0.75 + s * step
                ax.annotate("", xy=(x0 + w, ys + h / 2), xytext=(x0 + w, y + h / 2),
                            annotation_clip=False,
                            arrowprops=dict(arrowstyle="-|>,head_length=0.5,head_width=0.22",
                                            color=MUTED, lw=1.1, shrinkA=0, shrinkB=0,
                                            connectionstyle=f"arc3,rad=-{0.25 + 0.1 * (i - s)}"))
        text(ax, x0 + w / 2, 0.35, f"${len(cache)}$", size=13)
