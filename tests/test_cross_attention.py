"""snippets/cross_attention.py against nn.MultiheadAttention used as cross-attention."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.cross_attention as mod
from snippets.cross_attention import CrossAttention
from snippets.torch_mha_weights import load_into_torch
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": ["output shape: (2, 3, 16)", "matches nn.MultiheadAttention: True", "padded positions ignored: True"]
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    heads=st.sampled_from([1, 2, 4]),
    kdim=st.integers(1, 9),
    vdim=st.integers(1, 9),
    batch_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_torch(batch, length, source, heads, kdim, vdim, batch_first, seed):
    torch.manual_seed(seed)
    d_model = 2 * heads
    ours = CrossAttention(d_model, heads, kdim=kdim, vdim=vdim).double()
    theirs = nn.MultiheadAttention(
        d_model, heads, kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=torch.float64
    )
    load_into_torch(ours, theirs)
    x = torch.randn(batch, length, d_model, dtype=torch.float64)
    memory_k = torch.randn(batch, source, kdim, dtype=torch.float64)
    memory_v = torch.randn(batch, source, vdim, dtype=torch.float64)
    lengths = torch.randint(1, source + 1, (batch,))  # at least one real source token
    padding = torch.arange(source)[None, :] >= lengths[:, None]
    args = (x, memory_k, memory_v) if batch_first else tuple(t.transpose(0, 1) for t in (x, memory_k, memory_v))
    expected, _ = theirs(*args, key_padding_mask=padding, need_weights=False)
    if not batch_first:
        expected = expected.transpose(0, 1)
    out = ours(x, memory_k, memory_v, key_padding_mask=padding)
    assert out.shape == (batch, length, d_model)
    sb.assert_close(out, expected)


def test_padded_encoder_positions_do_not_matter():
    torch.manual_seed(1)
    ours = CrossAttention(8, 2, kdim=6, vdim=6)
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 7, 6)
    padding = torch.arange(7)[None, :] >= torch.tensor([[7], [3]])
    changed = memory.clone()
    changed[1, 3:] = 1e4
    sb.assert_close(
        ours(x, changed, changed, key_padding_mask=padding), ours(x, memory, memory, key_padding_mask=padding)
    )


def test_gradcheck_float64():
    torch.manual_seed(2)
    ours = CrossAttention(4, 2, kdim=3, vdim=5).double()
    x = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    memory_k = torch.randn(1, 4, 3, dtype=torch.float64, requires_grad=True)
    memory_v = torch.randn(1, 4, 5, dtype=torch.float64, requires_grad=True)
    padding = torch.tensor([[False, False, True, True]])
    assert torch.autograd.gradcheck(lambda *a: ours(*a, key_padding_mask=padding), (x, memory_k, memory_v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_padding_is_finite(dtype):
    torch.manual_seed(3)
    ours = CrossAttention(16, 4, kdim=12, vdim=12)
    x, memory = torch.randn(2, 3, 16), torch.randn(2, 9, 12)
    padding = torch.arange(9)[None, :] >= torch.tensor([[9], [2]])
    reference = ours(x, memory, memory, key_padding_mask=padding)
    low = ours.to(dtype)(x.to(dtype), memory.to(dtype), memory.to(dtype), key_padding_mask=padding)
    assert low.isfinite().all()
    sb.assert_close(low.float(), reference, dtype=dtype)


def test_padding_mask_is_keyword_only_and_not_the_parents_attend():
    torch.manual_seed(4)
    ours = CrossAttention(8, 2)
    x, memory = torch.randn(1, 2, 8), torch.randn(1, 4, 8)
    padding = torch.tensor([[False, False, True, True]])
    with pytest.raises(TypeError):  # positionally, True = pad would be read as True = attend
        ours(x, memory, memory, padding)
    with pytest.raises(TypeError):  # the parent's keyword does not exist here
        ours(x, memory, memory, attend=~padding)
    sb.assert_close(
        ours(x, memory, memory, key_padding_mask=padding), ours(x, memory[:, :2], memory[:, :2])
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_match_torch(dtype):
    # W_q = W_k = 40 I and +-1 vectors: one source token per target has q.k = 102400 > 65504
    # (float16's largest), scaled by 1/sqrt(64): 12800, which fits.
    torch.manual_seed(5)
    gen = torch.Generator().manual_seed(5)
    ours = CrossAttention(128, 2)
    with torch.no_grad():
        for linear in (ours.w_q, ours.w_k):
            linear.weight.copy_(40 * torch.eye(128))
            linear.bias.zero_()
    theirs = load_into_torch(ours, nn.MultiheadAttention(128, 2, batch_first=True)).to(dtype)
    ours = ours.to(dtype)
    memory = (torch.randint(0, 2, (2, 6, 128), generator=gen) * 2 - 1).to(dtype)
    x = memory[:, [3, 0, 1]]  # each target token equals one source token
    padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    q, k = ours.split_heads(ours.w_q(x)), ours.split_heads(ours.w_k(memory))
    if dtype == torch.float16:  # the old formulation: inf scores, NaN weights
        assert torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(64), dim=-1).isnan().any()
    with torch.no_grad():
        out = ours(x, memory, memory, key_padding_mask=padding)
        expected, _ = theirs(x, memory, memory, key_padding_mask=padding, need_weights=False)
    assert out.isfinite().all()
    sb.assert_close(out, expected)
