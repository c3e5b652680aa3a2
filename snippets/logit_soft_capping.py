"""Logit soft-capping: cap * tanh(score / cap) before the softmax.

Gemma 2 (arXiv 2408.00118) caps attention scores at 50.0 and its final
logits at 30.0. The cap bounds every score in (-cap, cap) and keeps their
order; it does not stop q.k from overflowing before it is applied, and
it flattens the gradient of scores much larger than the cap.
"""

BLOCKS = {
    "demo": [
        "snippets/logit_soft_capping.py:code",
        "snippets/logit_soft_capping.py:demo",
    ],
    "half_precision": [
        "snippets/logit_soft_capping.py:code",
        "snippets/logit_soft_capping.py:half_precision",
    ],
}

# --8<-- [start:code]
import torch


def soft_cap(x, cap):
    """cap * tanh(x / cap): about x for |x| << cap, never beyond +-cap."""
    return cap * torch.tanh(x / cap)


def soft_capped_attention(q, k, v, *, cap, attend=None, scale=None):
    """softmax(soft_cap(q k^T * scale, cap)) v.

    q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., L, d_v)
    in v's dtype. scale defaults to 1/sqrt(d_k). attend: optional boolean
    mask broadcastable to (..., L, S), True = may attend.
    """
    # Scores in float32 at least: in float16, q @ k^T overflows to inf
    # past float16's range (largest finite value 65504) before any cap
    # could act on it.
    work = torch.promote_types(q.dtype, torch.float32)
    scale = q.size(-1) ** -0.5 if scale is None else scale
    scores = (q.to(work) * scale) @ k.to(work).transpose(-2, -1)
    scores = soft_cap(scores, cap)
    if attend is not None:
        # Mask AFTER the cap: a capped -inf is -cap, not -inf, and the
        # masked key would keep a weight of about exp(-2 cap).
        scores = scores.masked_fill(~attend, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if attend is not None:  # a query with no key at all: zeros, not NaN
        weights = weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)
    return (weights @ v.to(work)).to(v.dtype)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    cap = 50.0  # Gemma 2's attention cap
    q, k, v = torch.randn(3, 1, 2, 16, 8).unbind(0)
    q = 40 * q  # scores of several hundred: the cap is active

    # The same cap as a FlexAttention score_mod: flex_attention calls it
    # on every score after the scale, so pass it as
    # flex_attention(q, k, v, score_mod=capped_causal). Here it is
    # applied to all scores at once; the tests run flex_attention itself.
    def capped_causal(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx >= kv_idx, soft_cap(score, cap),
                           float("-inf"))

    attend = torch.ones(16, 16, dtype=torch.bool).tril()
    ours = soft_capped_attention(q, k, v, cap=cap, attend=attend)
    raw = q @ k.transpose(-2, -1) / 8**0.5  # (1, 2, 16, 16), scaled
    i = torch.arange(16)
    modded = capped_causal(raw, 0, 0, i[:, None], i[None, :])
    by_score_mod = torch.softmax(modded, dim=-1) @ v
    print("matches softmax(score_mod(scores)) V:",
          torch.allclose(ours, by_score_mod, atol=1e-5))

    capped = soft_cap(raw, cap)
    print(f"max |score| before the cap: {raw.abs().max():.1f}")
    print(f"max |score| after the cap:  {capped.abs().max():.1f}")
    # tanh is increasing: the order is kept (in float32, scores far above
    # the cap can round to the same capped value; not here)
    same = torch.equal(raw.argsort(-1), capped.argsort(-1))
    print("order of the scores kept:", same)

    # d cap*tanh(s/cap) / ds = 1 - tanh(s/cap)^2: it vanishes for s >> cap
    s = torch.tensor([0.5, 1.0, 2.0, 4.0]) * cap
    s.requires_grad_()
    soft_cap(s, cap).sum().backward()
    for ratio, grad in zip((s / cap).tolist(), s.grad.tolist()):
        print(f"score = {ratio:.1f} cap: gradient {grad:.4f}")
# --8<-- [end:demo]


# --8<-- [start:half_precision]
if __name__ == "__main__":
    import math

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 1, 8, 64).unbind(0)
    q16, k16, v16 = (60 * q).half(), (60 * k).half(), v.half()

    # What the cap does NOT fix: q.k overflows before it can be capped.
    print("float16 q @ k^T has inf:",
          bool((q16 @ k16.transpose(-2, -1)).isinf().any()))
    out = soft_capped_attention(q16, k16, v16, cap=50.0)
    print("scores in float32, capped: output finite:",
          bool(out.isfinite().all()), out.dtype)

    # What it does fix: exp(score) <= exp(cap), so a softmax without the
    # max-subtraction cannot overflow -- in float32. Not in float16 with
    # a cap of 50: exp overflows float16 above log(65504) = 11.09.
    cap = torch.tensor(50.0)
    print("exp(50) finite in float32:", bool(cap.exp().isfinite()),
          "in float16:", bool(cap.half().exp().isfinite()))
    S = 8  # keys: the softmax denominator is at most S * exp(cap)
    print(f"largest cap whose S * exp(cap) fits float16, S = {S}: "
          f"{math.log(65504 / S):.2f}")
# --8<-- [end:half_precision]
