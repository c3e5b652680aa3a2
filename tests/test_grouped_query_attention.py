"""snippets/grouped_query_attention.py against SDPA's enable_gqa=True."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.grouped_query_attention as mod
from snippets.grouped_query_attention import GroupedQueryAttention, grouped_query_attention
from snippets.multi_head_attention import MultiHeadAttention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "multi-query output shape: (2, 8, 5, 16)",
        "multi-query matches SDPA enable_gqa=True: True",
        "grouped-query output shape: (2, 8, 5, 16)",
        "grouped-query matches SDPA enable_gqa=True: True",
        "tiling with .repeat instead matches: False",
        "module output shape: (2, 5, 64)",
        "K/V projection rows, GQA vs MHA: 16 64",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    kv_heads=st.integers(1, 3),
    group=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 5),
    d_k=st.integers(1, 6),
    mask=st.sampled_from(["none", "bool", "causal"]),
    seed=st.integers(0, 2**16),
)
def test_property_matches_sdpa_enable_gqa(batch, kv_heads, group, length, source, d_k, mask, seed):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, kv_heads * group, length, d_k, generator=gen, dtype=torch.float64)
    k = torch.randn(batch, kv_heads, source, d_k, generator=gen, dtype=torch.float64)
    v = torch.randn(batch, kv_heads, source, d_k, generator=gen, dtype=torch.float64)
    if mask == "causal":
        out = grouped_query_attention(q, k, v, attend=torch.ones(length, source, dtype=torch.bool).tril())
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    else:
        attend = None
        if mask == "bool":
            attend = torch.rand(batch, 1, length, source, generator=gen) < 0.6
            attend[..., 0] = True
        out = grouped_query_attention(q, k, v, attend=attend)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend, enable_gqa=True)
    assert out.shape == q.shape
    sb.assert_close(out, ref)


def test_tiling_with_repeat_is_a_different_model():
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(1, 4, 3, 8, generator=gen)
    k, v = torch.randn(2, 1, 2, 3, 8, generator=gen).unbind(0)
    ours = grouped_query_attention(q, k, v)
    tiled = F.scaled_dot_product_attention(q, k.repeat(1, 2, 1, 1), v.repeat(1, 2, 1, 1))
    assert not torch.allclose(ours, tiled)


def test_mismatched_heads_are_refused():
    q, k = torch.randn(1, 3, 2, 4), torch.randn(1, 2, 2, 4)
    with pytest.raises(ValueError, match="multiple"):
        grouped_query_attention(q, k, k)
    with pytest.raises(RuntimeError):  # and PyTorch refuses without enable_gqa
        F.scaled_dot_product_attention(torch.randn(1, 4, 2, 4), k, k)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_module_with_all_kv_heads_is_multi_head_attention(kv_heads):
    torch.manual_seed(2)
    gqa = GroupedQueryAttention(16, 4, kv_heads).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    out = gqa(x, x, x)
    assert out.shape == (2, 5, 16)
    assert gqa.w_k.out_features == kv_heads * 4
    if kv_heads == 4:  # same parameters as MultiHeadAttention: same function
        mha = MultiHeadAttention(16, 4).double()
        mha.load_state_dict(gqa.state_dict())
        sb.assert_close(out, mha(x, x, x))


def test_gradcheck_float64():
    torch.manual_seed(3)
    gqa = GroupedQueryAttention(8, 4, 2).double()
    x = torch.randn(1, 3, 8, dtype=torch.float64, requires_grad=True)
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    assert torch.autograd.gradcheck(lambda x: gqa(x, x, x, attend=causal), (x,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_masked_is_finite(dtype):
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(2, 6, 5, 8, generator=gen)
    k, v = torch.randn(2, 2, 2, 5, 8, generator=gen).unbind(0)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    low = grouped_query_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend=causal)
    assert low.isfinite().all()
    sb.assert_close(low.float(), grouped_query_attention(q, k, v, attend=causal), dtype=dtype)


def test_module_arguments_are_validated_with_messages():
    with pytest.raises(ValueError, match="divisible"):
        GroupedQueryAttention(10, 4, 2)
    with pytest.raises(ValueError, match="multiple"):
        GroupedQueryAttention(12, 6, 4)
    gqa = GroupedQueryAttention(8, 4, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(TypeError):  # the mask is keyword-only
        gqa(x, x, x, torch.ones(3, 3, dtype=torch.bool))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_match_sdpa(dtype):
    # Each query head has one key with q.k = 40 * 40 * 64 = 102400 > 65504; scaled, 12800 fits.
    gen = torch.Generator().manual_seed(6)
    k = 40 * (torch.randint(0, 2, (1, 2, 4, 64), generator=gen) * 2 - 1).float()
    q = k.repeat_interleave(3, dim=1)[:, :, torch.randperm(4, generator=gen)]  # 6 query heads
    v = torch.randn(1, 2, 4, 64, generator=gen)
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    if dtype == torch.float16:  # the old formulation overflows
        kk = k.repeat_interleave(3, dim=1)
        assert torch.softmax(q @ kk.transpose(-2, -1) / math.sqrt(64), dim=-1).isnan().any()
    out = grouped_query_attention(q, k, v, attend=causal)
    assert out.isfinite().all()
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=causal, enable_gqa=True))
