"""Padding and causal masks, combined, safe in float16/bfloat16, and rows with no key at all."""

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

    Same convention as nn.MultiheadAttention's key_padding_mask ("ignore this key").
    """
    return torch.arange(max_len, device=lengths.device)[None, :] >= lengths[:, None]


def causal_mask(num_queries, num_keys=None, lower_right=False, device=None):
    """(L, S) boolean, True = may attend (SDPA convention).

    Upper-left (default, like F.scaled_dot_product_attention(is_causal=True)): query i sees
    keys 0..i, whatever S is. Lower-right: query i sees keys 0..i + (S - L), so the last
    query sees every key; this is the mask for L new tokens decoded after S - L cached ones.
    The two agree when L == S. Lower-right with L > S leaves the first L - S queries
    with no key at all (masked_attention gives them zeros).
    """
    num_keys = num_queries if num_keys is None else num_keys
    offset = num_keys - num_queries if lower_right else 0
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device)
    return ones.tril(diagonal=offset)


def combine_masks(padding=None, attend=None):
    """Padding (B, S), True = pad, and an attend mask (L, S) -> attend mask (B, 1, L, S)."""
    if padding is None:
        return attend
    keep = ~padding[:, None, None, :]  # (B, 1, 1, S): broadcasts over heads and queries
    return keep if attend is None else keep & attend


def masked_attention(q, k, v, attend=None):
    """softmax(q k^T / sqrt(d_k)) v with a boolean attend mask (True = may attend).

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v); attend
    broadcastable to (..., L, S). Works in float16 and bfloat16: masked scores get the
    dtype's most negative finite value, never a constant like -1e9 that overflows.
    A query whose keys are ALL masked gets an output of zeros (as F.scaled_dot_product_attention
    does), never NaN: there is nothing to average, and NaN would poison the loss.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., L, S)
    if attend is None:
        return torch.softmax(scores, dim=-1) @ v
    scores = scores.masked_fill(~attend, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    # A fully masked row would otherwise average all values uniformly: zero it instead.
    weights = weights.masked_fill(~attend.any(dim=-1, keepdim=True), 0.0)
    return weights @ v  # (..., L, d_v)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, H, L, d_k = 2, 2, 4, 8
    q, k, v = torch.randn(3, B, H, L, d_k).unbind(0)  # self-attention: S == L
    padding = key_padding_mask(torch.tensor([4, 2]), L)  # second sequence: 2 real tokens
    attend = combine_masks(padding, causal_mask(L))  # (B, 1, L, S)
    print("attend mask of sequence 2 (1 = may attend):")
    print(attend[1, 0].int())

    out = masked_attention(q, k, v, attend)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    print("matches F.scaled_dot_product_attention:", torch.allclose(out, ref, atol=1e-6))

    # Half precision: the same mask, no inf or NaN, close to the float32 result.
    for dtype in (torch.float16, torch.bfloat16):
        low = masked_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend)
        close = torch.allclose(low.float(), out, atol=5e-2)
        print(dtype, "finite:", bool(low.isfinite().all()), "close to float32:", close)

    # A query with no key to attend: zeros, not NaN.
    nothing = torch.zeros(L, L, dtype=torch.bool)
    nothing[1:] = True
    out = masked_attention(q, k, v, nothing)
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
    upper = masked_attention(q, k, v, causal_mask(L, S))
    lower = masked_attention(q, k, v, causal_mask(L, S, lower_right=True))
    ref_upper = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ref_lower = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(L, S))
    print("upper-left equals is_causal=True:", torch.allclose(upper, ref_upper, atol=1e-6))
    print("lower-right equals causal_lower_right:", torch.allclose(lower, ref_lower, atol=1e-6))
    # Lower-right = the last L rows of the full S x S causal mask over the whole sequence.
    same = torch.equal(causal_mask(L, S, lower_right=True), causal_mask(S)[-L:])
    print("lower-right equals the last L rows of the S x S mask:", same)
# --8<-- [end:causal_alignment]
