"""Attention weights: the softmax matrix itself, per head or averaged like
need_weights=True."""

from snippets.multi_head_attention import MultiHeadAttention
from snippets.torch_mha_weights import load_into_torch  # used by the demo

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/torch_mha_weights.py:code",
        "snippets/attention_weights.py:code",
        "snippets/attention_weights.py:demo",
    ],
}

# --8<-- [start:code]
import math

import torch
from torch import nn


def attention_weights(q, k, *, attend=None):
    """softmax(q k^T / sqrt(d_k)): (..., L, d_k), (..., S, d_k) -> (..., L, S).

    Row i says how much query i takes from each key; each row sums to 1,
    but the row of a query with no key to attend to is all zeros, as in
    F.scaled_dot_product_attention (nn.MultiheadAttention gives NaN there).
    attend: optional boolean mask, True = may attend.
    """
    if attend is not None and attend.dtype != torch.bool:
        raise ValueError("attend must be a boolean mask (True = may attend)")
    # Scale q first: in float16, q @ k^T overflows to inf once |q.k|
    # exceeds float16's range (largest finite value 65504).
    scores = (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)
    if attend is not None:
        scores = scores.masked_fill(~attend, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if attend is not None:  # no key left: zeros, not 1/S on masked keys
        weights = weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)
    return weights


def multi_head_attention_weights(mha, query, key, *, attend=None,
                                 average=True):
    """The weights a MultiHeadAttention uses: (B, h, L, S), or (B, L, S)
    averaged over heads.

    average=True matches nn.MultiheadAttention(need_weights=True) (the
    default); average=False matches average_attn_weights=False.
    """
    q = mha.split_heads(mha.w_q(query))  # (B, h, L, d_k)
    k = mha.split_heads(mha.w_k(key))  # (B, h, S, d_k)
    weights = attention_weights(q, k, attend=attend)  # (B, h, L, S)
    return weights.mean(dim=1) if average else weights
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads = 16, 4
    ours = MultiHeadAttention(d_model, num_heads)
    theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
    ref = load_into_torch(ours, theirs).eval()
    x = torch.randn(2, 5, d_model)  # (batch, tokens, d_model)

    # (2, 4, 5, 5) and (2, 5, 5)
    per_head = multi_head_attention_weights(ours, x, x, average=False)
    averaged = multi_head_attention_weights(ours, x, x)
    _, ref_per_head = ref(x, x, x, average_attn_weights=False)
    _, ref_averaged = ref(x, x, x)  # need_weights=True is the default
    print("per-head weights shape:", tuple(per_head.shape))
    print("averaged weights shape:", tuple(averaged.shape))
    same_per_head = torch.allclose(per_head, ref_per_head, atol=1e-6)
    same_averaged = torch.allclose(averaged, ref_averaged, atol=1e-6)
    print("per-head match nn.MultiheadAttention:", same_per_head)
    print("averaged match nn.MultiheadAttention:", same_averaged)
    sums = per_head.sum(dim=-1)
    print("rows sum to 1:", torch.allclose(sums, torch.ones(2, 4, 5)))
    row = " ".join(f"{w:.3f}" for w in per_head[0, 0, 0].tolist())
    print("weights of query 0, head 0:", row)
# --8<-- [end:demo]
