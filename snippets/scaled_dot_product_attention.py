"""Scaled dot-product attention written out, checked against PyTorch's fused kernel.

Also home of the two boolean mask conventions and the helpers that convert between them.
"""

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/scaled_dot_product_attention.py:demo",
    ],
    "mask_conventions": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/scaled_dot_product_attention.py:mask_conventions",
        "snippets/scaled_dot_product_attention.py:mask_conventions_demo",
    ],
}

# --8<-- [start:code]
import math

import torch


def scaled_dot_product_attention(q, k, v, attend=None):
    """softmax(q k^T / sqrt(d_k)) v.

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v)
    attend: optional mask broadcastable to (..., L, S), either
      - boolean, True where a query may look at a key (F.scaled_dot_product_attention's
        convention; nn.MultiheadAttention's masks mean the opposite, True = ignore), or
      - float, added to the scores (0 = keep, -inf = drop).
    Every query needs at least one key it may attend; masks.py handles rows with none.
    """
    d_k = q.size(-1)
    # Without 1/sqrt(d_k) the dot products grow with d_k and the softmax saturates.
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., L, S)
    if attend is not None and attend.dtype == torch.bool:
        # The most negative finite value of the dtype: -1e9 would overflow in float16.
        scores = scores.masked_fill(~attend, torch.finfo(scores.dtype).min)
    elif attend is not None:
        scores = scores + attend
    weights = torch.softmax(scores, dim=-1)  # each row sums to 1 over the keys
    return weights @ v  # (..., L, d_v)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(2, 4, 8)  # (batch, L=4 queries, d_k=8)
    k = torch.randn(2, 6, 8)  # (batch, S=6 keys, d_k=8)
    v = torch.randn(2, 6, 8)  # (batch, S=6 values, d_v=8)
    attend = torch.ones(4, 6, dtype=torch.bool).tril()  # query i sees keys 0..i

    ours = scaled_dot_product_attention(q, k, v, attend)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    print("output shape:", tuple(ours.shape))  # (2, 4, 8)
    print("matches F.scaled_dot_product_attention:", torch.allclose(ours, ref, atol=1e-6))
# --8<-- [end:demo]


# --8<-- [start:mask_conventions]
# Two boolean conventions live side by side in PyTorch:
#   nn.MultiheadAttention (key_padding_mask, attn_mask): True = "ignore this key"
#   F.scaled_dot_product_attention (attn_mask):          True = "this key takes part"
# Both accept any boolean tensor, so passing one where the other is expected raises
# nothing: the numbers are just wrong. Convert explicitly at the boundary.


def ignore_to_attend(ignore):
    """nn.MultiheadAttention-style mask (True = ignore) -> SDPA-style (True = attend)."""
    return ~ignore


def attend_to_ignore(attend):
    """SDPA-style mask (True = attend) -> nn.MultiheadAttention-style (True = ignore)."""
    return ~attend
# --8<-- [end:mask_conventions]


# --8<-- [start:mask_conventions_demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(1, 3, 8)  # (batch, L=3, d_k)
    k = torch.randn(1, 5, 8)  # (batch, S=5, d_k): the last 2 keys are padding
    v = torch.randn(1, 5, 8)
    padding = torch.tensor([[False, False, False, True, True]])  # key_padding_mask style

    # Ground truth that needs no mask at all: drop the padded keys.
    truth = F.scaled_dot_product_attention(q, k[:, :3], v[:, :3])
    attend = ignore_to_attend(padding)[:, None, :]  # (batch, 1, S): same for every query

    wrong = F.scaled_dot_product_attention(q, k, v, attn_mask=padding[:, None, :])
    right = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    ours = scaled_dot_product_attention(q, k, v, attend)
    print("padding mask passed as-is, matches truth:", torch.allclose(wrong, truth, atol=1e-6))
    print("max abs error of the wrong convention:", f"{(wrong - truth).abs().max():.3f}")
    same = torch.allclose(right, truth, atol=1e-6)
    print("converted with ignore_to_attend, matches truth:", same)
    print("ours matches truth:", torch.allclose(ours, truth, atol=1e-6))
    round_trip = attend_to_ignore(ignore_to_attend(padding))
    print("round trip is the identity:", torch.equal(round_trip, padding))
# --8<-- [end:mask_conventions_demo]
