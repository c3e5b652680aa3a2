"""snippets/linear_attention.py: parallel, recurrent and naive forms agree; the
multiply-add counts agree with PyTorch's FlopCounterMode."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

import snippets.linear_attention as mod
from snippets.linear_attention import (
    feature_map,
    linear_attention,
    linear_attention_recurrent,
    multiply_adds,
)
from snippets.scaled_dot_product_attention import scaled_dot_product_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "non-causal: phi(Q) (phi(K)^T V) equals the T x T form: True",
        "causal: recurrent (RNN) form equals the parallel form: True",
        "output shape: (2, 4, 10, 8)",
        "earlier outputs unchanged: True",
    ],
    "cost": [
        "multiply-adds per head, d_k = d_v = 64:",
        "     T         softmax        linear    ratio",
        "    64         524,288       528,384     0.99",
        "   256       8,388,608     2,113,536     3.97",
        "  1024     134,217,728     8,454,144    15.88",
        "  4096   2,147,483,648    33,816,576    63.50",
        " 16384  34,359,738,368   135,266,304   254.02",
        "linear form needs fewer multiply-adds from T = 65",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "linear_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def qkv(seed, shape_q, shape_k, d_v, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*shape_q, generator=gen, dtype=dtype)
    k = torch.randn(*shape_k, generator=gen, dtype=dtype)
    v = torch.randn(*shape_k[:-1], d_v, generator=gen, dtype=dtype)
    return q, k, v


def naive(q, k, v, causal):
    """The paper's sum written with Python loops over one (T, d) sequence."""
    out = torch.empty(q.size(0), v.size(1), dtype=q.dtype)
    for i in range(q.size(0)):
        keys = range(i + 1) if causal else range(k.size(0))
        sims = [float(feature_map(q[i]) @ feature_map(k[j])) for j in keys]
        total = sum(sims)
        out[i] = sum(s * v[j] for s, j in zip(sims, keys)) / total
    return out


def test_feature_map_is_elu_plus_one_and_positive():
    x = torch.linspace(-30, 30, 601, dtype=F64)
    expected = torch.where(x > 0, x + 1, torch.exp(x))
    sb.assert_close(feature_map(x), expected)
    assert (feature_map(x) > 0).all()


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 6),
    source=st.integers(1, 6),
    d_k=st.integers(1, 5),
    d_v=st.integers(1, 5),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_parallel_form_equals_naive_sum(length, source, d_k, d_v, causal, seed):
    source = length if causal else source
    q, k, v = qkv(seed, (length, d_k), (source, d_k), d_v)
    out = linear_attention(q, k, v, causal=causal, eps=0.0)
    sb.assert_close(out, naive(q, k, v, causal))


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    heads=st.integers(1, 3),
    length=st.integers(1, 9),
    d_k=st.integers(1, 6),
    d_v=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_property_recurrent_equals_parallel_causal(batch, heads, length, d_k, d_v, seed):
    q, k, v = qkv(seed, (batch, heads, length, d_k), (batch, heads, length, d_k), d_v)
    recurrent = linear_attention_recurrent(q, k, v)
    assert recurrent.shape == (batch, heads, length, d_v)
    sb.assert_close(recurrent, linear_attention(q, k, v, causal=True))


def test_recurrent_equals_parallel_in_float32():
    q, k, v = qkv(1, (2, 3, 16, 8), (2, 3, 16, 8), 8, torch.float32)
    sb.assert_close(linear_attention_recurrent(q, k, v), linear_attention(q, k, v, causal=True))


def test_causal_last_row_is_the_non_causal_result():
    """The last query of a causal sequence sees every key."""
    q, k, v = qkv(2, (2, 7, 4), (2, 7, 4), 3)
    causal = linear_attention(q, k, v, causal=True)
    sb.assert_close(causal[:, -1], linear_attention(q, k, v)[:, -1])


def test_causal_needs_as_many_queries_as_keys():
    q, k, v = qkv(3, (4, 2), (5, 2), 2)
    with pytest.raises(ValueError, match="T == S"):
        linear_attention(q, k, v, causal=True)


def test_linear_attention_is_not_softmax_attention():
    q, k, v = qkv(4, (1, 6, 4), (1, 6, 4), 4)
    softmax = scaled_dot_product_attention(q, k, v)
    assert not torch.allclose(linear_attention(q, k, v), softmax, atol=1e-3)


def test_eps_keeps_vanishing_features_finite():
    """elu(x) + 1 = (e^x - 1) + 1 is exactly 0 once e^x is below half the spacing of the
    numbers next to 1 (the docstring's thresholds): from about x = -17 in float32 and x = -37
    in float64, far above the -745 where e^x itself underflows; eps keeps the output finite."""
    for dtype, zero, positive in ((torch.float32, -17.5, -16.0), (F64, -37.5, -36.0)):
        assert feature_map(torch.tensor(zero, dtype=dtype)) == 0
        assert feature_map(torch.tensor(positive, dtype=dtype)) > 0
        assert torch.tensor(zero, dtype=dtype).exp() > 0  # not an underflow of exp
        q = torch.full((3, 2), zero - 1, dtype=dtype)
        k, v = q.clone(), torch.ones(3, 2, dtype=dtype)
        assert (feature_map(q) == 0).all()
        for out in (linear_attention(q, k, v), linear_attention(q, k, v, causal=True),
                    linear_attention_recurrent(q, k, v)):
            assert out.isfinite().all()


def test_gradcheck_float64():
    q, k, v = (t.requires_grad_() for t in qkv(5, (1, 4, 3), (1, 4, 3), 2))
    for fn in (lambda q, k, v: linear_attention(q, k, v),
               lambda q, k, v: linear_attention(q, k, v, causal=True),
               linear_attention_recurrent):
        assert torch.autograd.gradcheck(fn, (q, k, v))


@pytest.mark.parametrize("T,d_k,d_v", [(1, 1, 1), (12, 8, 8), (20, 4, 6), (7, 16, 3)])
def test_multiply_adds_match_flop_counter(T, d_k, d_v):
    """FlopCounterMode counts 2 FLOPs per multiply-add of every matmul."""
    q, k, v = qkv(6, (1, T, d_k), (1, T, d_k), d_v, torch.float32)
    with FlopCounterMode(display=False) as counter:
        linear_attention(q, k, v)
    assert counter.get_total_flops() == 2 * multiply_adds(T, d_k, d_v, form="linear")
    with FlopCounterMode(display=False) as counter:
        scaled_dot_product_attention(q, k, v)
    assert counter.get_total_flops() == 2 * multiply_adds(T, d_k, d_v, form="softmax")


def test_cost_crossover_is_near_d():
    # T^2 (d_k + d_v) < 2 T d_k d_v + T d_k  <=>  T < d + 1/2 for d_k = d_v = d
    for d in (8, 64, 128):
        assert multiply_adds(d, d, d, form="linear") > multiply_adds(d, d, d, form="softmax")
        assert multiply_adds(d + 1, d, d, form="linear") < multiply_adds(d + 1, d, d, form="softmax")
    ratio = multiply_adds(4096, 64, 64, form="softmax") / multiply_adds(4096, 64, 64, form="linear")
    assert math.isclose(ratio, 2 * 4096 / (2 * 64 + 1))


def test_unknown_form_raises():
    with pytest.raises(ValueError, match="form"):
        multiply_adds(4, 2, 2, form="sparse")


@pytest.mark.parametrize("causal", [False, True])
def test_float16_inputs_past_a_thousand_keys_are_not_zeros(causal):
    """In float16 the denominator of 2048 keys of width 64 passes 65504 (inf): summed in the input's
    dtype, whole rows came out as 0. The snippet sums in float32: each output is within float16's
    rounding of float64's, in the parallel and the recurrent form."""
    gen = torch.Generator().manual_seed(6)
    q, k, v = torch.randn(3, 1, 1, 2048, 64, generator=gen).unbind(0)
    half = [x.half() for x in (q, k, v)]
    exact = linear_attention(*[x.double() for x in half], causal=causal)
    out = linear_attention(*half, causal=causal)
    assert out.dtype == torch.float16 and out.isfinite().all()
    eps = torch.finfo(torch.float16).eps
    torch.testing.assert_close(out.double(), exact, rtol=eps, atol=eps * exact.abs().max().item())
    if causal:
        ours = linear_attention_recurrent(*[x[..., :1100, :] for x in half])
        torch.testing.assert_close(ours.double(), exact[..., :1100, :], rtol=eps,
                                   atol=eps * exact.abs().max().item())
