"""Luong's scores (dot, general, concat); why unscaled dot products saturate.

Luong, Pham and Manning 2015 (arXiv 1508.04025) score a decoder state h_t
against each source state h_s: dot h_t . h_s, general h_t W h_s, concat
v . tanh(W [h_t; h_s]). None of them divides by sqrt(d): that scale came
with the Transformer.
"""

BLOCKS = {
    "demo": [
        "snippets/multiplicative_attention.py:code",
        "snippets/multiplicative_attention.py:demo",
    ],
    "scaling": [
        "snippets/multiplicative_attention.py:scaling",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


class LuongScore(nn.Module):
    """Luong's global-attention scores, h_t: (B, L, d_t), h_s: (B, S, d_s)
    -> (B, L, S). Row vectors throughout:

      "dot":     h_t . h_s                        (needs d_t == d_s)
      "general": (h_t W) . h_s,      W: d_t x d_s
      "concat":  v . tanh([h_t; h_s] W_c),  W_c: (d_t + d_s) x d_attn
    """

    def __init__(self, d_t, d_s, *, kind, d_attn=None):
        super().__init__()
        if kind == "dot" and d_t != d_s:
            raise ValueError("dot needs d_t == d_s")
        if kind == "general":
            self.w = nn.Linear(d_t, d_s, bias=False)  # weight is W^T
        elif kind == "concat":
            self.w_c = nn.Linear(d_t + d_s, d_attn or d_s, bias=False)
            self.v = nn.Linear(d_attn or d_s, 1, bias=False)
        elif kind != "dot":
            raise ValueError(f"kind must be dot, general or concat: {kind!r}")
        self.kind = kind

    def forward(self, h_t, h_s):
        if self.kind == "concat":
            L, S = h_t.size(1), h_s.size(1)
            pairs = torch.cat([h_t[:, :, None, :].expand(-1, -1, S, -1),
                               h_s[:, None, :, :].expand(-1, L, -1, -1)],
                              dim=-1)  # (B, L, S, d_t + d_s)
            return self.v(torch.tanh(self.w_c(pairs))).squeeze(-1)
        q = self.w(h_t) if self.kind == "general" else h_t
        # Unscaled products: in float32 at least, as float16 overflows to
        # inf once |q.k| exceeds its range (largest finite value 65504).
        work = torch.promote_types(q.dtype, torch.float32)
        return q.to(work) @ h_s.to(work).transpose(-2, -1)


def luong_attention(score, h_t, h_s, *, attend=None):
    """Context c_t = sum_s a_t(s) h_s with a_t = softmax(score).

    -> context (B, L, d_s) in h_s's dtype, weights (B, L, S).
    attend: optional boolean, True = may attend; a query with no key at
    all gets zeros, not NaN.
    """
    scores = score(h_t, h_s)
    if attend is not None:
        scores = scores.masked_fill(~attend, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if attend is not None:  # all -inf rows are NaN: zero them
        weights = weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)
    return (weights @ h_s.to(weights.dtype)).to(h_s.dtype), weights
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    h_t = torch.randn(2, 3, 8)  # 3 decoder states
    h_s = torch.randn(2, 5, 8)  # 5 source states: keys and values

    dot = LuongScore(8, 8, kind="dot")
    context, _ = luong_attention(dot, h_t, h_s)
    ref = F.scaled_dot_product_attention(h_t, h_s, h_s, scale=1.0)
    print("dot = SDPA with scale=1.0:", torch.allclose(context, ref,
                                                      atol=1e-5))

    general = LuongScore(8, 8, kind="general")
    context, _ = luong_attention(general, h_t, h_s)
    q = general.w(h_t)  # h_t W
    ref = F.scaled_dot_product_attention(q, h_s, h_s, scale=1.0)
    print("general = SDPA on (h_t W, h_s), scale=1.0:",
          torch.allclose(context, ref, atol=1e-5))

    # SDPA's default scale 1/sqrt(d) is dot attention on h_t / sqrt(d).
    context, _ = luong_attention(dot, h_t / 8**0.5, h_s)
    ref = F.scaled_dot_product_attention(h_t, h_s, h_s)
    print("SDPA default = dot on h_t / sqrt(d):",
          torch.allclose(context, ref, atol=1e-5))

    concat = LuongScore(8, 8, kind="concat", d_attn=4)
    _, weights = luong_attention(concat, h_t, h_s)
    print("concat weights shape:", tuple(weights.shape))
# --8<-- [end:demo]


# --8<-- [start:scaling]
if __name__ == "__main__":
    import torch

    # q and k with independent N(0, 1) entries: E[q.k] = 0 and
    # Var(q.k) = d_k, so unscaled scores spread like sqrt(d_k).
    torch.manual_seed(0)
    n, S = 4096, 16
    print(f"{'d_k':>5} {'var q.k':>9} {'var q.k/sqrt(d_k)':>18} "
          f"{'top weight':>11} {'scaled':>7}")
    for d_k in (4, 16, 64, 256, 1024):
        q, k = torch.randn(n, d_k), torch.randn(n, d_k)
        dots = (q * k).sum(-1)
        # top softmax weight over S keys, unscaled and scaled
        keys = torch.randn(S, d_k)
        raw = q @ keys.T
        top = raw.softmax(-1).amax(-1).mean()
        top_scaled = (raw / d_k**0.5).softmax(-1).amax(-1).mean()
        print(f"{d_k:>5} {dots.var():>9.1f} {(dots / d_k**0.5).var():>18.3f} "
              f"{top:>11.3f} {top_scaled:>7.3f}")
# --8<-- [end:scaling]
