"""Multi-head self-attention the fast way: one packed Q/K/V matmul and PyTorch's fused kernel.

Same parameters and numbers as torch.nn.MultiheadAttention, whose packed layout it uses.
"""

BLOCKS = {
    "demo": [
        "snippets/efficient_multi_head_attention.py:code",
        "snippets/efficient_multi_head_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F
from torch import nn


class EfficientSelfAttention(nn.Module):
    """Self-attention whose q, k and v come from ONE Linear(d_model, 3 * d_model): its rows are
    [W_q; W_k; W_v], each the h per-head matrices stacked, like nn.MultiheadAttention's in_proj."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.h, self.d_k = num_heads, d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)  # one matmul for every head and role
        self.out = nn.Linear(d_model, d_model)  # W^O
        self.dropout = dropout

    def forward(self, x, attend=None, is_causal=False):
        """x: (B, T, d_model); attend: optional boolean mask, True = may attend (SDPA's convention)."""
        b, t, d = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.h, self.d_k)  # (B, T, 3, h, d_k)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # three tensors of (B, h, T, d_k)
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attend, is_causal=is_causal,
            # SDPA applies dropout whenever dropout_p > 0, even in eval mode: switch it off there.
            dropout_p=self.dropout if self.training else 0.0,
        )  # (B, h, T, d_k)
        return self.out(heads.transpose(1, 2).reshape(b, t, d))  # (B, T, d_model)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads = 64, 8
    ours = EfficientSelfAttention(d_model, num_heads).eval()
    ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
    with torch.no_grad():  # the packed layouts are the same: copy them as they are
        ours.qkv.weight.copy_(ref.in_proj_weight)
        ours.qkv.bias.copy_(ref.in_proj_bias)
        ours.out.weight.copy_(ref.out_proj.weight)
        ours.out.bias.copy_(ref.out_proj.bias)

    x = torch.randn(4, 10, d_model)  # (batch, tokens, d_model)
    causal = torch.ones(10, 10, dtype=torch.bool).triu(1)  # MHA's convention: True = ignore
    expected, _ = ref(x, x, x, attn_mask=causal, need_weights=False)
    got = ours(x, is_causal=True)
    print("output shape:", tuple(got.shape))  # (4, 10, 64)
    print("matches nn.MultiheadAttention:", torch.allclose(got, expected, atol=1e-5))
# --8<-- [end:demo]
