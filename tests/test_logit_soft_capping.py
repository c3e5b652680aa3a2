"""snippets/logit_soft_capping.py: against FlexAttention's score_mod, against SDPA
with the cap folded into an additive mask, and the direct formula; what the cap
bounds in float16 and what it does not."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import snippets.logit_soft_capping as mod
from snippets.logit_soft_capping import soft_cap, soft_capped_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "matches softmax(score_mod(scores)) V: True",
        "max |score| before the cap: 169.7",
        "max |score| after the cap:  49.9",
        "order of the scores kept: True",
        "score = 0.5 cap: gradient 0.7864",
        "score = 1.0 cap: gradient 0.4200",
        "score = 2.0 cap: gradient 0.0707",
        "score = 4.0 cap: gradient 0.0013",
    ],
    "half_precision": [
        "float16 q @ k^T has inf: True",
        "scores in float32, capped: output finite: True torch.float16",
        "exp(50) finite in float32: True in float16: False",
        "largest cap whose S * exp(cap) fits float16, S = 8: 9.01",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64
T = 16  # FlexAttention runs eagerly on CPU: keep it tiny
FLEX_WARNING = "ignore:flex_attention called without torch.compile"

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "logit_soft_capping.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


@pytest.fixture(scope="module")
def causal_block_mask():
    return create_block_mask(lambda b, h, q_idx, kv_idx: q_idx >= kv_idx, None, None, T, T, device="cpu")


def qkv(seed, *shape, dtype=F64, spread=20.0):
    gen = torch.Generator().manual_seed(seed)
    q = spread * torch.randn(*shape, generator=gen, dtype=dtype)
    k, v = torch.randn(2, *shape, generator=gen, dtype=dtype).unbind(0)
    return q, k, v


@pytest.mark.filterwarnings(FLEX_WARNING)
@pytest.mark.parametrize("cap", [1.0, 30.0, 50.0])
def test_matches_flex_attention_score_mod_with_a_block_mask(cap, causal_block_mask):
    q, k, v = qkv(0, 1, 2, T, 8)
    flex = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: soft_cap(s, cap), block_mask=causal_block_mask)
    attend = torch.ones(T, T, dtype=torch.bool).tril()
    sb.assert_close(soft_capped_attention(q, k, v, cap=cap, attend=attend), flex)


@pytest.mark.filterwarnings(FLEX_WARNING)
def test_matches_flex_attention_without_a_mask_and_with_a_scale():
    q, k, v = qkv(1, 2, 1, T, 4)
    flex = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: soft_cap(s, 5.0), scale=0.3)
    sb.assert_close(soft_capped_attention(q, k, v, cap=5.0, scale=0.3), flex)


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 6),
    source=st.integers(1, 6),
    d=st.integers(1, 6),
    cap=st.sampled_from([0.5, 5.0, 50.0]),
    density=st.sampled_from([None, 0.0, 0.5, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_property_matches_sdpa_with_the_cap_as_an_additive_mask(length, source, d, cap, density, seed):
    """SDPA adds attn_mask to the scaled scores: soft_cap(s) - s turns s into soft_cap(s)."""
    gen = torch.Generator().manual_seed(seed)
    q = 20 * torch.randn(2, 2, length, d, generator=gen, dtype=F64)
    k, v = torch.randn(2, 2, 2, source, d, generator=gen, dtype=F64).unbind(0)
    s = q @ k.transpose(-2, -1) / math.sqrt(d)
    bias = soft_cap(s, cap) - s
    attend = None
    if density is not None:
        attend = torch.rand(2, 1, length, source, generator=gen) < density
        bias = bias.masked_fill(~attend, float("-inf"))
    ours = soft_capped_attention(q, k, v, cap=cap, attend=attend)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_matches_the_direct_formula():
    q, k, v = qkv(2, 3, 5, 6)
    e = torch.exp(30.0 * torch.tanh(q @ k.transpose(-2, -1) / math.sqrt(6) / 30.0))
    sb.assert_close(soft_capped_attention(q, k, v, cap=30.0), (e / e.sum(-1, keepdim=True)) @ v)


@PROPERTY_SETTINGS
@given(
    x=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=20),
    cap=st.floats(0.1, 100.0),
)
def test_property_soft_cap_is_bounded_odd_and_monotone(x, cap):
    t = torch.tensor(sorted(x), dtype=F64)
    y = soft_cap(t, cap)
    assert (y.abs() <= cap).all()
    sb.assert_close(soft_cap(-t, cap), -y)
    assert (y.diff() >= 0).all()


def test_soft_cap_is_about_the_identity_well_below_the_cap():
    x = torch.linspace(-1, 1, 41, dtype=F64)
    # cap tanh(x / cap) = x - x^3 / (3 cap^2) + ...
    assert (soft_cap(x, 50.0) - x).abs().max() < 1 / (3 * 50.0**2)


def test_gradient_is_one_minus_tanh_squared():
    s = torch.linspace(-200, 200, 81, dtype=F64, requires_grad=True)
    soft_cap(s, 50.0).sum().backward()
    sb.assert_close(s.grad, 1 - torch.tanh(s.detach() / 50.0) ** 2)
    assert s.grad[0] < 2e-3 and s.grad[40] == 1.0  # 4 caps away: 0.0013


def test_masking_before_the_cap_leaks_weight_to_masked_keys():
    q, k, v = qkv(3, 1, 5, 5, spread=1.0)
    attend = torch.ones(5, 5, dtype=torch.bool).tril()
    s = q @ k.transpose(-2, -1) / math.sqrt(5)
    cap = 5.0
    wrong = torch.softmax(soft_cap(s.masked_fill(~attend, torch.finfo(F64).min), cap), -1)
    assert (wrong[..., ~attend] > 1e-6).all()  # about exp(-cap - s) each
    ours = torch.softmax(soft_cap(s, cap).masked_fill(~attend, float("-inf")), -1)
    assert (ours[..., ~attend] == 0).all()
    sb.assert_close(soft_capped_attention(q, k, v, cap=cap, attend=attend), ours @ v)


def test_fully_masked_row_gives_zeros():
    q, k, v = qkv(4, 1, 3, 4)
    attend = torch.ones(3, 3, dtype=torch.bool)
    attend[0] = False
    out = soft_capped_attention(q, k, v, cap=10.0, attend=attend)
    assert (out[:, 0] == 0).all() and out.isfinite().all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_inputs_stay_finite_and_keep_their_dtype(dtype):
    q, k, v = qkv(5, 1, 2, 8, 64, dtype=torch.float32, spread=1.0)
    q, k = 60 * q, 60 * k  # |q.k| beyond 65504
    attend = torch.ones(8, 8, dtype=torch.bool).tril()
    low = soft_capped_attention(q.to(dtype), k.to(dtype), v.to(dtype), cap=50.0, attend=attend)
    assert low.dtype == dtype and low.isfinite().all()
    ref = soft_capped_attention(q.to(dtype).float(), k.to(dtype).float(), v.to(dtype).float(), cap=50.0, attend=attend)
    sb.assert_close(low.float(), ref, dtype=dtype)
    if dtype == torch.float16:  # the product itself, in float16, does overflow
        assert (q.half() @ k.half().transpose(-2, -1)).isinf().any()


def test_exp_of_the_cap_fits_float32_but_not_float16():
    assert torch.tensor(50.0).exp().isfinite()
    assert torch.tensor(50.0, dtype=torch.float16).exp().isinf()
    assert torch.tensor(11.0, dtype=torch.float16).exp().isfinite()
    assert torch.tensor(11.1, dtype=torch.float16).exp().isinf()


def test_gradcheck_float64():
    q, k, v = (t.requires_grad_() for t in qkv(6, 1, 3, 4, spread=5.0))
    attend = torch.ones(3, 3, dtype=torch.bool).tril()
    fn = lambda q, k, v: soft_capped_attention(q, k, v, cap=4.0, attend=attend)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (q, k, v))
