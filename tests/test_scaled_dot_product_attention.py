"""snippets/scaled_dot_product_attention.py against F.scaled_dot_product_attention."""

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
        ours = scaled_dot_product_attention(q, k, v, attend)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    elif mask == "float":
        bias = torch.randn(5, 7, generator=gen, dtype=dtype)
        bias[:, 3] = float("-inf")  # float masks may drop keys with -inf
        ours = scaled_dot_product_attention(q, k, v, bias)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    else:  # is_causal is the upper-left lower-triangular mask, also when L != S
        ours = scaled_dot_product_attention(q, k, v, torch.ones(5, 7, dtype=torch.bool).tril())
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
    ours = scaled_dot_product_attention(q, k, v, attend)
    assert ours.shape == (batch, heads, length, d_k)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(2)
    q, k, v = (t.requires_grad_() for t in qkv(gen, 1, 2, 3, 4, 3))
    attend = random_attend(gen, 1, 1, 3, 4)
    assert torch.autograd.gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, attend), (q, k, v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_masked_is_finite_and_close(dtype):
    gen = torch.Generator().manual_seed(3)
    q, k, v = qkv(gen, 2, 2, 6, 9, 16, torch.float32)
    attend = random_attend(gen, 2, 1, 6, 9)
    low = scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend)
    assert low.dtype == dtype
    assert low.isfinite().all()
    sb.assert_close(low.float(), scaled_dot_product_attention(q, k, v, attend), dtype=dtype)


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
    ours = scaled_dot_product_attention(x, x, x, ignore_to_attend(padding)[:, None, :])
    sb.assert_close(ours, expected)
    wrong = scaled_dot_product_attention(x, x, x, padding[:, None, :] | ~padding.any(-1)[:, None, None])
    assert not torch.allclose(wrong, expected)
