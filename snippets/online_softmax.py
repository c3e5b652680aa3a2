"""Online softmax: attention over parts of the keys, merged by log-sum-exp.

Each part of the keys gives a partial output and the log-sum-exp (lse) of
its scores; the parts can be folded in one after another with a running
maximum and sum (Milakov and Gimelshein 2018), or computed apart and merged
(split-KV decoding, Flash-Decoding, cascade attention). Both give exactly
softmax(q k^T / sqrt(d_k) + M) v.
"""

BLOCKS = {
    "demo": [
        "snippets/online_softmax.py:code",
        "snippets/online_softmax.py:demo",
    ],
    "flex": [
        "snippets/online_softmax.py:code",
        "snippets/online_softmax.py:flex",
    ],
}

# --8<-- [start:code]
import math

import torch


def scores(q, k, allowed=None):
    """Scaled scores q k^T / sqrt(d_k), -inf where allowed is False.
    q: (..., L, d_k), k: (..., S, d_k), allowed: bool, broadcasts to
    (..., L, S) -> (..., L, S)."""
    s = (q * q.size(-1) ** -0.5) @ k.transpose(-2, -1)
    if allowed is not None:
        s = s.masked_fill(~allowed, -math.inf)
    return s


def attend_part(q, k, v, allowed=None):
    """Attention of q over one part of the keys -> (out, lse).
    out: (..., L, d_v), softmax-weighted within the part; lse: (..., L),
    the log of the part's sum of exp(scores). A query that sees no key
    of the part gets out = 0 and lse = -inf: weight 0 in any merge.
    Half inputs are computed in float32, as kernels do: out and lse are
    float32 then, ready to merge; cast the merged out back."""
    work = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    s = scores(q, k, allowed)  # (..., L, S_part)
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(m == -math.inf, 0.0, m)  # no key: subtract 0, not -inf
    p = torch.exp(s - m)  # (..., L, S_part); 0 where masked
    total = p.sum(dim=-1, keepdim=True)
    out = (p @ v) / torch.where(total == 0, 1.0, total)
    return out, (m + torch.log(total)).squeeze(-1)


def merge(outs, lses):
    """Merge partial results: outs (P, ..., L, d_v), lses (P, ..., L) for
    P parts -> (out, lse) of attention over all their keys together."""
    lse = torch.logsumexp(lses, dim=0)  # (..., L); -inf if no key at all
    weight = torch.exp(lses - torch.where(lse == -math.inf, 0.0, lse))
    return (weight[..., None] * outs).sum(dim=0), lse


def online_attention(q, k, v, allowed, *, cuts):
    """The same, one part after another: a running maximum m, sum l and
    output acc per query, rescaled when m grows. cuts: the increasing key
    positions where one part ends and the next begins, e.g. [3, 7]."""
    out_dtype = q.dtype  # statistics in float32 even for half inputs:
    work = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    like = dict(dtype=work, device=q.device)
    m = torch.full(q.shape[:-1], -math.inf, **like)  # (..., L)
    l = torch.zeros(q.shape[:-1], **like)  # (..., L)
    acc = torch.zeros(*q.shape[:-1], v.size(-1), **like)  # (..., L, d_v)
    bounds = [0, *cuts, k.size(-2)]
    for start, stop in zip(bounds, bounds[1:]):
        s = scores(q, k[..., start:stop, :], allowed[..., start:stop])
        m_new = torch.maximum(m, s.amax(dim=-1))
        # While no key has been visible, m_new is -inf: subtract 0.
        shift = torch.where(m_new == -math.inf, 0.0, m_new)
        p = torch.exp(s - shift[..., None])  # (..., L, stop - start)
        alpha = torch.exp(m - shift)  # rescales what came before
        l = alpha * l + p.sum(dim=-1)
        acc = alpha[..., None] * acc + p @ v[..., start:stop, :]
        m = m_new
    lse = torch.where(l == 0, -math.inf, m + torch.log(l))  # float32+
    out = acc / torch.where(l == 0, 1.0, l)[..., None]
    return out.to(out_dtype), lse
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(2, 4, 6, 16)  # (B, H, L, d_k): 6 queries
    k, v = torch.randn(2, 2, 4, 10, 16).unbind(0)  # (B, H, S, d_k): 10
    # Left padding: keys 0..2 are padding, so the first part is empty.
    allowed = torch.ones(6, 10, dtype=torch.bool)
    allowed[:, :3] = False  # (L, S): True = may attend
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)

    cuts = [3, 7]  # parts: keys 0..2, 3..6, 7..9
    bounds = [0, *cuts, 10]
    parts = [attend_part(q, k[..., a:b, :], v[..., a:b, :],
                         allowed[:, a:b]) for a, b in zip(bounds, bounds[1:])]
    outs = torch.stack([out for out, _ in parts])  # (3, B, H, L, d_v)
    lses = torch.stack([lse for _, lse in parts])  # (3, B, H, L)
    print("lse of the padding part:", lses[0].unique().tolist())
    out, lse = merge(outs, lses)
    print("merged parts equal F.scaled_dot_product_attention:",
          torch.allclose(out, ref, atol=1e-5))
    full = torch.logsumexp(scores(q, k, allowed), dim=-1)
    print("merged lse equals logsumexp of the scores:",
          torch.allclose(lse, full, atol=1e-5))
    run_out, run_lse = online_attention(q, k, v, allowed, cuts=cuts)
    print("running max and sum equal it too:",
          torch.allclose(run_out, ref, atol=1e-5)
          and torch.allclose(run_lse, full, atol=1e-5))
# --8<-- [end:demo]


# --8<-- [start:flex]
if __name__ == "__main__":
    import warnings

    import torch.nn.functional as F
    from torch.nn.attention.flex_attention import AuxRequest, flex_attention

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 8, 16).unbind(0)  # (B, H, T, d_k)
    with warnings.catch_warnings():  # eager on a CPU: warns it is slow
        warnings.simplefilter("ignore")
        halves = [flex_attention(q, k[..., a:a + 4, :], v[..., a:a + 4, :],
                                 return_aux=AuxRequest(lse=True))
                  for a in (0, 4)]
    outs = torch.stack([out for out, _ in halves])  # (2, B, H, T, d_v)
    lses = torch.stack([aux.lse for _, aux in halves])  # (2, B, H, T)
    print("flex lse equals logsumexp of the scores:",
          torch.allclose(lses[0], torch.logsumexp(scores(q, k[..., :4, :]),
                                                  dim=-1), atol=1e-5))
    out, _ = merge(outs, lses)
    print("two flex halves, merged, equal SDPA:",
          torch.allclose(out, F.scaled_dot_product_attention(q, k, v),
                         atol=1e-5))
# --8<-- [end:flex]
