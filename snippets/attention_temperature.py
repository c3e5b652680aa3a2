"""Attention temperature: a score scale other than 1/sqrt(d_k).

Gemma 2 and 3 scale by query_pre_attn_scalar**-0.5; Llama 4 multiplies the
queries of its NoPE layers by a temperature that grows with the position
(attn_temperature_tuning, floor_scale, attn_scale); Scalable-Softmax
(arXiv 2501.19399) multiplies the logits of a row over n keys by s log n.
Each is one number per query in front of q k^T: scaling q first, SDPA's
`scale=` and a FlexAttention score_mod give the same result.
"""

BLOCKS = {
    "demo": [
        "snippets/attention_temperature.py:code",
        "snippets/attention_temperature.py:demo",
    ],
    "ssmax": [
        "snippets/attention_temperature.py:code",
        "snippets/attention_temperature.py:ssmax",
    ],
}

# --8<-- [start:code]
import math

import torch
import torch.nn.functional as F


def gemma_scale(query_pre_attn_scalar):
    """Gemma 2 and 3: the scores are multiplied by this, not 1/sqrt(d_k)."""
    return query_pre_attn_scalar ** -0.5


def llama4_temperature(positions, floor_scale=8192, attn_scale=0.1):
    """Llama 4's attn_temperature_tuning: the query at position p (from 0)
    is multiplied by log(floor((p + 1) / floor_scale) + 1) * attn_scale + 1.

    positions: (L,) integer tensor -> (L,) float64 tensor.
    """
    steps = torch.floor((positions.double() + 1) / floor_scale)
    return torch.log(steps + 1) * attn_scale + 1


def ssmax_temperature(n_keys, s):
    """Scalable-Softmax: the logits of a row over n keys times s * log(n).

    n_keys: (L,) tensor, the number of keys each query sees -> (L,).
    """
    return s * torch.log(n_keys.double())


def tempered_attention(q, k, v, temperature, *, scale=None, causal=False):
    """softmax(temperature * scale * q k^T) v, one temperature per query.

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v).
    temperature: a number or an (L,) tensor. scale defaults to
    1/sqrt(d_k). The temperature goes into q: SDPA's `scale` is one float
    for every query.
    """
    t = torch.as_tensor(temperature, dtype=q.dtype)
    if t.dim() == 1:
        t = t[:, None]  # (L, 1): row i of q times its own temperature
    return F.scaled_dot_product_attention(q * t, k, v, scale=scale,
                                          is_causal=causal)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import warnings

    from torch.nn.attention.flex_attention import flex_attention

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 1, 8, 128).unbind(0)  # (B, H, L, d_k)

    # Gemma 3 27B: head_dim 128, query_pre_attn_scalar 168
    scale = gemma_scale(168)
    print(f"Gemma 3 27B: scale {scale:.5f}, not 1/sqrt(128) = "
          f"{128 ** -0.5:.5f}")
    pre_scaled = F.scaled_dot_product_attention(q * scale, k, v, scale=1.0)
    by_sdpa = F.scaled_dot_product_attention(q, k, v, scale=scale)
    with warnings.catch_warnings():  # eager on a CPU: it says so, once
        warnings.filterwarnings("ignore", message="flex_attention called")
        # score_mod gets q.k times flex's own scale: 1.0, then ours
        by_flex = flex_attention(
            q, k, v, scale=1.0,
            score_mod=lambda score, b, h, q_idx, kv_idx: score * scale)
    print("q scaled first == SDPA scale=:",
          torch.allclose(pre_scaled, by_sdpa, atol=1e-6))
    print("SDPA scale= == flex score_mod:",
          torch.allclose(by_sdpa, by_flex, atol=1e-6))

    # Llama 4: one temperature per query position, 1 below 8191
    for p in (0, 8190, 8191, 65535, 1048575):
        tau = llama4_temperature(torch.tensor([p])).item()
        print(f"Llama 4 temperature at position {p:>7}: {tau:.4f}")

    # eight queries at positions 8188..8195 (the step is at 8191), here
    # over the same eight keys: the temperature per row goes into q
    tau = llama4_temperature(torch.arange(8188, 8196))
    ours = tempered_attention(q, k, v, tau.float())
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="flex_attention called")
        by_flex = flex_attention(
            q, k, v,
            score_mod=lambda score, b, h, q_idx, kv_idx:
                score * tau.float()[q_idx])
    print("per-query temperature in q == flex score_mod:",
          torch.allclose(ours, by_flex, atol=1e-6))
# --8<-- [end:demo]


# --8<-- [start:ssmax]
if __name__ == "__main__":
    # Nakanishi's example: one logit +3, the other n - 1 at -2
    s = 0.43
    print("   n  softmax  SSMax(s=0.43)")
    for n in (8, 64, 512, 4096, 32768):
        z = torch.full((n,), -2.0, dtype=torch.float64)
        z[-1] = 3.0
        plain = torch.softmax(z, dim=0)[-1].item()
        t = ssmax_temperature(torch.tensor([n]), s).item()
        scaled = torch.softmax(t * z, dim=0)[-1].item()
        print(f"{n:>5}  {plain:.4f}   {scaled:.4f}")

    # SSMax in causal attention: query i (from 0) sees n = i + 1 keys
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 6, 16, dtype=torch.float64).unbind(0)
    L = q.size(-2)
    t = ssmax_temperature(torch.arange(1, L + 1), s)
    ours = tempered_attention(q, k, v, t, causal=True)
    logits = q @ k.transpose(-2, -1) / 16**0.5  # (1, 2, L, L)
    future = torch.ones(L, L, dtype=torch.bool).triu(1)
    n = torch.arange(1, L + 1, dtype=torch.float64)[:, None]
    # the paper's form: n ** (s * z_i) / sum_j n ** (s * z_j)
    powers = (n ** (s * logits)).masked_fill(future, 0.0)
    direct = powers / powers.sum(-1, keepdim=True) @ v
    print("SSMax as a temperature in q == n^(s z) form:",
          torch.allclose(ours, direct))
# --8<-- [end:ssmax]
