"""Multi-head attention with one fused Q/K/V projection, checked against
nn.MultiheadAttention."""

from snippets.scaled_dot_product_attention import scaled_dot_product_attention

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/multi_head_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Concat(head_1, ..., head_h) W^O,
    head_i = Attention(query W_i^Q, key W_i^K, value W_i^V).

    query: (B, L, d_model), key: (B, S, kdim), value: (B, S, vdim)
    -> (B, L, d_model)
    attend: optional mask broadcastable to (B, h, L, S), keyword-only,
    True = may attend (SDPA convention), or a float mask added to the
    scores. The scores come from scaled_dot_product_attention, which
    scales q first (no float16 overflow of q @ k^T).
    """

    def __init__(self, d_model, num_heads, kdim=None, vdim=None):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads "
                f"({num_heads})"
            )
        self.h = num_heads
        self.d_k = d_model // num_heads
        # One Linear per role holds all h heads. Its weight is W^T: rows
        # i*d_k .. (i+1)*d_k - 1 are head i's (W_i)^T.
        self.w_q = nn.Linear(d_model, d_model)
        # Keys and values may come from a sequence of another width
        # (cross-attention).
        self.w_k = nn.Linear(kdim or d_model, d_model)
        self.w_v = nn.Linear(vdim or d_model, d_model)
        # Output projection W^O: mixes what the h heads found into one
        # d_model vector.
        self.w_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        b, t, _ = x.shape  # (B, T, d_model)
        # view, then transpose: (B, T, h, d_k) -> (B, h, T, d_k)
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)

    def merge_heads(self, heads):
        b, _, t, _ = heads.shape  # (B, h, T, d_k)
        # Concatenate the heads: (B, h, T, d_k) -> (B, T, h * d_k). For
        # T > 1 and h > 1 the transposed tensor is not contiguous and
        # reshape copies (.view would raise); for T = 1 or h = 1 it is a
        # view.
        return heads.transpose(1, 2).reshape(b, t, self.h * self.d_k)

    def forward(self, query, key, value, *, attend=None):
        q = self.split_heads(self.w_q(query))  # (B, h, L, d_k)
        k = self.split_heads(self.w_k(key))  # (B, h, S, d_k)
        v = self.split_heads(self.w_v(value))  # (B, h, S, d_k)
        # (B, h, L, d_k)
        heads = scaled_dot_product_attention(q, k, v, attend=attend)
        return self.w_o(self.merge_heads(heads))  # (B, L, d_model)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads = 16, 4
    ours = MultiHeadAttention(d_model, num_heads)
    ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    # Copy our weights into PyTorch's packed layout: the rows of in_proj are
    # [W_q^T; W_k^T; W_v^T], our three Linear weights stacked.
    with torch.no_grad():
        w = [ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]
        b = [ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]
        ref.in_proj_weight.copy_(torch.cat(w))
        ref.in_proj_bias.copy_(torch.cat(b))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)

    x = torch.randn(2, 5, d_model)  # (batch, tokens, d_model): self-attention
    out = ours(x, x, x)
    expected, _ = ref(x, x, x, need_weights=False)
    print("output shape:", tuple(out.shape))  # (2, 5, 16)
    same = torch.allclose(out, expected, atol=1e-6)
    print("matches nn.MultiheadAttention:", same)
# --8<-- [end:demo]
