"""Padding and causal masks, combined, safe in float16/bfloat16, and rows with
no key at all."""

BLOCKS = {
    "demo": [
        "snippets/masks.py:code",
        "snippets/masks.py:demo",
    ],
    "causal_alignment": [
        "snippets/masks.py:code",
        "snippets/masks.py:causal_alignment",
    ],
}

# --8<-- [start:code]
import math

import torch


def key_padding_mask(lengths, max_len):
    """(B,) sequence lengths -> (B, S) boolean, True = padding.

    Same convention as nn.MultiheadAttention's key_padding_mask ("ignore
    this key").
    """
    positions = torch.arange(max_len, device=lengths.device)
    return positions[None, :] >= lengths[:, None]


def causal_mask(num_queries, num_keys=None, *, lower_right=False,
                device=None):
    """(L, S) boolean, True = may attend (SDPA convention).

    Upper-left (default, like F.scaled_dot_product_attention(is_causal=True)):
    query i sees keys 0..i, whatever S is. Lower-right: query i sees keys
    0..i + (S - L), so the last query sees every key; this is the mask for L
    new tokens decoded after S - L cached ones. The two agree when L == S.
    Lower-right with L > S leaves the first L - S queries with no key at all
    (masked_attention gives them zeros).
    """
    num_keys = num_queries if num_keys is None else num_keys
    offset = num_keys - num_queries if lower_right else 0
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device)
    return ones.tril(diagonal=offset)


def combine_masks(*, padding=None, attend=None):
    """padding (B, S), True = pad, and attend (L, S), True = may attend
    -> attend mask (B, 1, L, S), True = may attend.

    Keyword-only: the two masks have opposite conventions.
    """
    if padding is None:
        return attend
    # (B, 1, 1, S): broadcasts over heads and queries
    keep = ~padding[:, None, None, :]
    return keep if attend is None else keep & attend


def masked_attention(q, k, v, *, attend=None):
    """softmax(q k^T / sqrt(d_k)) v with a boolean attend mask.

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v);
    attend: boolean, True = may attend, broadcastable to (..., L, S).
    The masking is safe in float16 and bfloat16: masked scores get the
    dtype's most negative finite value, never a literal like -1e9 (which
    makes masked_fill raise in float16). Scores are computed from a
    pre-scaled q, so they overflow only if the scaled scores do.
    A query whose keys are ALL masked gets an output of zeros, never NaN:
    there is nothing to average, and NaN would poison the loss. (SDPA
    also gives zeros there since PyTorch 2.5, for -inf or boolean masks;
    undocumented.)
    """
    if attend is not None and attend.dtype != torch.bool:
        raise ValueError("attend must be a boolean mask (True = may attend)")
    # Scale q first: in float16, q @ k^T overflows to inf once |q.k|
    # exceeds float16's range (largest finite value 65504).
    scores = (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)  # (..., L, S)
    if attend is None:
        return torch.softmax(scores, dim=-1) @ v
    scores = scores.masked_fill(~attend, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    # A fully masked row would otherwise average all values uniformly:
    # zero it instead.
    weights = weights.masked_fill(~attend.any(dim=-1, keepdim=True), 0.0)
    return weights @ v  # (..., L, d_v)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, H, L, d_k = 2, 2, 4, 8
    # self-attention: S == L
    q, k, v = torch.randn(3, B, H, L, d_k).unbind(0)
    # the second sequence has 2 real tokens
    padding = key_padding_mask(torch.tensor([4, 2]), L)
    # (B, 1, L, S)
    attend = combine_masks(padding=padding, attend=causal_mask(L))
    print("attend mask of sequence 2 (1 = may attend):")
    print(attend[1, 0].int())

    out = masked_attention(q, k, v, attend=attend)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    same = torch.allclose(out, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)

    # Half precision: the same mask, no inf or NaN, close to float32.
    for dtype in (torch.float16, torch.bfloat16):
        low = masked_attention(
            q.to(dtype), k.to(dtype), v.to(dtype), attend=attend
        )
        finite = bool(low.isfinite().all())
        close = torch.allclose(low.float(), out, atol=5e-2)
        print(dtype, "finite:", finite, "close to float32:", close)

    # A query with no key to attend: zeros, not NaN.
    nothing = torch.zeros(L, L, dtype=torch.bool)
    nothing[1:] = True
    out = masked_attention(q, k, v, attend=nothing)
    print("fully masked row -> zeros:", bool((out[..., 0, :] == 0).all()))
    print("NaN anywhere:", bool(out.isnan().any()))
# --8<-- [end:demo]


# --8<-- [start:causal_alignment]
if __name__ == "__main__":
    import torch.nn.functional as F
    from torch.nn.attention.bias import causal_lower_right

    torch.manual_seed(0)
    L, S = 2, 5  # 2 new queries, 5 keys (3 of them cached from earlier steps)
    print("upper-left (SDPA is_causal):")
    print(causal_mask(L, S).int())
    print("lower-right (decoding with a KV cache):")
    print(causal_mask(L, S, lower_right=True).int())

    q, k, v = torch.randn(1, L, 8), torch.randn(1, S, 8), torch.randn(1, S, 8)
    upper_left = causal_mask(L, S)
    lower_right = causal_mask(L, S, lower_right=True)
    upper = masked_attention(q, k, v, attend=upper_left)
    lower = masked_attention(q, k, v, attend=lower_right)
    ref_upper = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ref_lower = F.scaled_dot_product_attention(
        q, k, v, attn_mask=causal_lower_right(L, S)
    )
    same = torch.allclose(upper, ref_upper, atol=1e-6)
    print("upper-left equals is_causal=True:", same)
    same = torch.allclose(lower, ref_lower, atol=1e-6)
    print("lower-right equals causal_lower_right:", same)
    # Lower-right = the last L rows of the S x S causal mask over the whole
    # sequence.
    same = torch.equal(lower_right, causal_mask(S)[-L:])
    print("lower-right equals the last L rows of the S x S mask:", same)
# --8<-- [end:causal_alignment]
