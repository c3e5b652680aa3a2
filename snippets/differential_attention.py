"""Differential attention: the difference of two softmax attention maps.

Ye et al. 2024, "Differential Transformer" (arXiv 2410.05258):
(softmax(Q1 K1^T / sqrt(d)) - lambda softmax(Q2 K2^T / sqrt(d))) V, with
lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, then each head is
normalised on its own and scaled by (1 - lambda_init).
"""

BLOCKS = {
    "demo": [
        "snippets/differential_attention.py:code",
        "snippets/differential_attention.py:demo",
    ],
    "module": [
        "snippets/differential_attention.py:code",
        "snippets/differential_attention.py:module",
        "snippets/differential_attention.py:module_demo",
    ],
}

# --8<-- [start:code]
import math

import torch


def lambda_init(layer):
    """0.8 - 0.6 exp(-0.3 (layer - 1)) for layer = 1, 2, ..., L."""
    if layer < 1:
        raise ValueError("layers are numbered from 1")
    return 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))


def differential_attention(q1, k1, q2, k2, v, lam, *, attend=None):
    """(softmax(q1 k1^T / sqrt(d)) - lam softmax(q2 k2^T / sqrt(d))) v.

    q1, q2: (..., L, d), k1, k2: (..., S, d), v: (..., S, 2d)
    -> (..., L, 2d). lam: a number or a 0-d tensor. attend: optional
    boolean mask broadcastable to (..., L, S), True = may attend; a query
    with no key gets zeros. Both maps use 1/sqrt(d), d one q's width.
    """
    scale = q1.size(-1) ** -0.5

    def softmax_map(q, k):  # (..., L, S), q scaled before the product
        scores = (q * scale) @ k.transpose(-2, -1)
        if attend is None:
            return torch.softmax(scores, dim=-1)
        scores = scores.masked_fill(~attend, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # all -inf rows: NaN
        return weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)

    # Rows of the difference sum to 1 - lam; entries may be negative.
    return (softmax_map(q1, k1) - lam * softmax_map(q2, k2)) @ v
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, h, T, d = 2, 3, 6, 4
    q1, k1, q2, k2 = torch.randn(4, B, h, T, d).unbind(0)
    v = torch.randn(B, h, T, 2 * d)
    lam = torch.tensor(lambda_init(1))  # 0.2 in the first layer
    attend = torch.ones(T, T, dtype=torch.bool).tril()

    out = differential_attention(q1, k1, q2, k2, v, lam, attend=attend)
    # (A1 - lam A2) V = A1 V - lam A2 V: two ordinary SDPA calls.
    ref = (F.scaled_dot_product_attention(q1, k1, v, attn_mask=attend)
           - lam * F.scaled_dot_product_attention(q2, k2, v,
                                                  attn_mask=attend))
    print("equals SDPA(q1, k1, v) - lambda SDPA(q2, k2, v):",
          torch.allclose(out, ref, atol=1e-6))

    # Values of 1 give each row's total weight: 1 - lambda.
    total = differential_attention(q1, k1, q2, k2, torch.ones(B, h, T, 1),
                                   lam, attend=attend)
    print(f"rows sum to 1 - lambda = {1 - lam:.1f}:",
          torch.allclose(total, 1 - lam))
    for layer in (1, 2, 4, 8, 16, 32):
        print(f"layer {layer:>2}: lambda_init = {lambda_init(layer):.4f}")
# --8<-- [end:demo]


# --8<-- [start:module]
from torch import nn


class MultiHeadDifferentialAttention(nn.Module):
    """x: (B, T, d_model) -> (B, T, d_model).

    h heads; each has two (q, k) pairs of width d = d_model / (2h) and a
    value of width 2d, so the projections keep their usual sizes. layer:
    this layer's number, 1..L, for lambda_init. lambda is one learned
    number per layer, shared by its heads.
    """

    def __init__(self, d_model, num_heads, *, layer, eps=1e-5):
        super().__init__()
        if d_model % (2 * num_heads):
            raise ValueError("2 * num_heads must divide d_model")
        self.h, self.d = num_heads, d_model // (2 * num_heads)
        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_k = nn.Linear(d_model, d_model, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model, bias=False)
        self.lambda_init = lambda_init(layer)
        # lambda's re-parameterisation; N(0, 0.1^2) as in the authors' code
        self.lambda_q1, self.lambda_k1, self.lambda_q2, self.lambda_k2 = (
            nn.Parameter(0.1 * torch.randn(self.d)) for _ in range(4))
        # Each head normalised on its own, over its 2d channels.
        self.norm = nn.RMSNorm(2 * self.d, eps=eps)

    def lam(self):
        return (torch.exp(self.lambda_q1 @ self.lambda_k1)
                - torch.exp(self.lambda_q2 @ self.lambda_k2)
                + self.lambda_init)

    def forward(self, x, *, attend=None):
        """attend: optional boolean (T, T), True = may attend."""
        B, T, _ = x.shape
        # 2h query/key maps of width d; map 2i and 2i + 1 form head i.
        q = self.w_q(x).view(B, T, 2 * self.h, self.d).transpose(1, 2)
        k = self.w_k(x).view(B, T, 2 * self.h, self.d).transpose(1, 2)
        v = self.w_v(x).view(B, T, self.h, 2 * self.d).transpose(1, 2)
        heads = differential_attention(q[:, 0::2], k[:, 0::2], q[:, 1::2],
                                       k[:, 1::2], v, self.lam(),
                                       attend=attend)  # (B, h, T, 2d)
        heads = self.norm(heads) * (1 - self.lambda_init)
        return self.w_o(heads.transpose(1, 2).reshape(B, T, -1))
# --8<-- [end:module]


# --8<-- [start:module_demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    attn = MultiHeadDifferentialAttention(32, 2, layer=3)  # d = 8
    x = torch.randn(2, 5, 32)
    attend = torch.ones(5, 5, dtype=torch.bool).tril()
    out = attn(x, attend=attend)
    print("output shape:", tuple(out.shape))
    print(f"lambda_init (layer 3): {attn.lambda_init:.4f}, "
          f"lambda: {attn.lam().item():.4f}")

    # The same layer from SDPA calls, all 2h maps at once, and RMSNorm
    # written out: x / sqrt(mean(x^2) + eps) * gain.
    q = attn.w_q(x).view(2, 5, 4, 8).transpose(1, 2)  # (B, 2h, T, d)
    k = attn.w_k(x).view(2, 5, 4, 8).transpose(1, 2)
    v = attn.w_v(x).view(2, 5, 2, 16).transpose(1, 2)  # (B, h, T, 2d)
    v2 = v.repeat_interleave(2, dim=1)  # map 2i and 2i + 1 share value i
    maps = F.scaled_dot_product_attention(q, k, v2, attn_mask=attend)
    heads = maps[:, 0::2] - attn.lam() * maps[:, 1::2]
    heads = heads * torch.rsqrt(heads.pow(2).mean(-1, keepdim=True) + 1e-5)
    heads = heads * attn.norm.weight * (1 - attn.lambda_init)
    ref = attn.w_o(heads.transpose(1, 2).reshape(2, 5, 32))
    print("equals SDPA + RMSNorm written out:",
          torch.allclose(out, ref, atol=1e-5))
# --8<-- [end:module_demo]
