"""snippets/multi_head_attention.py against torch.nn.MultiheadAttention."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.multi_head_attention as mod
from snippets.multi_head_attention import MultiHeadAttention
from snippets.torch_mha_weights import load_into_torch
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {"demo": ["output shape: (2, 5, 16)", "matches nn.MultiheadAttention: True"]}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


def make_pair(d_model, heads, kdim=None, vdim=None, batch_first=True, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    ours = MultiHeadAttention(d_model, heads, kdim, vdim).to(dtype)
    theirs = nn.MultiheadAttention(d_model, heads, kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=dtype)
    return ours, load_into_torch(ours, theirs).eval()


def valid_padding(gen, batch, source):
    """(B, S), True = padding, leaving at least one real key per sequence."""
    padding = torch.rand(batch, source, generator=gen) < 0.4
    padding[torch.arange(batch), torch.randint(source, (batch,), generator=gen)] = False
    return padding


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("dims", [(None, None), (6, 10)], ids=["same-dims", "kdim-vdim"])
def test_matches_torch_with_key_padding(batch_first, dims):
    gen = torch.Generator().manual_seed(1)
    kdim, vdim = dims
    ours, theirs = make_pair(12, 3, kdim, vdim, batch_first)
    query = torch.randn(2, 4, 12, generator=gen, dtype=torch.float64)
    key = torch.randn(2, 7, kdim or 12, generator=gen, dtype=torch.float64)
    value = torch.randn(2, 7, vdim or 12, generator=gen, dtype=torch.float64)
    padding = valid_padding(gen, 2, 7)
    args = (query, key, value) if batch_first else tuple(t.transpose(0, 1) for t in (query, key, value))
    expected, _ = theirs(*args, key_padding_mask=padding, need_weights=False)
    if not batch_first:
        expected = expected.transpose(0, 1)  # (L, N, E) -> (N, L, E)
    sb.assert_close(ours(query, key, value, attend=~padding[:, None, None, :]), expected)


@pytest.mark.parametrize("mask_kind", ["bool-2d", "bool-3d", "float-2d", "float-with-padding"])
def test_matches_torch_attn_mask(mask_kind):
    gen = torch.Generator().manual_seed(2)
    batch, heads, length, source = 2, 4, 5, 6
    ours, theirs = make_pair(16, heads)
    query = torch.randn(batch, length, 16, generator=gen, dtype=torch.float64)
    memory = torch.randn(batch, source, 16, generator=gen, dtype=torch.float64)
    ignore = torch.rand(batch * heads, length, source, generator=gen) < 0.4
    ignore[..., 0] = False  # every query keeps a key
    kwargs = {"need_weights": False}
    if mask_kind == "bool-2d":  # (L, S), True = ignore
        kwargs["attn_mask"] = ignore[0]
        attend = ~ignore[0]
    elif mask_kind == "bool-3d":  # (N * H, L, S), indexed b * H + h
        kwargs["attn_mask"] = ignore
        attend = ~ignore.view(batch, heads, length, source)
    else:  # float masks are added to the scores in both APIs
        bias = torch.randn(length, source, generator=gen, dtype=torch.float64)
        bias = bias.masked_fill(ignore[0], float("-inf"))
        kwargs["attn_mask"] = attend = bias
        if mask_kind == "float-with-padding":
            padding = valid_padding(gen, batch, source) & ~ignore[0, 0]  # keep key 0 everywhere
            float_padding = torch.zeros(batch, source, dtype=torch.float64).masked_fill(padding, float("-inf"))
            kwargs["key_padding_mask"] = float_padding  # float too: mixing kinds is deprecated
            attend = bias + float_padding[:, None, None, :]
    expected, _ = theirs(query, memory, memory, **kwargs)
    sb.assert_close(ours(query, memory, memory, attend=attend), expected)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 5),
    heads=st.sampled_from([1, 2, 4]),
    d_k=st.integers(1, 4),
    padded=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_torch(batch, length, source, heads, d_k, padded, seed):
    gen = torch.Generator().manual_seed(seed)
    d_model = heads * d_k
    ours, theirs = make_pair(d_model, heads, seed=seed)
    query = torch.randn(batch, length, d_model, generator=gen, dtype=torch.float64)
    memory = torch.randn(batch, source, d_model, generator=gen, dtype=torch.float64)
    padding = valid_padding(gen, batch, source) if padded else None
    expected, _ = theirs(query, memory, memory, key_padding_mask=padding, need_weights=False)
    attend = None if padding is None else ~padding[:, None, None, :]
    out = ours(query, memory, memory, attend=attend)
    assert out.shape == (batch, length, d_model)
    sb.assert_close(out, expected)


def test_gradcheck_float64():
    torch.manual_seed(3)
    mha = MultiHeadAttention(4, 2, kdim=3, vdim=5).double()
    query = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    key = torch.randn(1, 3, 3, dtype=torch.float64, requires_grad=True)
    value = torch.randn(1, 3, 5, dtype=torch.float64, requires_grad=True)
    attend = torch.tensor([[True, False, True], [True, True, True]])
    assert torch.autograd.gradcheck(lambda q, k, v: mha(q, k, v, attend=attend), (query, key, value))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_with_padding_is_finite(dtype):
    gen = torch.Generator().manual_seed(4)
    torch.manual_seed(4)
    ours = MultiHeadAttention(16, 4)
    x = torch.randn(3, 6, 16, generator=gen)
    attend = ~valid_padding(gen, 3, 6)[:, None, None, :]
    reference = ours(x, x, x, attend=attend)
    low = ours.to(dtype)(x.to(dtype), x.to(dtype), x.to(dtype), attend=attend)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), reference, dtype=dtype)


def large_logit_pair(dtype, d_model=128, heads=2, seed=5):
    """Ours and nn.MultiheadAttention, W_q = W_k = 40 I, with +-1 tokens: each token's q.k with
    itself is 40 * 40 * d_k = 102400 > 65504 (float16's largest), scaled 12800: it fits."""
    ours, theirs = make_pair(d_model, heads, dtype=torch.float32, seed=seed)
    with torch.no_grad():
        for linear in (ours.w_q, ours.w_k):
            linear.weight.copy_(40 * torch.eye(d_model))
            linear.bias.zero_()
    theirs = load_into_torch(ours, theirs)
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randint(0, 2, (2, 5, d_model), generator=gen) * 2 - 1).float()
    return ours.to(dtype), theirs.to(dtype), x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_match_torch(dtype):
    ours, theirs, x = large_logit_pair(dtype)
    q, k = ours.split_heads(ours.w_q(x)), ours.split_heads(ours.w_k(x))
    if dtype == torch.float16:  # the old formulation, q @ k^T first: inf, then NaN
        assert torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(ours.d_k), dim=-1).isnan().any()
    with torch.no_grad():
        out = ours(x, x, x)
        causal = torch.ones(5, 5, dtype=torch.bool).tril()
        masked = ours(x, x, x, attend=causal)
        expected, _ = theirs(x, x, x, need_weights=False)  # SDPA inside: finite
        expected_masked, _ = theirs(x, x, x, attn_mask=~causal, need_weights=False)
    assert out.isfinite().all() and masked.isfinite().all()
    sb.assert_close(out, expected)
    sb.assert_close(masked, expected_masked)


def test_validation_and_keyword_only_mask():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    mha = MultiHeadAttention(4, 2)
    x = torch.randn(1, 3, 4)
    with pytest.raises(TypeError):
        mha(x, x, x, torch.ones(3, 3, dtype=torch.bool))


@pytest.mark.parametrize("tokens, h, copies", [(3, 4, True), (1, 4, False), (3, 1, False)])
def test_merge_heads_copies_only_when_the_transpose_is_not_contiguous(tokens, h, copies):
    """The comment in merge_heads: for T > 1 and h > 1 the (B, T, h, d_k) transpose is not
    contiguous and reshape copies; for one token (a decoding step) or one head it is a view of the
    heads' storage."""
    mha = MultiHeadAttention(4 * h, h)
    heads = torch.randn(2, h, tokens, 4)
    merged = mha.merge_heads(heads)
    assert merged.shape == (2, tokens, 4 * h)
    assert (merged.untyped_storage().data_ptr() != heads.untyped_storage().data_ptr()) is copies
    assert torch.equal(merged, heads.transpose(1, 2).flatten(2))
