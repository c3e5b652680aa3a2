"""snippets/multiplicative_attention.py: dot and general against SDPA with
scale=1.0, concat against additive attention with split weights, and the
variance of unscaled dot products."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.multiplicative_attention as mod
from snippets.additive_attention import AdditiveAttention
from snippets.multiplicative_attention import LuongScore, luong_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "dot = SDPA with scale=1.0: True",
        "general = SDPA on (h_t W, h_s), scale=1.0: True",
        "SDPA default = dot on h_t / sqrt(d): True",
        "concat weights shape: (2, 3, 5)",
    ],
    "scaling": [
        "  d_k   var q.k  var q.k/sqrt(d_k)  top weight  scaled",
        "    4       4.0              1.006       0.475   0.262",
        "   16      15.5              0.970       0.677   0.238",
        "   64      63.9              0.998       0.851   0.253",
        "  256     242.9              0.949       0.921   0.248",
        " 1024    1036.3              1.012       0.961   0.247",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "multiplicative_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def states(seed, batch, length, source, d_t, d_s):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, length, d_t, generator=gen, dtype=F64),
            torch.randn(batch, source, d_s, generator=gen, dtype=F64))


def random_attend(seed, batch, length, source):
    attend = torch.rand(batch, length, source, generator=torch.Generator().manual_seed(seed)) < 0.6
    attend[..., -1] = True
    return attend


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    d=st.integers(1, 8),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_dot_is_sdpa_with_scale_one(batch, length, source, d, masked, seed):
    h_t, h_s = states(seed, batch, length, source, d, d)
    attend = random_attend(seed, batch, length, source) if masked else None
    context, weights = luong_attention(LuongScore(d, d, kind="dot"), h_t, h_s, attend=attend)
    sb.assert_close(context, F.scaled_dot_product_attention(h_t, h_s, h_s, attn_mask=attend, scale=1.0))
    sb.assert_close(weights.sum(-1), torch.ones(batch, length, dtype=F64))


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    d_t=st.integers(1, 6),
    d_s=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_property_general_is_sdpa_on_projected_queries_or_keys(length, source, d_t, d_s, seed):
    torch.manual_seed(seed)
    score = LuongScore(d_t, d_s, kind="general").double()
    h_t, h_s = states(seed, 2, length, source, d_t, d_s)
    W = score.w.weight.T  # d_t x d_s
    context, _ = luong_attention(score, h_t, h_s)
    sb.assert_close(context, F.scaled_dot_product_attention(h_t @ W, h_s, h_s, scale=1.0))
    # h_t W h_s^T = h_t (h_s W^T)^T: the matrix can sit on either side
    sb.assert_close(score(h_t, h_s), h_t @ (h_s @ W.T).transpose(-2, -1))


def test_concat_is_additive_attention_with_split_weights():
    torch.manual_seed(1)
    concat = LuongScore(3, 5, kind="concat", d_attn=4).double()
    additive = AdditiveAttention(3, 5, 4).double()
    W_c = concat.w_c.weight.T  # (3 + 5) x 4: [h_t; h_s] W_c = h_t W_c[:3] + h_s W_c[3:]
    with torch.no_grad():
        additive.w_q.weight.copy_(W_c[:3].T)
        additive.w_k.weight.copy_(W_c[3:].T)
        additive.v.weight.copy_(concat.v.weight)
    h_t, h_s = states(2, 2, 4, 6, 3, 5)
    sb.assert_close(concat(h_t, h_s), additive.scores(h_t, h_s))


def test_query_with_no_key_gets_zeros_not_nan():
    h_t, h_s = states(7, 1, 3, 4, 2, 2)
    attend = torch.ones(3, 4, dtype=torch.bool)
    attend[2] = False
    context, weights = luong_attention(LuongScore(2, 2, kind="dot"), h_t, h_s, attend=attend)
    assert (context[:, 2] == 0).all() and (weights[:, 2] == 0).all() and not context.isnan().any()
    sb.assert_close(context, F.scaled_dot_product_attention(h_t, h_s, h_s, attn_mask=attend, scale=1.0))


def test_dot_scores_by_hand():
    h_t = torch.tensor([[[1.0, 2.0]]], dtype=F64)
    h_s = torch.tensor([[[3.0, -1.0], [0.5, 0.5]]], dtype=F64)
    assert LuongScore(2, 2, kind="dot")(h_t, h_s).tolist() == [[[1.0, 1.5]]]


def test_variance_of_unscaled_dot_products_grows_with_d_k():
    """Var(q.k) = sum_i Var(q_i k_i) = d_k for independent N(0, 1) entries."""
    gen = torch.Generator().manual_seed(3)
    for d_k in (2, 32, 512):
        q, k = torch.randn(2, 20000, d_k, generator=gen, dtype=F64).unbind(0)
        dots = (q * k).sum(-1)
        assert math.isclose(dots.var().item(), d_k, rel_tol=0.05)
        assert math.isclose((dots / math.sqrt(d_k)).var().item(), 1.0, rel_tol=0.05)


def test_unscaled_softmax_saturates():
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(500, 1024, generator=gen, dtype=F64)
    keys = torch.randn(16, 1024, generator=gen, dtype=F64)
    top = (q @ keys.T).softmax(-1).amax(-1).mean()
    top_scaled = (q @ keys.T / 32).softmax(-1).amax(-1).mean()
    assert top > 0.9 and top_scaled < 0.35


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_scores_are_computed_in_float32(dtype):
    gen = torch.Generator().manual_seed(5)
    h_t = 80 * torch.randn(1, 4, 128, generator=gen)
    h_s = 80 * torch.randn(1, 6, 128, generator=gen)
    low_t, low_s = h_t.to(dtype), h_s.to(dtype)
    scores = LuongScore(128, 128, kind="dot")(low_t, low_s)
    assert scores.dtype == torch.float32 and scores.isfinite().all()
    context, _ = luong_attention(LuongScore(128, 128, kind="dot"), low_t, low_s)
    assert context.dtype == dtype and context.isfinite().all()
    sb.assert_close(scores, low_t.float() @ low_s.float().transpose(-2, -1), dtype=torch.float32)
    if dtype == torch.float16:  # some |h_t . h_s| > 65504
        assert (low_t @ low_s.transpose(-2, -1)).isinf().any()  # std of h_t . h_s: 72 000


def test_gradcheck_float64():
    torch.manual_seed(6)
    for kind in ("dot", "general", "concat"):
        score = LuongScore(3, 3, kind=kind).double()
        h_t, h_s = (t.requires_grad_() for t in states(6, 1, 2, 4, 3, 3))
        assert torch.autograd.gradcheck(lambda a, b: luong_attention(score, a, b)[0], (h_t, h_s))


def test_invalid_arguments_raise():
    with pytest.raises(ValueError, match="kind"):
        LuongScore(4, 4, kind="location")
    with pytest.raises(ValueError, match="d_t == d_s"):
        LuongScore(4, 3, kind="dot")
