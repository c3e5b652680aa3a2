"""FlexAttention: the site's masks and biases as mask_mod and score_mod.

torch.nn.attention.flex_attention takes attention's two variable parts as
small functions of the indices: a mask_mod(b, h, q_idx, kv_idx) that says
which keys a query may see, and a score_mod(score, b, h, q_idx, kv_idx)
that changes a score before the softmax. create_block_mask evaluates the
mask_mod once and records, for every block (tile) of the score matrix,
whether it is full, partial or empty, so that a compiled kernel can skip
the empty blocks.
"""

BLOCKS = {
    "demo": [
        "snippets/alibi.py:code",
        "snippets/flex_attention.py:code",
        "snippets/flex_attention.py:demo",
    ],
    "site_masks": [
        "snippets/sliding_window_attention.py:code",
        "snippets/document_masking.py:code",
        "snippets/prefix_lm_mask.py:code",
        "snippets/flex_attention.py:code",
        "snippets/flex_attention.py:site_masks",
    ],
}

# --8<-- [start:code]
import warnings

import torch
from torch.nn.attention.flex_attention import (
    and_masks,
    create_block_mask,
    flex_attention,
)


def eager_flex_attention(q, k, v, **kwargs):
    """flex_attention(q, k, v, **kwargs) as this page runs it, without
    torch.compile: an unfused version that materializes the whole (L, S)
    score matrix and says so in a UserWarning, once per process. That
    version is the one meant here (a CPU, tiny shapes), so this one
    warning is silenced, during this call only (PyTorch then counts it as
    shown). For speed, on a GPU, call torch.compile(flex_attention).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="flex_attention called without torch.compile")
        return flex_attention(q, k, v, **kwargs)


def causal_mask_mod(b, h, q_idx, kv_idx):
    """True = may attend: the key is at or before the query, as with
    F.scaled_dot_product_attention(..., is_causal=True): aligned to the
    upper left, so with L < S queries after a cache it is not the causal
    mask of the last L positions (that is kv_idx <= q_idx + S - L)."""
    return kv_idx <= q_idx


def alibi_score_mod(slopes):
    """(H,) ALiBi slopes, on the device of q -> score_mod(score, b, h, q_idx,
    kv_idx) that adds m_h * (j - i) to the score of query i and key j in
    head h.

    flex_attention passes the score already multiplied by scale (default
    1/sqrt(d_k)), which is where SDPA adds a float mask, so the two agree.
    The causal half of ALiBi's mask goes into a mask_mod instead: a
    score_mod cannot make the kernel skip anything.
    """

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    return score_mod


def _blocks(num_blocks, indices):
    """(..., R) counts and (..., R, C) block columns -> (..., R, C) bool."""
    cols = indices.size(-1)
    used = torch.arange(cols, device=indices.device) < num_blocks[..., None]
    # Entries past a row's count are undefined: send them to a spare column.
    index = torch.where(used, indices.long(), cols)
    blocks = torch.zeros(*index.shape[:-1], cols + 1, dtype=torch.bool,
                         device=indices.device)
    return blocks.scatter(-1, index, True)[..., :cols]


def block_kinds(block_mask):
    """BlockMask -> (B, H, L / Q_BLOCK, S / KV_BLOCK) int64, one entry per
    block of the score matrix: 2 = full (every pair in it may attend),
    1 = partial (computed, with mask_mod applied), 0 = empty (skipped)."""
    partial = _blocks(block_mask.kv_num_blocks, block_mask.kv_indices)
    kinds = partial.long()
    if block_mask.full_kv_num_blocks is not None:
        full = _blocks(block_mask.full_kv_num_blocks,
                       block_mask.full_kv_indices)
        kinds = kinds + 2 * full.long()
    return kinds
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, H, T, d_k = 2, 4, 32, 8
    q, k, v = torch.randn(3, B, H, T, d_k).unbind(0)  # (B, H, T, d_k)

    # B=None, H=None: one mask for every sequence and head. Blocks of 8 x 8
    # keep this small; the default, 128 x 128, is sized for GPU kernels.
    causal = create_block_mask(causal_mask_mod, None, None, T, T,
                               device="cpu", BLOCK_SIZE=8)
    print("blocks (2 = full, 1 = partial, 0 = skipped):")
    print(block_kinds(causal)[0, 0])
    print(f"sparsity: {causal.sparsity():.1f} %")  # share of blocks skipped

    out = eager_flex_attention(q, k, v, block_mask=causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print("causal mask_mod equals is_causal=True:",
          torch.allclose(out, ref, atol=1e-6))

    # ALiBi: the bias as a score_mod, its causal part in the block mask.
    alibi = alibi_score_mod(alibi_slopes(H, device=q.device))
    out = eager_flex_attention(q, k, v, score_mod=alibi, block_mask=causal)
    print("ALiBi score_mod equals alibi_attention:",
          torch.allclose(out, alibi_attention(q, k, v), atol=1e-6))
# --8<-- [end:demo]


# --8<-- [start:site_masks]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, H, T, d_k = 2, 2, 32, 8
    q, k, v = torch.randn(3, B, H, T, d_k).unbind(0)  # (B, H, T, d_k)

    def flex_equals_sdpa(mask_mod, attend, batch):
        """flex_attention with mask_mod against SDPA with the boolean
        mask attend (True = may attend); batch=None if the mask_mod does
        not depend on b."""
        block_mask = create_block_mask(mask_mod, batch, None, T, T,
                                       device="cpu", BLOCK_SIZE=8)
        out = eager_flex_attention(q, k, v, block_mask=block_mask)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        return torch.allclose(out, ref, atol=1e-6)

    window = sliding_window_mask(T, window=6)  # (T, T)
    print("sliding window:",
          flex_equals_sdpa(sliding_window_mask_mod(6), window, None))

    ids = torch.stack([document_ids([10, 6, 12], T),  # 4 pads at the end
                       document_ids([20, 12], T)])  # (B, T)
    docs = document_mask(ids)[:, None]  # (B, 1, T, T): all heads
    print("document masking:",
          flex_equals_sdpa(document_mask_mod(ids), docs, B))

    prefix = torch.tensor([12, 5])  # one prefix length per sequence
    attend = prefix_lm_mask(prefix, T)[:, None]  # (B, 1, T, T)
    print("prefix LM:",
          flex_equals_sdpa(prefix_lm_mask_mod(prefix), attend, B))

    # Combined: a window inside each document, and_masks of the two.
    both = and_masks(document_mask_mod(ids), sliding_window_mask_mod(6))
    print("documents and a window:",
          flex_equals_sdpa(both, docs & window, B))
# --8<-- [end:site_masks]
