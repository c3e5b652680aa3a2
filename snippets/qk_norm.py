"""QK-norm: normalise each head's queries and keys before the dot product.

Dehghani et al. 2023 (ViT-22B, arXiv 2302.05442) apply LayerNorm to q and
k; recent language models use RMSNorm. Either way, with learned gains g_q,
g_k and no bias, every attention logit is bounded by
sqrt(d_k) * max_i |g_q[i] g_k[i]|, however large the inputs grow; with
RoPE after the norm, by sqrt(d_k) * max|g_q| * max|g_k|.

Per head, over d_k, as here: Qwen3 and Gemma 3 (Hugging Face transformers,
Qwen3RMSNorm(head_dim), Gemma3RMSNorm(dim=head_dim)). OLMo 2 instead
normalises the whole projection, all heads together (Olmo2RMSNorm over
num_heads * head_dim): one head may then hold the whole norm, and the
bound grows to h * sqrt(d_k) * max|g_q g_k|.
"""

BLOCKS = {
    "demo": [
        "snippets/qk_norm.py:code",
        "snippets/qk_norm.py:demo",
    ],
    "logit_growth": [
        "snippets/qk_norm.py:code",
        "snippets/qk_norm.py:logit_growth",
    ],
}

# --8<-- [start:code]
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class QKNormSelfAttention(nn.Module):
    """Multi-head self-attention, q and k normalised per head.

    x: (B, T, d_model) -> (B, T, d_model). norm: "rms" (RMSNorm), "layer"
    (LayerNorm without bias) or None (no QK-norm). Each norm acts on the
    last dimension of (B, h, T, d_k): one head's d_k features at a time,
    with a learned gain of shape (d_k,), shared by all heads.
    """

    def __init__(self, d_model, num_heads, *, norm="rms", eps=1e-6):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.h, self.d_k = num_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_k = nn.Linear(d_model, d_model, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model, bias=False)
        if norm == "rms":
            make = partial(nn.RMSNorm, self.d_k, eps=eps)
        elif norm == "layer":
            make = partial(nn.LayerNorm, self.d_k, eps=eps, bias=False)
        elif norm is None:
            make = nn.Identity
        else:
            raise ValueError(f"norm must be 'rms', 'layer' or None: {norm!r}")
        self.q_norm, self.k_norm = make(), make()  # separate gains

    def split(self, x):  # (B, T, d_model) -> (B, h, T, d_k)
        return x.view(*x.shape[:2], self.h, self.d_k).transpose(1, 2)

    def qk(self, x):
        """Normalised q and k, (B, h, T, d_k) each."""
        q = self.q_norm(self.split(self.w_q(x)))
        k = self.k_norm(self.split(self.w_k(x)))
        return q, k

    def logits(self, x):
        """The scores before the softmax, (B, h, T, T)."""
        q, k = self.qk(x)
        return (q * self.d_k**-0.5) @ k.transpose(-2, -1)  # scale q first

    def forward(self, x, *, attend=None):
        """attend: optional boolean (T, T), True = may attend."""
        q, k = self.qk(x)
        v = self.split(self.w_v(x))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        return self.w_o(out.transpose(1, 2).reshape(x.shape))


def logit_bound(attn, *, rope=False, scale=None):
    """The largest |logit| a QK-normed layer can produce. scale: the
    model's score scale, 1/sqrt(d_k) unless given (Gemma 3 27B: 1/sqrt(168)
    with d_k = 128).

    RMSNorm: u = q / sqrt(mean(q^2) + eps), so |u|^2 < d_k; LayerNorm
    without bias: u = (q - mean) / sqrt(var + eps), |u|^2 < d_k too. Then
    |(g_q u) . (g_k w)| <= max|g_q g_k| |u| |w| < d_k max|g_q g_k|.
    Reached (up to eps) when q and k point along the coordinate where
    |g_q g_k| is largest. rope=True: RoPE rotates the normed q and k (as in
    Qwen3, Gemma 3) and mixes the two coordinates of a pair, so a
    large query gain on one can meet a large key gain on the other: the
    bound becomes d_k max|g_q| max|g_k| (times scale).
    """
    g_q, g_k = attn.q_norm.weight, attn.k_norm.weight
    if rope:
        gains = g_q.abs().max() * g_k.abs().max()
    else:
        gains = (g_q * g_k).abs().max()
    scale = attn.d_k**-0.5 if scale is None else scale
    return scale * attn.d_k * gains
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    attn = QKNormSelfAttention(32, 4)
    with torch.no_grad():  # gains as if learned
        attn.q_norm.weight.uniform_(0.5, 2.0)
        attn.k_norm.weight.uniform_(0.5, 2.0)
    x = torch.randn(2, 10, 32)

    # Against PyTorch: RMSNorm by hand, then F.scaled_dot_product_attention.
    def rms(t, g):
        return g * t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6)

    q = rms(attn.split(attn.w_q(x)), attn.q_norm.weight)
    k = rms(attn.split(attn.w_k(x)), attn.k_norm.weight)
    v = attn.split(attn.w_v(x))
    ref = F.scaled_dot_product_attention(q, k, v).transpose(1, 2)
    ref = attn.w_o(ref.reshape(x.shape))
    print("matches RMSNorm + F.scaled_dot_product_attention:",
          torch.allclose(attn(x), ref, atol=1e-5))

    bound = logit_bound(attn)
    with torch.no_grad():
        big = attn.logits(1000 * x).abs().max()
    print(f"bound sqrt(d_k) * max|g_q g_k|: {bound:.4f}")
    print(f"max |logit| with inputs x 1000: {big:.4f}")
    print("within the bound:", bool(big <= bound))
# --8<-- [end:demo]


# --8<-- [start:logit_growth]
if __name__ == "__main__":
    torch.manual_seed(0)
    plain = QKNormSelfAttention(64, 4, norm=None)
    normed = QKNormSelfAttention(64, 4, norm="rms")
    normed.load_state_dict(plain.state_dict(), strict=False)  # same W
    x = torch.randn(1, 16, 64)
    print(f"{'scale':>5} {'max|logit| plain':>17} {'qk-norm':>8} "
          f"{'top weight plain':>17} {'qk-norm':>8}")
    with torch.no_grad():
        for scale in (1, 2, 4, 8, 16, 32):
            # Larger activations, as when weights grow in training.
            lp, ln = plain.logits(scale * x), normed.logits(scale * x)
            # Each query's largest weight, averaged over the queries.
            wp = lp.softmax(-1).amax(-1).mean()
            wn = ln.softmax(-1).amax(-1).mean()
            print(f"{scale:>5} {lp.abs().max():>17.2f} "
                  f"{ln.abs().max():>8.2f} {wp:>17.4f} {wn:>8.4f}")
    print(f"qk-norm bound: {logit_bound(normed):.2f}")
# --8<-- [end:logit_growth]
