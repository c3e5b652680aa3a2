"""snippets/masks.py: padding/causal masks and masked attention against SDPA."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right

import snippets.masks as mod
from snippets.masks import causal_mask, combine_masks, key_padding_mask, masked_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "attend mask of sequence 2 (1 = may attend):",
        "tensor([[1, 0, 0, 0],",
        "        [1, 1, 0, 0],",
        "        [1, 1, 0, 0],",
        "        [1, 1, 0, 0]], dtype=torch.int32)",
        "matches F.scaled_dot_product_attention: True",
        "torch.float16 finite: True close to float32: True",
        "torch.bfloat16 finite: True close to float32: True",
        "fully masked row -> zeros: True",
        "NaN anywhere: False",
    ],
    "causal_alignment": [
        "upper-left (SDPA is_causal):",
        "tensor([[1, 0, 0, 0, 0],",
        "        [1, 1, 0, 0, 0]], dtype=torch.int32)",
        "lower-right (decoding with a KV cache):",
        "tensor([[1, 1, 1, 1, 0],",
        "        [1, 1, 1, 1, 1]], dtype=torch.int32)",
        "upper-left equals is_causal=True: True",
        "lower-right equals causal_lower_right: True",
        "lower-right equals the last L rows of the S x S mask: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
HALF_DTYPES = [torch.float16, torch.bfloat16]


def qkv(seed, batch, heads, length, source, d_k, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, heads, length, d_k, generator=gen, dtype=dtype),
        torch.randn(batch, heads, source, d_k, generator=gen, dtype=dtype),
        torch.randn(batch, heads, source, d_k, generator=gen, dtype=dtype),
    )


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_key_padding_mask_marks_positions_past_each_length():
    expected = torch.tensor([[False, False, True], [False, False, False], [False, True, True]])
    assert torch.equal(key_padding_mask(torch.tensor([2, 3, 1]), 3), expected)


@pytest.mark.parametrize("length,source", [(1, 1), (3, 3), (2, 5), (5, 2)])
def test_causal_alignments_match_pytorch(length, source):
    q, k, v = qkv(0, 1, 2, length, source, 4)
    upper = masked_attention(q, k, v, attend=causal_mask(length, source))
    sb.assert_close(upper, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    lower = masked_attention(q, k, v, attend=causal_mask(length, source, lower_right=True))
    if length > source:  # the first L - S queries have no key: PyTorch warns, both give zeros
        with pytest.warns(UserWarning, match="NaN"):
            bias = causal_lower_right(length, source)
        assert (lower[..., : length - source, :] == 0).all()
    else:
        bias = causal_lower_right(length, source)
    sb.assert_close(lower, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    if length <= source:  # lower-right = the last L rows of the full causal mask
        assert torch.equal(causal_mask(length, source, lower_right=True), causal_mask(source)[-length:])
    if length == source:
        assert torch.equal(causal_mask(length, source, lower_right=True), causal_mask(length))


def test_combined_mask_is_padding_and_causal():
    padding = key_padding_mask(torch.tensor([4, 2]), 4)
    attend = combine_masks(padding=padding, attend=causal_mask(4))
    assert attend.shape == (2, 1, 4, 4)
    assert torch.equal(attend[0, 0], causal_mask(4))
    assert not attend[1, 0, :, 2:].any() and torch.equal(attend[1, 0, :, :2], causal_mask(4)[:, :2])
    assert torch.equal(combine_masks(padding=padding)[:, 0, 0], ~padding)
    assert torch.equal(combine_masks(attend=causal_mask(3)), causal_mask(3))


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    heads=st.integers(1, 3),
    length=st.integers(1, 6),
    source=st.integers(1, 6),
    d_k=st.integers(1, 6),
    density=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_property_matches_sdpa_including_fully_masked_rows(batch, heads, length, source, d_k, density, seed):
    q, k, v = qkv(seed, batch, heads, length, source, d_k)
    attend = torch.rand(batch, 1, length, source, generator=torch.Generator().manual_seed(seed)) < density
    out = masked_attention(q, k, v, attend=attend)
    assert not out.isnan().any()
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))
    empty_rows = ~attend.any(-1).expand(batch, heads, length)
    assert (out[empty_rows] == 0).all()  # the documented choice: zeros, never NaN


@pytest.mark.parametrize("dtype", HALF_DTYPES + [torch.float32])
def test_low_precision_no_inf_or_nan_where_a_key_exists(dtype):
    q, k, v = qkv(1, 2, 2, 5, 7, 16, torch.float32)
    q = q * 4  # large scores make a careless fill value overflow
    padding = key_padding_mask(torch.tensor([7, 3]), 7)
    attend = combine_masks(padding=padding, attend=causal_mask(5, 7, lower_right=True))
    attend[0, 0, 0] = False  # and one query with no key at all
    out = masked_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend=attend)
    assert out.dtype == dtype
    assert out.isfinite().all()
    assert (out[0, :, 0] == 0).all()
    sb.assert_close(out.float(), masked_attention(q, k, v, attend=attend), dtype=dtype)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_the_1e9_fill_value_is_what_masks_py_avoids(dtype):
    scores = torch.zeros(2, 3, dtype=dtype)
    mask = torch.tensor([[False, True, True], [False, False, True]])
    if dtype == torch.float16:
        with pytest.raises(RuntimeError, match="overflow"):
            scores.masked_fill(mask, -1e9)
    assert torch.finfo(dtype).min == scores.masked_fill(mask, torch.finfo(dtype).min).min()


def test_gradcheck_float64_with_a_fully_masked_row():
    q, k, v = (t.requires_grad_() for t in qkv(2, 1, 1, 3, 4, 3))
    attend = causal_mask(3, 4, lower_right=True)
    attend[0] = False
    assert torch.autograd.gradcheck(lambda q, k, v: masked_attention(q, k, v, attend=attend), (q, k, v))
    masked_attention(q, k, v, attend=attend).sum().backward()
    assert q.grad.isfinite().all() and (q.grad[0, 0, 0] == 0).all()


def test_unmasked_path_is_plain_attention():
    q, k, v = qkv(3, 2, 2, 3, 5, 4)
    sb.assert_close(masked_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))


def overflowing_qkv(dtype, seed=0):
    """(1, 2, 4, 64) q, k, v: each query has one key with q.k = 40 * 40 * 64 = 102400 > 65504,
    while q.k / sqrt(64) = 12800 fits float16; the other products are far smaller."""
    gen = torch.Generator().manual_seed(seed)
    q = 40 * (torch.randint(0, 2, (1, 2, 4, 64), generator=gen) * 2 - 1).float()
    k = q[:, :, torch.randperm(4, generator=gen)]
    v = torch.randn(1, 2, 4, 64, generator=gen)
    return q.to(dtype), k.to(dtype), v.to(dtype)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_large_half_scores_do_not_overflow_where_sdpa_does_not(dtype):
    q, k, v = overflowing_qkv(dtype)
    attend = combine_masks(padding=key_padding_mask(torch.tensor([3]), 4), attend=causal_mask(4))
    attend = attend.clone()
    attend[..., 0, :] = False  # and one row with no key at all
    if dtype == torch.float16:  # the old formulation: inf scores, NaN rows
        old = (q @ k.transpose(-2, -1) / math.sqrt(64)).masked_fill(~attend, torch.finfo(dtype).min)
        assert old.isinf().any() and torch.softmax(old, dim=-1).isnan().any()
    ours = masked_attention(q, k, v, attend=attend)
    assert ours.isfinite().all()
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)  # zeros on the empty row too
    sb.assert_close(ours, ref)


def test_a_float_mask_is_refused_with_a_message():
    q = torch.randn(1, 2, 4)
    with pytest.raises(ValueError, match="boolean"):
        masked_attention(q, q, q, attend=torch.zeros(2, 2))
    with pytest.raises(TypeError):  # keyword-only
        masked_attention(q, q, q, torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(TypeError):
        combine_masks(key_padding_mask(torch.tensor([1]), 2))
    with pytest.raises(TypeError):
        causal_mask(2, 2, True)
