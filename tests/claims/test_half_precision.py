"""Claims about float16 and bfloat16 (torch 2.13.0, CPU)."""

import math

import pytest
import torch
import torch.nn.functional as F

from tests.claims import claim


def large_logits():
    """q, k, v in float32, d_k = 64: q.k = 40 * 40 * 64 = 102400 for the aligned pair, above
    float16's largest finite value 65504; the scaled score 102400 / 8 = 12800 fits."""
    gen = torch.Generator().manual_seed(0)
    q = 40 * (torch.randint(0, 2, (1, 1, 3, 64), generator=gen) * 2 - 1).float()
    k = q.flip(-2)  # key 2 - i is aligned with query i
    v = torch.randn(1, 1, 3, 64, generator=gen)
    return q, k, v


@claim("half-matmul-overflows")
def test_float16_product_overflows_before_the_scale():
    """65504 is float16's largest finite value; a product past float16's range (from 65520
    up: 65504 < x < 65520 rounds to 65504) is inf, and dividing afterwards cannot undo it."""
    assert torch.finfo(torch.float16).max == 65504
    # 63 * 1000 + one more term: the exact dot products 65518 and 65520
    ones = torch.ones(1, 64, dtype=torch.float16)
    for last, expected in [(2518.0, 65504.0), (2520.0, math.inf)]:
        key = torch.full((1, 64), 1000.0, dtype=torch.float16)
        key[0, -1] = last
        assert (ones.float() @ key.float().T).item() == 63000 + last  # exact in float32
        assert (ones @ key.T).item() == expected
    q, k, _ = large_logits()
    q, k = q.half(), k.half()
    product = q @ k.transpose(-2, -1)
    assert product.isinf().any()
    scaled = product / math.sqrt(64)
    assert scaled.isinf().any()  # dividing afterwards does not help
    assert ((q / math.sqrt(64)) @ k.transpose(-2, -1)).isfinite().all()  # the scaled score fits
    assert (q.float() @ k.float().transpose(-2, -1)).abs().max() == 102400


@claim("sdpa-half-no-overflow")
def test_sdpa_float16_stays_finite():
    q, k, v = large_logits()
    out = F.scaled_dot_product_attention(q.half(), k.half(), v.half())
    assert out.dtype == torch.float16 and out.isfinite().all()
    assert torch.allclose(out.float(), F.scaled_dot_product_attention(q, k, v), atol=1e-2)


@claim("half-masked-fill-raises")
def test_minus_1e9_in_float16():
    scores = torch.zeros(2, 3, dtype=torch.float16)
    mask = torch.tensor([[False, True, True], [False, False, True]])
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
        scores.masked_fill(mask, -1e9)
    assert (scores + -1e9).isneginf().all()
    assert torch.tensor(-1e9).half().isneginf()


@claim("bfloat16-neg-1e9")
def test_minus_1e9_in_bfloat16():
    assert torch.tensor(-1e9).to(torch.bfloat16).item() == -998244352
    filled = torch.zeros(2, dtype=torch.bfloat16).masked_fill(torch.tensor([True, False]), -1e9)
    assert filled[0].item() == -998244352  # no error in bfloat16


@claim("half-finfo-min-mask")
def test_finfo_min_mask_in_half_precision():
    gen = torch.Generator().manual_seed(1)
    padding = torch.tensor([False, False, True, True])
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        scores = torch.randn(3, 4, generator=gen).to(dtype)
        weights = torch.softmax(scores.masked_fill(padding, torch.finfo(dtype).min), dim=-1)
        assert weights.isfinite().all()
        assert (weights[:, 2:] == 0).all()
        assert torch.allclose(weights.float().sum(-1), torch.ones(3), atol=1e-2)


@claim("half-finfo-min-added-overflows")
def test_finfo_min_added_to_a_score_overflows_in_float16():
    """finfo.min is safe to fill with, not to add: plus a negative score, or plus a second such
    mask (a causal mask and a padding mask summed), it leaves float16's range and becomes -inf."""
    low = torch.finfo(torch.float16).min
    scores = torch.tensor([-20.0, -1.0, 3.0], dtype=torch.float16)
    added = scores + low
    assert added[0].isneginf() and added[2].isfinite()
    assert (torch.tensor(low, dtype=torch.float16) + low).isneginf()
    filled = scores.masked_fill(torch.tensor([True, True, False]), low)
    assert filled.isfinite().all() and (filled[:2] == low).all()


@claim("rms-norm-half-upcasts")
def test_rms_norm_in_float16_computes_in_float32():
    """On the CPU, nn.RMSNorm (and F.rms_norm) on float16 input computes in float32 and
    returns the float32 result rounded to float16; the same norm written out in float16
    squares the input, x^2 overflows to inf past 256 (300^2 = 90000 > 65504), and the
    normed vector collapses to 0."""
    gen = torch.Generator().manual_seed(0)
    x = (300 * torch.randn(8, generator=gen)).half()
    wide = x.float()
    reference = (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + 1e-6)).half()
    with torch.no_grad():
        module = torch.nn.RMSNorm(8, eps=1e-6).half()(x)
    assert module.dtype == torch.float16
    assert torch.allclose(module.float(), reference.float(), atol=1e-3)
    assert torch.allclose(F.rms_norm(x, (8,), eps=1e-6).float(), reference.float(), atol=1e-3)
    by_hand = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    assert x.pow(2).isinf().any() and (by_hand == 0).all()


@claim("softcap-rounds-to-the-cap")
def test_a_soft_cap_rounds_to_the_cap_itself_far_above_it():
    """c * tanh(s / c) < c in exact arithmetic, but in floating point it returns c itself once
    s is far enough above the cap (c = 30): from s = 104 (about 3.5 c) in bfloat16, 135.25 in
    float16 and 270.5 in float32; just below, it is still under c. So distinct large logits can
    become equal after the cap; below 3.5 c in bfloat16 many already do, even below c, though the
    order never reverses; and where the output is c the gradient is exactly 0."""
    c = 30.0
    # (dtype, the first s that gives c, the representable step below it)
    for dtype, first, step in ((torch.bfloat16, 104.0, 4.0), (torch.float16, 135.25, 0.25),
                               (torch.float32, 270.5, 0.5)):
        at = torch.tensor([first, 1000.0], dtype=dtype)
        assert torch.equal(c * torch.tanh(at / c), torch.full((2,), c, dtype=dtype)), dtype
        below = torch.tensor(first - step, dtype=dtype)
        assert (c * torch.tanh(below / c)).item() < c, dtype
    # Below 3.5 c the order is kept, but not strictly: every finite value of the dtype between
    # -1000 and 1000, capped, never decreases, and in bfloat16 the 226 values in [c, 3.5 c)
    # give only 58 distinct results.
    for dtype in (torch.bfloat16, torch.float16):
        every = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
        every = torch.sort(every[every.isfinite() & (every.float().abs() < 1000)].float()).values
        capped = (c * torch.tanh(every.to(dtype) / c)).float()
        assert (capped[1:] >= capped[:-1]).all(), dtype
    every = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    above = every[(every.float() >= c) & (every.float() < 3.5 * c)]
    assert len(above) == 226 and len(torch.unique(c * torch.tanh(above / c))) == 58
    below = every[(every.float() >= 20) & (every.float() < c)]  # already below the cap
    assert len(below) == 80 and len(torch.unique(c * torch.tanh(below / c))) == 44
    # Autograd's gradient, 1 - tanh^2 of the rounded output, is exactly 0 once it rounds to c.
    s = torch.tensor([104.0, 100.0], dtype=torch.bfloat16, requires_grad=True)
    (c * torch.tanh(s / c)).sum().backward()
    assert s.grad[0] == 0 and s.grad[1] > 0


@claim("sdpa-half-unscaled-no-overflow")
def test_sdpa_float16_with_scale_one_stays_finite_on_the_cpu():
    """Unscaled (scale=1.0): q.k reaches 102400, past float16's range, yet SDPA's CPU path keeps
    the scores in float32 and returns the float32 result, where `q @ k.T` in float16 is inf."""
    q, k, v = large_logits()
    assert (q.half() @ k.half().transpose(-2, -1)).isinf().any()
    out = F.scaled_dot_product_attention(q.half(), k.half(), v.half(), scale=1.0)
    assert out.dtype == torch.float16 and out.isfinite().all()
    assert torch.allclose(out.float(), F.scaled_dot_product_attention(q, k, v, scale=1.0), atol=1e-2)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        math_out = F.scaled_dot_product_attention(q.half(), k.half(), v.half(), scale=1.0)
    assert math_out.isfinite().all()
