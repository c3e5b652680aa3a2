"""snippets/per_head_projections.py: h per-head projections equal one fused projection."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.per_head_projections as mod
from snippets.multi_head_attention import MultiHeadAttention
from snippets.per_head_projections import PerHeadAttention, fused_to_per_head, per_head_to_fused
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "fused -> per-head, same output: True",
        "per-head -> fused, same output: True",
        "parameters, fused vs per-head: 1088 1088",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_per_head_weights_stacked_by_rows_are_the_fused_weight():
    torch.manual_seed(0)
    per_head = PerHeadAttention(12, 3)
    fused = per_head_to_fused(per_head, MultiHeadAttention(12, 3))
    assert torch.equal(fused.w_q.weight[4:8], per_head.q_heads[1].weight)  # head 1: rows d_k..2 d_k
    assert torch.equal(fused.w_v.bias[8:], per_head.v_heads[2].bias)
    back = fused_to_per_head(fused, PerHeadAttention(12, 3))
    for name, tensor in per_head.state_dict().items():
        assert torch.equal(tensor, back.state_dict()[name]), name


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 5),
    heads=st.sampled_from([1, 2, 3]),
    d_k=st.integers(1, 4),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_same_output(batch, length, source, heads, d_k, masked, seed):
    torch.manual_seed(seed)
    d_model = heads * d_k
    fused = MultiHeadAttention(d_model, heads).double()
    per_head = fused_to_per_head(fused, PerHeadAttention(d_model, heads).double())
    query = torch.randn(batch, length, d_model, dtype=torch.float64)
    memory = torch.randn(batch, source, d_model, dtype=torch.float64)
    attend = None
    if masked:  # (L, S) broadcasts over heads in both layouts
        attend = torch.rand(length, source) < 0.5
        attend[:, 0] = True
    sb.assert_close(per_head(query, memory, memory, attend=attend), fused(query, memory, memory, attend=attend))


def test_gradcheck_float64():
    torch.manual_seed(1)
    per_head = PerHeadAttention(4, 2).double()
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: per_head(x, x, x), (x,))


def test_validation_and_keyword_only_mask():
    with pytest.raises(ValueError, match="divisible"):
        PerHeadAttention(10, 3)
    per_head = PerHeadAttention(4, 2)
    x = torch.randn(1, 3, 4)
    with pytest.raises(TypeError):
        per_head(x, x, x, torch.ones(3, 3, dtype=torch.bool))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_match_the_fused_layer_in_float32(dtype):
    # Every head's W^Q = W^K = 40 * (its rows of the identity), +-1 tokens: each token's q.k with
    # itself is 40 * 40 * 64 = 102400 > 65504, scaled 12800. The old q @ k^T would be inf.
    torch.manual_seed(8)
    fused = MultiHeadAttention(128, 2)
    with torch.no_grad():
        for linear in (fused.w_q, fused.w_k):
            linear.weight.copy_(40 * torch.eye(128))
            linear.bias.zero_()
    per_head = fused_to_per_head(fused, PerHeadAttention(128, 2))
    x = (torch.randint(0, 2, (2, 5, 128), generator=torch.Generator().manual_seed(8)) * 2 - 1).float()
    reference = fused(x, x, x)  # float32: no overflow
    low = per_head.to(dtype)(x.to(dtype), x.to(dtype), x.to(dtype))
    assert low.isfinite().all()
    sb.assert_close(low.float(), reference, dtype=dtype)
