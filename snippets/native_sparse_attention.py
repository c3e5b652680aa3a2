"""Native Sparse Attention (NSA) and MoBA: attention over chosen blocks.

NSA (Yuan et al. 2025): each query attends in three branches, to
compressed blocks of keys, to the top-n blocks that the compressed
branch's weights select (one choice per GQA group) and to a sliding
window; sigmoid gates weigh the three outputs. MoBA (Lu et al. 2025):
each query attends to its own block and to the blocks whose mean key
scores highest against it. Every selection is a boolean mask: SDPA takes
it as attn_mask, FlexAttention as a mask_mod turned into a block mask.
"""

BLOCKS = {
    "demo": [
        "snippets/native_sparse_attention.py:code",
        "snippets/native_sparse_attention.py:demo",
    ],
}

# --8<-- [start:code]
import math
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention

BRANCHES = ("cmp", "slc", "win")


def window_mask(T, window):
    """(T, T) bool, True = may attend: key j with i - window < j <= i."""
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    return (j <= i) & (i - j < window)


def compressed_mask(T, num_cmp, block, stride):
    """(T, num_cmp) bool: query i sees compressed block c (positions
    c*stride .. c*stride + block - 1) once the block is complete."""
    last = torch.arange(num_cmp) * stride + block - 1
    return last[None, :] <= torch.arange(T)[:, None]


def blocks_to_tokens(chosen, block, T):
    """(..., T, N) bool per block -> (..., T, T) bool per key, causal."""
    keys = chosen.repeat_interleave(block, dim=-1)[..., :T]
    return keys & torch.ones(T, T, dtype=torch.bool).tril()


def window_mod(window):
    def mask_mod(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx - kv_idx < window)
    return mask_mod


def compressed_mod(block, stride):
    def mask_mod(b, h, q_idx, kv_idx):
        return kv_idx * stride + block - 1 <= q_idx
    return mask_mod


def chosen_blocks_mod(chosen, block, heads_per_row=1):
    """chosen: (rows, T, N) bool, one row per head or per GQA group."""
    def mask_mod(b, h, q_idx, kv_idx):
        row = h // heads_per_row
        return chosen[row, q_idx, kv_idx // block] & (kv_idx <= q_idx)
    return mask_mod


def top_blocks(scores, T, block, top_n, forced):
    """scores: (rows, T, N) -> (rows, T, N) bool: per query the blocks
    where forced is True, then the best others, top_n in all; never a
    block that starts after the query."""
    own = torch.arange(T)[:, None] // block  # (T, 1)
    later = torch.arange(scores.size(-1))[None, :] > own  # (T, N)
    scores = scores.masked_fill(forced, math.inf)
    scores = scores.masked_fill(later, -math.inf)
    best = scores.topk(min(top_n, scores.size(-1)), dim=-1).indices
    chosen = torch.zeros(scores.shape, dtype=torch.bool)
    return chosen.scatter(-1, best, True) & ~later


def nsa_select(p_cmp, T, block, stride, sel_block, top_n, groups):
    """p_cmp: (h, T, C) compressed-branch weights -> (groups, T, N) bool.
    A selection block scores the weights of the compressed blocks that
    overlap it, summed over the heads of its GQA group; block 0 and the
    two most recent blocks are always among the top_n."""
    num_sel = -(-T // sel_block)
    start = torch.arange(p_cmp.size(-1)) * stride  # (C,)
    j = torch.arange(num_sel)
    overlap = ((start[:, None] // sel_block <= j)
               & (j <= (start[:, None] + block - 1) // sel_block))
    p_slc = p_cmp @ overlap.to(p_cmp.dtype)  # (h, T, N)
    p_slc = p_slc.unflatten(0, (groups, -1)).sum(1)  # (groups, T, N)
    own = torch.arange(T)[:, None] // sel_block
    forced = (j == 0) | (j == own) | (j == own - 1)  # (T, N)
    return top_blocks(p_slc, T, sel_block, top_n, forced)


def moba_select(q, k, block, top_k):
    """q, k: (h, T, d_k) -> (h, T, N) bool. Block score: q . mean key of
    the block; the query's own block always counts as one of the top_k
    (MoBA's code gives it +inf), later blocks never."""
    T = q.size(-2)
    means = torch.stack([k[..., s:s + block, :].mean(-2)
                         for s in range(0, T, block)], dim=-2)  # (h, N, d)
    own = torch.arange(T)[:, None] // block
    forced = torch.arange(means.size(-2)) == own  # (T, N)
    return top_blocks(q @ means.transpose(-2, -1), T, block, top_k, forced)


class NativeSparseAttention(torch.nn.Module):
    """One NSA layer without its output projection: h query heads,
    groups key/value heads, and keys and values of its own per branch."""

    def __init__(self, d_model, heads, groups, d_k, block=4, stride=2,
                 sel_block=4, top_n=5, window=8):
        super().__init__()
        self.h, self.groups, self.d_k = heads, groups, d_k
        self.block, self.stride, self.window = block, stride, window
        self.sel_block, self.top_n = sel_block, top_n
        self.wq = torch.nn.Linear(d_model, heads * d_k, bias=False)
        # keys and values of the three branches, G heads each
        self.wkv = torch.nn.Linear(d_model, 6 * groups * d_k, bias=False)
        self.phi = torch.nn.Linear(block * d_k, d_k)  # block -> one key
        self.phi_v = torch.nn.Linear(block * d_k, d_k)  # -> one value
        self.pos = torch.nn.Parameter(0.1 * torch.randn(2, block, d_k))
        self.gate = torch.nn.Linear(d_model, 3 * heads)  # g_cmp, g_slc, g_win

    def compress(self, x, phi, pos):
        """(G, T, d_k) -> (G, C, d_k), C = (T - block) // stride + 1."""
        blocks = x.unfold(-2, self.block, self.stride).transpose(-2, -1)
        return phi((blocks + pos).flatten(-2))

    def prepare(self, x):
        """x: (T, d_model) -> q (1, h, T, d_k), {branch: (k, v)}, each
        (1, G, S, d_k), {branch: mask}, gates (3, h, T, 1)."""
        T = x.size(0)
        if T < self.block:  # unfold needs one whole compressed block
            raise ValueError(f"{T} tokens: fewer than a block of {self.block}")
        q = self.wq(x).unflatten(-1, (self.h, self.d_k)).transpose(0, 1)
        kv = self.wkv(x).unflatten(-1, (6, self.groups, self.d_k))
        kv = kv.permute(1, 2, 0, 3)  # (6, G, T, d_k)
        k_cmp = self.compress(kv[0], self.phi, self.pos[0])
        v_cmp = self.compress(kv[1], self.phi_v, self.pos[1])
        masks = {"cmp": compressed_mask(T, k_cmp.size(-2), self.block,
                                        self.stride)}
        k_rep = k_cmp.repeat_interleave(self.h // self.groups, 0)
        scores = q @ k_rep.transpose(-2, -1) / math.sqrt(self.d_k)
        p_cmp = scores.masked_fill(~masks["cmp"], -math.inf).softmax(-1)
        p_cmp = p_cmp.nan_to_num()  # a query before the first block: 0
        self.chosen = nsa_select(p_cmp, T, self.block, self.stride,
                                 self.sel_block, self.top_n, self.groups)
        masks["slc"] = blocks_to_tokens(self.chosen, self.sel_block, T)
        masks["slc"] = masks["slc"].repeat_interleave(
            self.h // self.groups, 0)  # (h, T, T)
        masks["win"] = window_mask(T, self.window)
        kvs = {"cmp": (k_cmp, v_cmp), "slc": (kv[2], kv[3]),
               "win": (kv[4], kv[5])}
        kvs = {c: (k[None], v[None]) for c, (k, v) in kvs.items()}
        gates = torch.sigmoid(self.gate(x)).unflatten(-1, (3, self.h))
        return q[None], kvs, masks, gates.permute(1, 2, 0)[..., None]

    def forward(self, x):
        """x: (T, d_model) -> (1, h, T, d_k): sum of gate * branch."""
        q, kvs, masks, gates = self.prepare(x)
        return sum(g * F.scaled_dot_product_attention(
            q, *kvs[c], attn_mask=masks[c], enable_gqa=True)
            for c, g in zip(BRANCHES, gates))


def eager_flex(q, k, v, block_mask):
    """flex_attention without torch.compile (a CPU, tiny shapes): the
    unfused version, with its one UserWarning silenced."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="flex_attention called without torch.compile")
        return flex_attention(q, k, v, block_mask=block_mask,
                              enable_gqa=True)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    from torch.nn.attention.flex_attention import create_block_mask

    torch.manual_seed(0)
    T, d_model, h, G, d_k = 32, 16, 4, 2, 8
    nsa = NativeSparseAttention(d_model, h, G, d_k)
    x = torch.randn(T, d_model)  # (T, d_model)
    with torch.no_grad():
        q, kvs, masks, gates = nsa.prepare(x)
        out = nsa(x)  # (1, h, T, d_k)
    print("keys of the last query:",
          {c: int(m.reshape(-1, T, m.size(-1))[0, -1].sum())
           for c, m in masks.items()})
    mods = {"cmp": compressed_mod(nsa.block, nsa.stride),
            "slc": chosen_blocks_mod(nsa.chosen, nsa.sel_block, h // G),
            "win": window_mod(nsa.window)}
    flex_out = 0
    for c, g in zip(BRANCHES, gates):  # one block mask per branch, once
        S = kvs[c][0].size(-2)
        blocks = create_block_mask(mods[c], None, h, T, S, device="cpu",
                                   BLOCK_SIZE=4)
        flex_out = flex_out + g * eager_flex(q, *kvs[c], blocks)
    print("flex block masks give the SDPA result:",
          torch.allclose(flex_out, out, atol=1e-5))

    k, v = torch.randn(2, h, T, d_k).unbind(0)  # MoBA: (h, T, d_k)
    chosen = moba_select(q[0], k, block=8, top_k=2)  # (h, T, 4 blocks)
    moba = F.scaled_dot_product_attention(
        q[0], k, v, attn_mask=blocks_to_tokens(chosen, 8, T))
    blocks = create_block_mask(chosen_blocks_mod(chosen, 8), None, h, T, T,
                               device="cpu", BLOCK_SIZE=8)
    print("MoBA, top 2 of 4 blocks, flex equals SDPA:",
          torch.allclose(eager_flex(q, k[None], v[None], blocks)[0], moba,
                         atol=1e-5))
    every = moba_select(q[0], k, block=8, top_k=4)
    dense = F.scaled_dot_product_attention(q[0], k, v, is_causal=True)
    print("MoBA with top_k = 4 blocks is dense causal:",
          torch.allclose(F.scaled_dot_product_attention(
              q[0], k, v, attn_mask=blocks_to_tokens(every, 8, T)),
              dense, atol=1e-6))
# --8<-- [end:demo]
