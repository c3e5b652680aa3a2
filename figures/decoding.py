"""The decoding entries' figures: KV cache, PagedAttention, sliding window, FlashAttention tiles.

Every number is read off the snippets' own objects: the cache lengths of a CachedCausalSelfAttention
run, the bytes of kv_bytes_per_token, the block tables of a BlockPool, the mask and the slots of
a RollingKVCache, and the tiles a flash_attention call really visits. Sequences in the paged
figure take the categorical HEAD colours (one colour per sequence there, as there are no heads).
"""

from __future__ import annotations

import torch
from matplotlib.patches import Rectangle
from torch.overrides import TorchFunctionMode

from figures import (HEAD, INK, MUTED, ON_DARK, PAPER, WEIGHTS, arrow,
                                  cell_color, empty_square, figure, masked_square, square, text)
from snippets.flash_attention import flash_attention  # noqa: E402
from snippets.kv_cache import CachedCausalSelfAttention, KVCache, kv_bytes_per_token  # noqa: E402
from snippets.paged_attention import BlockPool, PagedSequence  # noqa: E402
from snippets.sliding_window_attention import RollingKVCache, sliding_window_mask  # noqa: E402

READ = WEIGHTS(0.45)  # cached keys and values, read again: light blue
NEW = cell_color(0.8, "signed")  # the keys and values a call appends: orange
SEEN = WEIGHTS(0.64)  # an allowed cell of a mask


def _grouped(n: int) -> str:
    """1234567 -> '1 234 567' with thin spaces: SI grouping, read the same in en, es and da."""
    return f"{n:,}".replace(",", "\u2009")


# --- KV cache ---------------------------------------------------------------------------------
def cache_lengths(prompt=4, steps=3):
    """(cached before, cached after) for each call of a layer: one prefill, then decode steps."""
    attn = CachedCausalSelfAttention(d_model=16, num_heads=2, num_kv_heads=1)
    x = torch.randn(1, prompt + steps, 16)
    cache, calls = KVCache(), []
    for start, stop in [(0, prompt)] + [(t, t + 1) for t in range(prompt, prompt + steps)]:
        before = len(cache)
        attn(x[:, start:stop], cache, offset=start)
        calls.append((before, len(cache)))
    return calls


@figure("kv-cache", (10.4, 3.7))
def kv_cache_figure(ax):
    """Left: what each call reads from the cache and appends to it. Right: Llama 2 70B's bytes
    per token for 64, 8 and 1 key/value heads (80 layers, d_k = 128, 2 bytes per number)."""
    calls = cache_lengths()
    total = calls[-1][1]
    cell, x0, top = 0.46, 1.25, 2.95
    text(ax, x0 + total * cell / 2, top + 0.5, "$K,\\ V$", size=13)
    for j in range(total):
        text(ax, x0 + (j + 0.5) * cell, top + 0.16, f"${j + 1}$", size=10, color=MUTED)
    for r, (before, after) in enumerate(calls):
        y = top - (r + 1) * cell - r * 0.12
        for j in range(total):
            if j < before:
                square(ax, x0 + j * cell, y, cell, READ)
            elif j < after:
                square(ax, x0 + j * cell, y, cell, NEW)
            else:
                empty_square(ax, x0 + j * cell, y, cell)
        text(ax, x0 - 0.12, y + cell / 2, f"$L = {after - before}$", size=11, ha="right")
        text(ax, x0 + total * cell + 0.14, y + cell / 2, f"$S = {after}$", size=11, color=MUTED, ha="left")
    # Right: bytes per token, one bar per attention layout, to scale.
    layouts = [("MHA", 64), ("GQA", 8), ("MQA", 1)]
    sizes = [kv_bytes_per_token(80, g, 128, torch.finfo(torch.float16).bits // 8) for _, g in layouts]
    bx, base, height, width, step = 6.3, 0.75, 2.3, 0.7, 1.25
    ax.plot([bx - 0.3, bx + 3 * step - 0.25], [base, base], color=MUTED, lw=1.0)
    for n, ((name, g), size) in enumerate(zip(layouts, sizes)):
        x = bx + n * step
        h = height * size / sizes[0]
        ax.add_patch(Rectangle((x, base), width, h, fc=SEEN, ec=INK, lw=0.6, clip_on=False))
        text(ax, x + width / 2, base + h + 0.16, _grouped(size), size=10)
        text(ax, x + width / 2, base - 0.2, name, size=11, weight="bold")
        text(ax, x + width / 2, base - 0.45, f"$G = {g}$", size=10, color=MUTED)
        if n:
            ratio = sizes[n - 1] // size
            text(ax, x - (step - width) / 2, base + 0.55, f"$\\div {ratio}$", size=10, color=MUTED)
    text(ax, bx + 1.5 * step - 0.25, 3.45, r"$2 \cdot 80 \cdot G \cdot 128 \cdot 2$", size=12)


# --- PagedAttention ---------------------------------------------------------------------------
def paged_state():
    """The demo's pool after a 7-token prompt for A, 3 tokens for B and two interleaved steps."""
    pool = BlockPool(num_blocks=8, block_size=4, num_kv_heads=1, d_k=2)
    seqs = {"A": PagedSequence(pool), "B": PagedSequence(pool)}

    def append(name, n):
        seqs[name].append(torch.zeros(n, 1, 2), torch.zeros(n, 1, 2))

    append("A", 7)
    append("B", 3)
    for _ in range(2):
        append("A", 1)
        append("B", 1)
    return pool, seqs


@figure("paged-attention", (10.4, 4.1))
def paged_attention_figure(ax):
    """Left: each sequence's tokens in logical blocks of 4. Middle: its block table. Right: the
    shared pool of 8 physical blocks; every slot shows the token (position) it holds."""
    pool, seqs = paged_state()
    size = pool.block_size
    cell = 0.3
    owner = {}  # physical block -> (sequence, logical block)
    for s, (name, seq) in enumerate(seqs.items()):
        for j, block in enumerate(seq.block_table):
            owner[block] = (name, j)
    # Right: the physical pool, one row per block id (as the code prints them).
    px, ptop = 7.6, 3.55
    row_y = {}
    for b in range(pool.k.size(0)):
        y = ptop - (b + 1) * (cell + 0.08)
        row_y[b] = y
        text(ax, px - 0.12, y + cell / 2, f"${b}$", size=10, color=MUTED, ha="right")
        name, j = owner.get(b, (None, None))
        for slot in range(size):
            x = px + slot * cell
            if name is None:
                empty_square(ax, x, y, cell)
                continue
            seq = seqs[name]
            position = j * size + slot + 1  # tokens count from 1
            if position <= seq.length:
                colour = HEAD[list(seqs).index(name)]
                square(ax, x, y, cell, colour)
                text(ax, x + cell / 2, y + cell / 2, f"{position}", size=8, color=ON_DARK)
            else:
                empty_square(ax, x, y, cell)
    # Left: logical blocks; under each one its block-table entry, which points into the pool.
    lx, ltop = 0.55, 3.2
    for s, (name, seq) in enumerate(seqs.items()):
        colour = HEAD[s]
        y = ltop - s * 1.75
        text(ax, lx, y + cell / 2, f"${name}$", size=14, color=colour)
        for j, block in enumerate(seq.block_table):
            x0 = lx + 0.35 + j * (size * cell + 0.3)
            for slot in range(size):
                position = j * size + slot + 1
                x = x0 + slot * cell
                if position <= seq.length:
                    square(ax, x, y, cell, colour)
                    text(ax, x + cell / 2, y + cell / 2, f"{position}", size=8, color=ON_DARK)
                else:
                    empty_square(ax, x, y, cell)
            centre, ty, tw, th = x0 + size * cell / 2, y - 0.72, 0.42, cell + 0.06
            arrow(ax, (centre, y - 0.04), (centre, ty + th + 0.04), color=colour, lw=0.9)
            ax.add_patch(Rectangle((centre - tw / 2, ty), tw, th, fc=PAPER, ec=colour, lw=1.4, clip_on=False))
            text(ax, centre, ty + th / 2, f"${block}$", size=10)
            arrow(ax, (centre + tw / 2 + 0.03, ty + th / 2), (px - 0.3, row_y[block] + cell / 2), color=colour,
                  lw=0.9)
        text(ax, lx, y - 0.72 + (cell + 0.06) / 2, r"$\pi$", size=13, color=MUTED)
    text(ax, px + size * cell / 2, ptop + 0.12, r"$b = 4$", size=11, color=MUTED)


# --- sliding window ---------------------------------------------------------------------------
def reach_rows(length, window, layers):
    """For 1..layers stacked layers: which inputs the last position depends on (as the snippet's
    receptive_field block computes it, by multiplying the masks)."""
    one = sliding_window_mask(length, window=window).long()
    reach, rows = one, []
    for _ in range(layers):
        rows.append((reach[-1] > 0).tolist())
        reach = (reach @ one).clamp(max=1)
    return rows


def rolling_slots(window, steps):
    """The position (from 1) held by each slot of a RollingKVCache after each token."""
    cache = RollingKVCache(1, 1, window, 2)
    rows = []
    for _ in range(steps):
        cache.append(torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))
        rows.append(((cache.pos + 1) * (cache.pos >= 0)).tolist())  # 0: empty slot
    return rows


@figure("sliding-window-attention", (10.4, 4.2))
def sliding_window_figure(ax):
    """Left: the mask for W = 3 over 8 tokens. Middle: the inputs the last of 12 tokens reaches
    through 1 to 4 layers. Right: the rolling buffer of W = 4 slots over 11 tokens."""
    # Left: the mask, i - W < j <= i.
    mask = sliding_window_mask(8, window=3).tolist()
    cell, x0, top = 0.3, 0.75, 3.4
    for i, row in enumerate(mask):
        for j, keep in enumerate(row):
            x, y = x0 + j * cell, top - (i + 1) * cell
            (square(ax, x, y, cell, SEEN) if keep else masked_square(ax, x, y, cell))
        text(ax, x0 - 0.08, top - (i + 0.5) * cell, f"${i + 1}$", size=9, color=MUTED, ha="right")
    for j in range(8):
        text(ax, x0 + (j + 0.5) * cell, top + 0.12, f"${j + 1}$", size=9, color=MUTED)
    text(ax, x0 - 0.38, top - 4 * cell, "$i$", size=12, color=MUTED)
    text(ax, x0 + 8 * cell + 0.15, top + 0.14, "$j$", size=12, color=MUTED)
    text(ax, x0 + 4 * cell, top + 0.5, "$W = 3$", size=12)
    text(ax, x0 + 4 * cell, top - 8 * cell - 0.3, r"$i - W < j \leq i$", size=12, color=MUTED)
    # Middle: the receptive field of the last token, layer by layer.
    length, window, layers = 12, 3, 4
    rows = reach_rows(length, window, layers)
    cell, x0, top = 0.25, 4.15, 3.0
    for n, row in enumerate(rows):
        y = top - (n + 1) * (cell + 0.18)
        for j, reached in enumerate(row):
            x = x0 + j * cell
            (square(ax, x, y, cell, SEEN) if reached else empty_square(ax, x, y, cell))
        text(ax, x0 - 0.1, y + cell / 2, f"$n_\\ell = {n + 1}$", size=10, ha="right")
        back = length - 1 - row.index(True)
        text(ax, x0 + length * cell + 0.1, y + cell / 2, f"${back}$", size=10, color=MUTED, ha="left")
    for j in (0, length - 1):
        text(ax, x0 + (j + 0.5) * cell, top + 0.1, f"${j + 1}$", size=9, color=MUTED)
    text(ax, x0 + length * cell + 0.18, top + 0.12, r"$n_\ell (W - 1)$", size=10, color=MUTED, ha="left")
    text(ax, x0 + length * cell / 2, top + 0.5, "$W = 3$", size=12)
    # Right: the rolling buffer; slot of position j is (j - 1) mod W + 1.
    window, steps = 4, 11
    slots = rolling_slots(window, steps)
    cell, x0, top = 0.3, 8.55, 3.55
    for t, row in enumerate(slots):
        y = top - (t + 1) * cell
        written = t % window
        for s, position in enumerate(row):
            x = x0 + s * cell
            if not position:
                empty_square(ax, x, y, cell)
                continue
            square(ax, x, y, cell, NEW if s == written else READ)
            text(ax, x + cell / 2, y + cell / 2, f"{position}", size=8, color=INK)
        text(ax, x0 - 0.08, y + cell / 2, f"${t + 1}$", size=9, color=MUTED, ha="right")
    for s in range(window):
        text(ax, x0 + (s + 0.5) * cell, top + 0.12, f"${s + 1}$", size=9, color=MUTED)
    text(ax, x0 - 0.4, top - steps * cell / 2, "$t$", size=12, color=MUTED)
    text(ax, x0 + window * cell / 2, top + 0.45, "$W = 4$", size=12)


# --- FlashAttention ---------------------------------------------------------------------------
class _Tiles(TorchFunctionMode):
    """Records the (query block, key block) of every tile flash_attention computes: it slices
    q once per query block and k once per key tile."""

    def __init__(self, q, k):
        super().__init__()
        self.q, self.k, self.row, self.tiles = q, k, None, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__getitem__ and args and isinstance(args[1], tuple):
            rows = args[1][1] if len(args[1]) > 1 else None
            if isinstance(rows, slice):
                if args[0] is self.q:
                    self.row = rows.start
                elif args[0] is self.k:
                    self.tiles.append((self.row, rows.start))
        return func(*args, **(kwargs or {}))


def visited_tiles(length, block, causal=True):
    q, k, v = torch.randn(3, 1, length, 4).unbind(0)
    with _Tiles(q, k) as tiles:
        flash_attention(q, k, v, causal=causal, block_q=block, block_k=block)
    return tiles.tiles


@figure("flash-attention", (10.4, 4.3))
def flash_attention_figure(ax):
    """Left: the 12 x 12 causal score matrix in tiles of 4 x 4, numbered in the order
    flash_attention computes them; tiles right of the diagonal are never computed. Right: all
    L x S scores of the memory demo against the one tile held at a time, to scale."""
    length, block = 12, 4
    tiles = visited_tiles(length, block)
    order = {tile: n + 1 for n, tile in enumerate(tiles)}
    cell, x0, top = 0.25, 0.8, 3.55
    for i in range(length):
        for j in range(length):
            x, y = x0 + j * cell, top - (i + 1) * cell
            tile = (i // block * block, j // block * block)
            if tile not in order:
                empty_square(ax, x, y, cell)
            elif j <= i:
                square(ax, x, y, cell, SEEN)
            else:
                masked_square(ax, x, y, cell)
    for (r, c), n in order.items():
        x, y = x0 + (c + block / 2) * cell, top - (r + block / 2) * cell
        ax.add_patch(Rectangle((x0 + c * cell, top - (r + block) * cell), block * cell, block * cell,
                               fc="none", ec=INK, lw=1.6, clip_on=False))
        text(ax, x, y, f"{n}", size=12, color=INK, weight="bold",
             bbox=dict(boxstyle="circle,pad=0.18", fc=PAPER, ec=INK, lw=0.8))
    for n in range(0, length, block):
        text(ax, x0 + (n + block / 2) * cell, top + 0.14, f"$K^{{({n // block + 1})}}$", size=11)
        text(ax, x0 - 0.1, top - (n + block / 2) * cell, f"$\\tilde{{Q}}^{{({n // block + 1})}}$", size=11,
             ha="right")
    text(ax, x0 + length * cell / 2, top - length * cell - 0.3,
         f"$L = S = {length},\\ b_q = b_k = {block}$", size=11, color=MUTED)
    # Right: what one pass holds, to scale: all scores (naive) or one tile (tiled).
    n, b = 1024, 64  # the memory demo's L = S and tile size
    side = 2.9
    sx, sy = 5.6, 0.55
    ax.add_patch(Rectangle((sx, sy), side, side, fc=cell_color(0.3, "signed"), ec=INK, lw=0.8, clip_on=False))
    small = side * b / n
    ax.add_patch(Rectangle((sx + side + 0.5, sy), small, small, fc=cell_color(0.8, "signed"), ec=INK, lw=0.8,
                           clip_on=False))
    text(ax, sx + side / 2, sy + side + 0.2, f"${n} \\times {n}$", size=12)
    text(ax, sx + side + 0.5 + small / 2, sy + small + 0.2, f"${b} \\times {b}$", size=12)
    text(ax, sx + side + 0.5, sy + side / 2, f"$\\div {(n * n) // (b * b)}$", size=12, color=MUTED, ha="left")
