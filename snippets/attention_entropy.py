"""Attention entropy: H = -sum_j a_j log a_j of each query's weights.

0 for a one-hot row, log S for a uniform row over S keys; averaged over
the queries of one head, a per-head diagnostic. Zhai et al. 2023 (arXiv
2303.06296) call pathologically low entropy "entropy collapse". With
every logit in [-c, c] (QK-norm: c = sqrt(d_k) max|g_q g_k|; soft-capping:
c = cap), the entropy cannot fall below entropy_floor(c, S), the entropy
of k logits at +c and S - k at -c for the worst k.
"""

BLOCKS = {
    "demo": [
        "snippets/attention_entropy.py:code",
        "snippets/attention_entropy.py:demo",
    ],
    "floors": [
        "snippets/qk_norm.py:code",
        "snippets/logit_soft_capping.py:code",
        "snippets/attention_entropy.py:code",
        "snippets/attention_entropy.py:floors",
    ],
}

# --8<-- [start:code]
import math

import torch
import torch.nn.functional as F


def attention_entropy(weights):
    """-sum_j a_j log a_j over the last axis: (..., L, S) -> (..., L).

    A weight of 0 (a masked key) adds 0, the limit of a log a as a -> 0.
    In float32 at least: a half-precision sum over many keys drifts.
    """
    w = weights.to(torch.promote_types(weights.dtype, torch.float32))
    logs = torch.where(w > 0, w.log(), 0.0)
    return 0.0 - (w * logs).sum(-1)  # 0.0 -: no -0.0 for one-hot


def entropy_from_logits(scores):
    """The same entropy from the scores, without forming log(0):
    H = logsumexp(z) - sum_j a_j z_j. scores: (..., L, S), -inf = masked.
    In float32 at least, and shifted by the row maximum first: the two
    terms are large and nearly equal when the scores are large.
    """
    z = scores.to(torch.promote_types(scores.dtype, torch.float32))
    top = z.amax(-1, keepdim=True)
    z = z - torch.where(top.isfinite(), top, 0.0)  # (..., L, S), max 0
    weights = z.softmax(-1)
    finite = torch.where(z.isfinite(), z, 0.0)
    h = z.logsumexp(-1) - (weights * finite).sum(-1)
    return h.clamp_min(0.0)  # rounding can leave -1e-7 where H = 0


def sdpa_weights(q, k, *, attend=None, scale=None):
    """The weights F.scaled_dot_product_attention uses, read back through
    its output: with v = the identity (S x S), softmax(...) @ I = A.
    q: (..., L, d_k), k: (..., S, d_k) -> (..., L, S)."""
    eye = torch.eye(k.size(-2), dtype=q.dtype, device=q.device)
    eye = eye.expand(*k.shape[:-1], -1)  # (..., S, S), on q's device
    return F.scaled_dot_product_attention(q, k, eye, attn_mask=attend,
                                          scale=scale)


def entropy_floor(c, num_keys):
    """The least entropy of a softmax over num_keys logits in [-c, c].

    Along any one logit the entropy is concave in that key's weight, so
    the minimum sits at a corner: k logits at +c, the rest at -c. With
    Z = k e^{2c} + S - k: H_k = log Z - 2c k e^{2c} / Z; take the least k.
    """
    s, big = num_keys, math.exp(2 * c)
    return min(math.log(k * big + s - k) - 2 * c * k * big / (k * big + s - k)
               for k in range(1, s + 1))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    S = 8
    uniform = torch.full((S,), 1 / S)
    one_hot = F.one_hot(torch.tensor(3), S).float()
    print(f"uniform over {S} keys: {attention_entropy(uniform):.4f}"
          f" = log {S} = {math.log(S):.4f}")
    print(f"one-hot: {attention_entropy(one_hot):.4f}")

    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 6, 16), torch.randn(2, 4, 6, 16)  # (B,h,T,d_k)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    scores = (q / 4) @ k.transpose(-2, -1)  # 1/sqrt(d_k) = 1/4
    direct = entropy_from_logits(scores.masked_fill(~causal, -math.inf))
    from_sdpa = attention_entropy(sdpa_weights(q, k, attend=causal))
    print("entropy of SDPA's weights = the direct formula:",
          torch.allclose(from_sdpa, direct, atol=1e-5))
    print("query 1 sees one key, entropy 0:",
          bool(direct[..., 0].abs().max() < 1e-6))

    # Per head: the mean over queries and the batch, one number each.
    per_head = from_sdpa.mean(dim=(0, 2))  # (h,)
    print("mean entropy per head:",
          " ".join(f"{e:.3f}" for e in per_head.tolist()))

    # A larger logit scale (a lower temperature) lowers every row's entropy.
    print("scale  mean entropy")
    for t in (0.25, 0.5, 1, 2, 4, 8):
        h = entropy_from_logits(t * scores[..., 1:, :].masked_fill(
            ~causal[1:], -math.inf)).mean()
        print(f"{t:>5} {h:>13.4f}")
# --8<-- [end:demo]


# --8<-- [start:floors]
if __name__ == "__main__":
    # QK-norm and soft-capping bound every logit, so the entropy too.
    torch.manual_seed(0)
    T = 32
    attn = QKNormSelfAttention(64, 4)  # d_k = 16, unit gains
    x = torch.randn(1, T, 64)
    cap = 5.0
    print(f"{'scale':>7} {'plain':>7} {'qk-norm':>8} {'soft-cap':>9}")
    with torch.no_grad():
        c_norm = float(logit_bound(attn))  # sqrt(16) * 1 = 4
        for s in (1, 10, 100, 1000):
            plain = QKNormSelfAttention(64, 4, norm=None)
            plain.load_state_dict(attn.state_dict(), strict=False)
            z_plain = plain.logits(s * x)
            z_norm = attn.logits(s * x)
            z_cap = soft_cap(z_plain, cap)
            print(f"{s:>7} {entropy_from_logits(z_plain).min():>7.4f} "
                  f"{entropy_from_logits(z_norm).min():>8.4f} "
                  f"{entropy_from_logits(z_cap).min():>9.4f}")
    print(f"floor, c = {c_norm:.0f}: {entropy_floor(c_norm, T):.4f}"
          f"   c = {cap:.0f}: {entropy_floor(cap, T):.4f}")
# --8<-- [end:floors]
