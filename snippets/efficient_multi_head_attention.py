"""Multi-head self-attention the fast way: one packed Q/K/V matmul and
PyTorch's fused kernel.

Same parameters and numbers as torch.nn.MultiheadAttention, whose packed
layout it uses.
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
    """Self-attention whose q, k and v come from ONE Linear(d_model,
    3 * d_model). Its weight (3 * d_model, d_model) stacks W_q^T, W_k^T and
    W_v^T by rows, each of them the h per-head (W_i)^T stacked, like
    nn.MultiheadAttention's in_proj_weight.

    x: (B, T, d_model) -> (B, T, d_model). Keyword-only: attend, an
    optional mask broadcastable to (B, h, T, T), boolean True = may attend
    (SDPA's convention) or float added to the scores; is_causal=True for a
    causal mask. Not both: SDPA's backends disagree on that combination.
    """

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads "
                f"({num_heads})"
            )
        self.h, self.d_k = num_heads, d_model // num_heads
        # one matmul for every head and role
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)  # W^O
        self.dropout = dropout

    def forward(self, x, *, attend=None, is_causal=False):
        if attend is not None and is_causal:
            raise ValueError(
                "pass either attend or is_causal=True, not both: combine "
                "the causal mask into attend instead"
            )
        b, t, d = x.shape
        # (B, T, 3, h, d_k)
        qkv = self.qkv(x).view(b, t, 3, self.h, self.d_k)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # three tensors of (B, h, T, d_k)
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attend, is_causal=is_causal,
            # SDPA applies dropout whenever dropout_p > 0, even in eval
            # mode: switch it off there.
            dropout_p=self.dropout if self.training else 0.0,
        )  # (B, h, T, d_k)
        # (B, T, d_model)
        return self.out(heads.transpose(1, 2).reshape(b, t, d))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads = 64, 8
    ours = EfficientSelfAttention(d_model, num_heads).eval()
    ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
    with torch.no_grad():  # the packed layouts are the same: copy as they are
        ours.qkv.weight.copy_(ref.in_proj_weight)
        ours.qkv.bias.copy_(ref.in_proj_bias)
        ours.out.weight.copy_(ref.out_proj.weight)
        ours.out.bias.copy_(ref.out_proj.bias)

    x = torch.randn(4, 10, d_model)  # (batch, tokens, d_model)
    # MHA's convention: True = ignore
    causal = torch.ones(10, 10, dtype=torch.bool).triu(1)
    expected, _ = ref(x, x, x, attn_mask=causal, need_weights=False)
    got = ours(x, is_causal=True)
    print("output shape:", tuple(got.shape))  # (4, 10, 64)
    same = torch.allclose(got, expected, atol=1e-5)
    print("matches nn.MultiheadAttention:", same)
# --8<-- [end:demo]
