"""Scaled dot-product attention written out, checked against PyTorch's kernel.

Also home of the two boolean mask conventions and the helpers that convert
between them.
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


def scaled_dot_product_attention(q, k, v, *, attend=None):
    """softmax(q k^T / sqrt(d_k)) v.

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v)
    attend: optional mask broadcastable to (..., L, S), keyword-only, either
      - boolean, True where a query may look at a key (the convention of
        F.scaled_dot_product_attention; nn.MultiheadAttention's boolean
        masks mean the opposite, True = ignore), or
      - float, added to the scores (0 = keep, -inf = drop); a float32
        mask with float16/bfloat16 q, which SDPA accepts, is added in
        float32, at the precision SDPA keeps it.
    float16/bfloat16 work as long as the scaled scores fit the dtype.
    Every query needs at least one key it may attend: a row with none
    gives NaN here (see the entry attention mask).
    """
    d_k = q.size(-1)
    # Without 1/sqrt(d_k) the dot products grow with d_k and the softmax
    # saturates. Scale q BEFORE the product: in float16, q @ k^T alone
    # overflows to inf once |q.k| exceeds float16's range (largest finite
    # value 65504), even where the scaled score would fit (and
    # F.scaled_dot_product_attention stays finite).
    q = q / math.sqrt(d_k)
    scores = q @ k.transpose(-2, -1)  # (..., L, S)
    if attend is not None and attend.dtype == torch.bool:
        # The dtype's most negative finite value: a literal like -1e9 makes
        # masked_fill raise in float16 (and adding it gives -inf).
        scores = scores.masked_fill(~attend, torch.finfo(scores.dtype).min)
    elif attend is not None:
        # A float32 mask with half q: add it in float32. Rounded to bfloat16
        # first, biases as large as ALiBi's move the weights by percents.
        wide = torch.promote_types(scores.dtype, attend.dtype)
        scores = scores.to(wide) + attend
    weights = torch.softmax(scores, dim=-1)  # each row sums to 1 over keys
    return weights.to(v.dtype) @ v  # (..., L, d_v)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(2, 4, 8)  # (batch, L=4 queries, d_k=8)
    k = torch.randn(2, 6, 8)  # (batch, S=6 keys, d_k=8)
    v = torch.randn(2, 6, 8)  # (batch, S=6 values, d_v=8)
    attend = torch.ones(4, 6, dtype=torch.bool).tril()  # query i: keys 0..i

    ours = scaled_dot_product_attention(q, k, v, attend=attend)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    print("output shape:", tuple(ours.shape))  # (2, 4, 8)
    same = torch.allclose(ours, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:demo]


# --8<-- [start:mask_conventions]
# Two boolean conventions live side by side in PyTorch:
#   nn.MultiheadAttention (key_padding_mask, attn_mask): True = "ignore this"
#   F.scaled_dot_product_attention (attn_mask):        True = "takes part"
# Both accept any boolean tensor, so passing one where the other is expected
# raises nothing: the numbers are just wrong. Convert explicitly at the
# boundary.


def ignore_to_attend(ignore):
    """nn.MultiheadAttention-style (True = ignore) -> SDPA (True = attend)."""
    return ~ignore


def attend_to_ignore(attend):
    """SDPA-style (True = attend) -> nn.MultiheadAttention (True = ignore)."""
    return ~attend
# --8<-- [end:mask_conventions]


# --8<-- [start:mask_conventions_demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(1, 3, 8)  # (batch, L=3, d_k)
    k = torch.randn(1, 5, 8)  # (batch, S=5, d_k): the last 2 keys are padding
    v = torch.randn(1, 5, 8)
    # key_padding_mask style: True = padding
    padding = torch.tensor([[False, False, False, True, True]])

    # Ground truth that needs no mask at all: drop the padded keys.
    truth = F.scaled_dot_product_attention(q, k[:, :3], v[:, :3])
    # (batch, 1, S): the same for every query
    attend = ignore_to_attend(padding)[:, None, :]

    wrong = F.scaled_dot_product_attention(
        q, k, v, attn_mask=padding[:, None, :]
    )
    right = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    ours = scaled_dot_product_attention(q, k, v, attend=attend)
    same = torch.allclose(wrong, truth, atol=1e-6)
    print("padding mask passed as-is, matches truth:", same)
    error = (wrong - truth).abs().max().item()
    print("max abs error of the wrong convention:", f"{error:.3f}")
    same = torch.allclose(right, truth, atol=1e-6)
    print("converted with ignore_to_attend, matches truth:", same)
    print("ours matches truth:", torch.allclose(ours, truth, atol=1e-6))
    round_trip = attend_to_ignore(ignore_to_attend(padding))
    print("round trip is the identity:", torch.equal(round_trip, padding))
# --8<-- [end:mask_conventions_demo]
