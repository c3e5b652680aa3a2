"""snippets/softmax.py against torch.softmax."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.softmax as mod
from snippets.softmax import softmax
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "naive second row: [nan, nan, nan]",
        "stable weights: 0.0900 0.2447 0.6652",
        "stable weights: 0.0900 0.2447 0.6652",
        "rows sum to 1: True",
        "matches torch.softmax: True",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@PROPERTY_SETTINGS
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    scale=st.sampled_from([1e-3, 1.0, 30.0, 1e4]),
    shift=st.sampled_from([0.0, -500.0, 1e3]),
    seed=st.integers(0, 2**16),
)
def test_property_matches_torch_and_rows_sum_to_one(shape, scale, shift, seed):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + shift
    weights = softmax(scores)
    assert weights.isfinite().all() and (weights >= 0).all()
    sb.assert_close(weights, torch.softmax(scores, dim=-1))
    sb.assert_close(weights.sum(-1), torch.ones(shape[:-1], dtype=torch.float64))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_other_dims(dim):
    scores = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(1))
    sb.assert_close(softmax(scores, dim=dim), torch.softmax(scores, dim=dim))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_large_scores_are_finite(dtype):
    scores = (torch.randn(4, 6, generator=torch.Generator().manual_seed(2)) * 100).to(dtype)
    weights = softmax(scores)
    assert weights.isfinite().all()
    sb.assert_close(weights, torch.softmax(scores, dim=-1))


def test_gradcheck_float64():
    scores = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(softmax, (scores,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_long_half_precision_row_is_summed_in_float32(dtype):
    """70,000 similar scores: in float16 their exponentials sum past 65,504 (inf), so a sum kept
    in the input's dtype would make every weight 0; the snippet's weights match float64's."""
    gen = torch.Generator().manual_seed(3)
    scores = (torch.randn(1, 70_000, generator=gen) * 0.01).to(dtype)
    weights = softmax(scores)
    assert weights.dtype == dtype
    reference = torch.softmax(scores.double(), dim=-1)
    assert torch.allclose(weights.double(), reference, rtol=1e-2, atol=0)
    if dtype == torch.float16:  # what the snippet avoids: the sum kept in float16
        e = (scores - scores.amax(-1, keepdim=True)).exp()
        assert e.sum(-1).isinf().all() and (e / e.sum(-1, keepdim=True) == 0).all()
