"""snippets/scaled_dot_product_attention.py against F.scaled_dot_product_attention."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.scaled_dot_product_attention as mod
from tests import snippet_blocks as sb
from snippets.scaled_dot_product_attention import (
    attend_to_ignore,
    ignore_to_attend,
    scaled_dot_product_attention,
)

EXPECTED_OUTPUT = {
    "demo": ["output shape: (2, 4, 8)", "matches F.scaled_dot_product_attention: True"],
    "mask_conventions": [
        "padding mask passed as-is, matches truth: False",
        "max abs error of the wrong convention: 2.956",
        "converted with ignore_to_attend, matches truth: True",
        "ours matches truth: True",
        "round trip is the identity: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)


def random_attend(gen, *shape):
    """Random boolean mask (True = attend) with at least one key per query row."""
    attend = torch.rand(*shape, generator=gen) < 0.6
    attend[..., torch.randint(shape[-1], (), generator=gen)] = True
    return attend


def qkv(gen, batch, heads, length, source, d_k, dtype=torch.float64, d_v=None):
    q = torch.randn(batch, heads, length, d_k, generator=gen, dtype=dtype)
    k = torch.randn(batch, heads, source, d_k, generator=gen, dtype=dtype)
    v = torch.randn(batch, heads, source, d_v or d_k, generator=gen, dtype=dtype)
    return q, k, v


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_matches_sdpa(dtype, mask):
    gen = torch.Generator().manual_seed(1)
    q, k, v = qkv(gen, 2, 3, 5, 7, 8, dtype, d_v=6)
    if mask == "none":
        ours, ref = scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v)
    elif mask == "bool":
        attend = random_attend(gen, 2, 1, 5, 7)
        ours = scaled_dot_product_attention(q, k, v, attend=attend)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    elif mask == "float":
        bias = torch.randn(5, 7, generator=gen, dtype=dtype)
        bias[:, 3] = float("-inf")  # float masks may drop keys with -inf
        ours = scaled_dot_product_attention(q, k, v, attend=bias)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    else:  # is_causal is the upper-left lower-triangular mask, also when L != S
        ours = scaled_dot_product_attention(q, k, v, attend=torch.ones(5, 7, dtype=torch.bool).tril())
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    sb.assert_close(ours, ref)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    heads=st.integers(1, 3),
    length=st.integers(1, 6),
    source=st.integers(1, 6),
    d_k=st.integers(1, 8),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_sdpa(batch, heads, length, source, d_k, masked, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = qkv(gen, batch, heads, length, source, d_k)
    attend = random_attend(gen, batch, heads, length, source) if masked else None
    ours = scaled_dot_product_attention(q, k, v, attend=attend)
    assert ours.shape == (batch, heads, length, d_k)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(2)
    q, k, v = (t.requires_grad_() for t in qkv(gen, 1, 2, 3, 4, 3))
    attend = random_attend(gen, 1, 1, 3, 4)
    assert torch.autograd.gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, attend=attend), (q, k, v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_masked_is_finite_and_close(dtype):
    gen = torch.Generator().manual_seed(3)
    q, k, v = qkv(gen, 2, 2, 6, 9, 16, torch.float32)
    attend = random_attend(gen, 2, 1, 6, 9)
    low = scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend=attend)
    assert low.dtype == dtype
    assert low.isfinite().all()
    sb.assert_close(low.float(), scaled_dot_product_attention(q, k, v, attend=attend), dtype=dtype)


def test_mask_conversions_are_inverse_and_match_multihead_convention():
    gen = torch.Generator().manual_seed(4)
    padding = torch.rand(3, 7, generator=gen) < 0.4
    padding[:, 0] = False  # every sequence keeps one real token
    assert torch.equal(ignore_to_attend(padding), ~padding)
    assert torch.equal(attend_to_ignore(ignore_to_attend(padding)), padding)
    # nn.MultiheadAttention with identity projections is plain attention over the inputs.
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True, bias=False, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(4, dtype=torch.float64).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(4, dtype=torch.float64))
    x = torch.randn(3, 7, 4, generator=gen, dtype=torch.float64)
    expected, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)
    ours = scaled_dot_product_attention(x, x, x, attend=ignore_to_attend(padding)[:, None, :])
    sb.assert_close(ours, expected)
    wrong = scaled_dot_product_attention(x, x, x, attend=padding[:, None, :] | ~padding.any(-1)[:, None, None])
    assert not torch.allclose(wrong, expected)


def overflowing_qkv(dtype, seed=0):
    """(1, 2, 4, 64) q, k, v: every query has one key with q.k = 40 * 40 * 64 = 102400 > 65504
    (float16's largest finite value), while q.k / sqrt(64) = 12800 fits; the other products are
    random +-1600 multiples, far below, so each softmax row is all but one-hot."""
    gen = torch.Generator().manual_seed(seed)
    q = 40 * (torch.randint(0, 2, (1, 2, 4, 64), generator=gen) * 2 - 1).float()
    k = q[:, :, torch.randperm(4, generator=gen)]  # each query's own key, shuffled
    v = torch.randn(1, 2, 4, 64, generator=gen)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def test_float16_scores_do_not_overflow_where_sdpa_does_not():
    q, k, v = overflowing_qkv(torch.float16)
    # The old formulation, (q @ k^T) / sqrt(d_k): the product is inf, the softmax NaN.
    unscaled = q @ k.transpose(-2, -1)
    assert unscaled.isinf().any()
    old = torch.softmax(unscaled / math.sqrt(64), dim=-1) @ v
    assert old.isnan().any()
    ref = F.scaled_dot_product_attention(q, k, v)
    assert ref.isfinite().all()
    ours = scaled_dot_product_attention(q, k, v)
    assert ours.isfinite().all()
    sb.assert_close(ours, ref)
    attend = torch.ones(4, 4, dtype=torch.bool)
    attend[:, 0] = False  # the masked path too
    sb.assert_close(
        scaled_dot_product_attention(q, k, v, attend=attend),
        F.scaled_dot_product_attention(q, k, v, attn_mask=attend),
    )


def test_bfloat16_large_scores_match_sdpa():
    q, k, v = overflowing_qkv(torch.bfloat16)
    ours = scaled_dot_product_attention(q, k, v)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v))
    sb.assert_close(ours.float(), F.scaled_dot_product_attention(*(t.float() for t in (q, k, v))), torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_float_mask_of_another_dtype_is_taken_like_sdpa(dtype):
    gen = torch.Generator().manual_seed(5)
    q, k, v = qkv(gen, 2, 2, 3, 5, 8, torch.float32)
    bias = torch.randn(3, 5, generator=gen)  # float32 additive mask
    bias[:, 1] = float("-inf")
    low = [t.to(dtype) for t in (q, k, v)]
    ours = scaled_dot_product_attention(*low, attend=bias)
    assert ours.dtype == dtype
    sb.assert_close(ours, F.scaled_dot_product_attention(*low, attn_mask=bias))
    # SDPA also takes a float32 mask with float64 inputs
    q, k, v = (t.double() for t in (q, k, v))
    ours = scaled_dot_product_attention(q, k, v, attend=bias)
    assert ours.dtype == torch.float64
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_a_float32_mask_keeps_its_precision_with_bfloat16_inputs():
    """ALiBi's biases for 12 heads over 600 keys, most of which bfloat16 cannot hold: with
    q = k = 0 and one-hot values the output is the attention weights. Added in float32 (as
    SDPA keeps the mask, claim sdpa-float32-mask-bfloat16-precision) they are the exact
    weights rounded to bfloat16 (within 2^-8); rounding the mask to bfloat16 first, as the
    function once did, moves them by more than 3 %."""
    heads, source = 12, 600
    slope = 2.0 ** (-8 / heads * torch.arange(1, heads + 1, dtype=torch.float32))
    mask = -slope[:, None, None] * torch.arange(source - 1, -1, -1.0)  # (H, 1, S)
    exact = torch.softmax(mask.double(), dim=-1)
    seen = exact > torch.finfo(torch.bfloat16).tiny
    q = torch.zeros(1, heads, 1, 8, dtype=torch.bfloat16)
    k = torch.zeros(1, heads, source, 8, dtype=torch.bfloat16)
    v = torch.eye(source, dtype=torch.bfloat16).expand(1, heads, -1, -1)

    def relative_error(out):
        return ((out[0].double() - exact) / exact)[seen].abs().max()

    ours = scaled_dot_product_attention(q, k, v, attend=mask)
    assert ours.dtype == torch.bfloat16
    assert relative_error(ours) <= 2.0**-8
    assert relative_error(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)) < 0.01
    assert relative_error(scaled_dot_product_attention(q, k, v, attend=mask.bfloat16())) > 2.0**-5


def test_the_mask_is_keyword_only():
    q = torch.randn(1, 2, 4)
    with pytest.raises(TypeError):
        scaled_dot_product_attention(q, q, q, torch.ones(2, 2, dtype=torch.bool))
