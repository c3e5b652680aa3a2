"""Block-sparse attention: compute only the tiles of scores a mask allows.

Patterns: local blocks plus global tokens (Longformer, Beltagy et al.
2020) plus random blocks (BigBird, Zaheer et al. 2020, arXiv 2007.14062);
the strided and fixed patterns of Child et al. 2019 (arXiv 1904.10509).
The result equals dense attention with the same boolean mask.
"""

BLOCKS = {
    "demo": [
        "snippets/sparse_attention.py:code",
        "snippets/sparse_attention.py:demo",
    ],
    "strided": [
        "snippets/sparse_attention.py:code",
        "snippets/sparse_attention.py:strided",
    ],
}

# --8<-- [start:code]
import torch


def bigbird_layout(num_blocks, *, window=1, num_global=1, num_random=0,
                   seed=0, device=None):
    """(nb, nb) boolean, True = this block of keys is seen by this block
    of queries. Local: key blocks at most `window` away. Global: the
    first num_global blocks see everything and are seen by everyone.
    Random: each query block that is not global gets num_random more key
    blocks, drawn with a fixed seed (the same layout on every run).
    Drawn on the CPU, whose generator gives the same layout everywhere,
    then moved to `device`.
    """
    i = torch.arange(num_blocks)[:, None]
    j = torch.arange(num_blocks)[None, :]
    layout = (i - j).abs() <= window
    layout[:num_global, :] = True
    layout[:, :num_global] = True
    gen = torch.Generator().manual_seed(seed)
    for row in range(num_global, num_blocks):
        free = (~layout[row]).nonzero().flatten()
        pick = torch.randperm(len(free), generator=gen)[:num_random]
        layout[row, free[pick]] = True
    return layout.to(device)


def strided_mask(T, stride, *, device=None):
    """(T, T) boolean, True = may attend: Child et al.'s two strided
    factors (the last `stride` tokens; every stride-th token back), here
    joined in one causal mask."""
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    local = (j <= i) & (i - j < stride)
    strided = (j <= i) & ((i - j) % stride == 0)
    return local | strided


def fixed_mask(T, stride, c=1, *, device=None):
    """(T, T) boolean, True = may attend: Child et al.'s fixed pattern,
    causal. Each token sees its own block of `stride` tokens, and the
    last c tokens of every block, which act as its summary."""
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    same_block = i // stride == j // stride
    summary = j % stride >= stride - c
    return (j <= i) & (same_block | summary)


def layout_to_mask(layout, block):
    """Block layout (nb, nb) -> token mask (nb*block, nb*block),
    True = may attend."""
    return layout.repeat_interleave(block, 0).repeat_interleave(block, 1)


def tile_layout(attend, block):
    """Token mask (T, S) -> (T/block, S/block): tiles with any True."""
    T, S = attend.shape
    tiles = attend.view(T // block, block, S // block, block)
    return tiles.any(dim=3).any(dim=1)


def block_sparse_attention(q, k, v, *, attend, block):
    """softmax(q k^T / sqrt(d_k)) v under a boolean mask, tile by tile.

    q: (..., T, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., T, d_v)
    attend: (T, S), True = may attend, shared by the batch and heads; T
    and S multiples of block. Only the (block x block) tiles of scores
    holding at least one True are computed. A query with no key gets
    zeros, as F.scaled_dot_product_attention gives.
    """
    T, S = q.size(-2), k.size(-2)
    if T % block or S % block:
        raise ValueError("T and S must be multiples of block")
    if attend.shape != (T, S):
        raise ValueError("attend must have shape (T, S)")
    tiles = tile_layout(attend, block)  # (T/block, S/block)
    scale = q.size(-1) ** -0.5
    # In float32 at least: a float16 score can overflow, which SDPA avoids.
    dtype = q.dtype
    work = torch.promote_types(dtype, torch.float32)  # float32 or float64
    q, k, v = q.to(work), k.to(work), v.to(work)
    out = q.new_zeros(*q.shape[:-1], v.size(-1))
    offsets = torch.arange(block, device=q.device)
    for i in range(T // block):
        cols = tiles[i].nonzero().flatten()  # key blocks of this row
        if len(cols) == 0:
            continue  # no query of this block sees any key: zeros
        keys = (cols[:, None] * block + offsets).flatten()  # positions
        rows = slice(i * block, (i + 1) * block)
        k_tiles = k[..., keys, :]  # (..., len(keys), d_k)
        # (..., block, len(keys)): the only scores ever computed.
        scores = (q[..., rows, :] * scale) @ k_tiles.transpose(-2, -1)
        allowed = attend[rows][:, keys]  # masks inside the tiles
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = weights.masked_fill(~allowed.any(-1, keepdim=True), 0.0)
        out[..., rows, :] = weights @ v[..., keys, :]
    return out.to(dtype)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    block, num_blocks = 8, 8
    T = block * num_blocks
    layout = bigbird_layout(num_blocks, window=1, num_global=1,
                            num_random=1, seed=0)
    print("block layout (1 = tile computed):")
    for row in layout:
        print("".join(str(int(x)) for x in row))

    attend = layout_to_mask(layout, block)  # (64, 64)
    q, k, v = torch.randn(3, 2, 4, T, 16).unbind(0)  # (B, h, T, d)
    ours = block_sparse_attention(q, k, v, attend=attend, block=block)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    print("matches SDPA with the boolean mask:",
          torch.allclose(ours, ref, atol=1e-5))
    done = int(layout.sum())
    print(f"tiles computed: {done} of {layout.numel()} "
          f"({done / layout.numel():.1%})")

    # The same rule for longer sequences: the share of tiles shrinks.
    for num_blocks in (16, 64, 256):
        share = bigbird_layout(num_blocks, window=1, num_global=1,
                               num_random=1).float().mean()
        print(f"T = {num_blocks * 64:>6} in blocks of 64: "
              f"{share:.1%} of the scores computed")
# --8<-- [end:demo]


# --8<-- [start:strided]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    T, stride = 16, 4
    masks = {"strided": strided_mask(T, stride),
             "fixed": fixed_mask(T, stride, c=1)}
    print(f"{'strided':19}fixed    (1 = may attend)")
    for a, b in zip(*masks.values()):
        print("".join(str(int(x)) for x in a), " ",
              "".join(str(int(x)) for x in b))
    q, k, v = torch.randn(3, 1, 2, T, 8).unbind(0)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for name, attend in masks.items():
        ours = block_sparse_attention(q, k, v, attend=attend, block=4)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        allowed, tiles = int(attend.sum()), tile_layout(attend, 4)
        print(f"{name}: matches SDPA {torch.allclose(ours, ref, atol=1e-5)}"
              f", scores allowed {allowed} of {attend.numel()}"
              f", tiles {int(tiles.sum())} of {tiles.numel()}")
    # The every-stride-th keys fall in every tile below the diagonal: as
    # many tiles as a plain causal mask, unless a kernel gathers them.
    print("tiles a causal mask needs:", int(tile_layout(causal, 4).sum()))
# --8<-- [end:strided]
