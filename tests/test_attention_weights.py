"""snippets/attention_weights.py against nn.MultiheadAttention's need_weights."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.attention_weights as mod
from snippets.attention_weights import attention_weights, multi_head_attention_weights
from snippets.multi_head_attention import MultiHeadAttention
from snippets.torch_mha_weights import load_into_torch
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "per-head weights shape: (2, 4, 5, 5)",
        "averaged weights shape: (2, 5, 5)",
        "per-head match nn.MultiheadAttention: True",
        "averaged match nn.MultiheadAttention: True",
        "rows sum to 1: True",
        "weights of query 0, head 0: 0.134 0.232 0.238 0.259 0.137",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 5),
    heads=st.sampled_from([1, 2, 4]),
    kdim=st.sampled_from([None, 3]),
    batch_first=st.booleans(),
    average=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_need_weights(batch, length, source, heads, kdim, batch_first, average, seed):
    torch.manual_seed(seed)
    d_model = 2 * heads
    ours = MultiHeadAttention(d_model, heads, kdim, kdim).double()
    theirs = nn.MultiheadAttention(
        d_model, heads, kdim=kdim, vdim=kdim, batch_first=batch_first, dtype=torch.float64
    )
    load_into_torch(ours, theirs).eval()  # in training mode the returned weights are after dropout
    query = torch.randn(batch, length, d_model, dtype=torch.float64)
    memory = torch.randn(batch, source, kdim or d_model, dtype=torch.float64)
    lengths = torch.randint(1, source + 1, (batch,))
    padding = torch.arange(source)[None, :] >= lengths[:, None]
    args = (query, memory, memory) if batch_first else tuple(t.transpose(0, 1) for t in (query, memory, memory))
    _, expected = theirs(*args, key_padding_mask=padding, average_attn_weights=average)
    weights = multi_head_attention_weights(ours, query, memory, attend=~padding[:, None, None, :], average=average)
    assert weights.shape == ((batch, length, source) if average else (batch, heads, length, source))
    sb.assert_close(weights, expected)
    sb.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1], dtype=torch.float64))
    padded = padding[:, None, :] if average else padding[:, None, None, :]
    assert (weights.masked_select(padded.expand_as(weights)) == 0).all()  # padding gets no weight


def test_weights_times_values_is_attention():
    gen = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 2, 4, 8, generator=gen, dtype=torch.float64).unbind(0)
    attend = torch.ones(4, 4, dtype=torch.bool).tril()
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    sb.assert_close(attention_weights(q, k, attend=attend) @ v, out)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_masked_weights_are_finite(dtype):
    gen = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 3, 5, 8, generator=gen).unbind(0)
    attend = torch.ones(5, 5, dtype=torch.bool).tril()
    weights = attention_weights(q.to(dtype), k.to(dtype), attend=attend)
    assert weights.isfinite().all() and (weights[~attend.expand_as(weights)] == 0).all()
    sb.assert_close(weights.float(), attention_weights(q, k, attend=attend), dtype=dtype)


def test_gradcheck_float64():
    q, k = torch.randn(2, 1, 3, 4, dtype=torch.float64, requires_grad=True).unbind(0)
    assert torch.autograd.gradcheck(lambda q, k: attention_weights(q, k), (q, k))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_do_not_overflow(dtype):
    # Each query has one key with q.k = 40 * 40 * 64 = 102400 > 65504; scaled, 12800 fits float16.
    gen = torch.Generator().manual_seed(3)
    q = 40 * (torch.randint(0, 2, (2, 4, 64), generator=gen) * 2 - 1).float()
    k = q[:, torch.randperm(4, generator=gen)]
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    q, k = q.to(dtype), k.to(dtype)
    if dtype == torch.float16:  # the old formulation: inf, then NaN
        old = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(64), dim=-1)
        assert old.isnan().any()
    weights = attention_weights(q, k, attend=causal)
    assert weights.isfinite().all()
    # the weights SDPA uses: SDPA with the identity as values returns them
    eye = torch.eye(4, dtype=dtype).expand(2, 4, 4)
    sb.assert_close(weights, torch.nn.functional.scaled_dot_product_attention(q, k, eye, attn_mask=causal))


def test_masks_are_keyword_only_and_boolean():
    q = torch.randn(1, 2, 4)
    with pytest.raises(TypeError):
        attention_weights(q, q, torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="boolean"):
        attention_weights(q, q, attend=torch.zeros(2, 2))
    mha = MultiHeadAttention(4, 2)
    with pytest.raises(TypeError):
        multi_head_attention_weights(mha, q, q, None, False)


def test_a_query_with_no_key_to_attend_to_gets_zeros_like_sdpa():
    """With V the identity, SDPA's output is its weights: the snippet's weights equal them, the
    row of a fully masked query included (zeros there, not 1/S on keys it may not see)."""
    gen = torch.Generator().manual_seed(4)
    q, k = torch.randn(2, 4, 8, generator=gen, dtype=torch.float64), torch.randn(2, 5, 8, generator=gen, dtype=torch.float64)
    attend = torch.ones(4, 5, dtype=torch.bool).tril(1)
    attend[2] = False  # query 2 may see no key
    weights = attention_weights(q, k, attend=attend)
    assert (weights[:, 2] == 0).all()
    eye = torch.eye(5, dtype=torch.float64).expand(2, 5, 5)
    torch.testing.assert_close(weights, torch.nn.functional.scaled_dot_product_attention(q, k, eye, attn_mask=attend))
