"""snippets/online_softmax.py: any split of the keys, merged by log-sum-exp, equals SDPA."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import AuxRequest, flex_attention

import snippets.online_softmax as mod
from snippets.online_softmax import attend_part, merge, online_attention, scores
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "lse of the padding part: [-inf]",
        "merged parts equal F.scaled_dot_product_attention: True",
        "merged lse equals logsumexp of the scores: True",
        "running max and sum equal it too: True",
    ],
    "flex": [
        "flex lse equals logsumexp of the scores: True",
        "two flex halves, merged, equal SDPA: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def qkv(seed, length, source, d_k=8, d_v=5, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 3, length, d_k, generator=gen, dtype=dtype),
            torch.randn(2, 3, source, d_k, generator=gen, dtype=dtype),
            torch.randn(2, 3, source, d_v, generator=gen, dtype=dtype))


def split_and_merge(q, k, v, allowed, cuts):
    bounds = [0, *cuts, k.size(-2)]
    parts = [attend_part(q, k[..., a:b, :], v[..., a:b, :], allowed[..., a:b])
             for a, b in zip(bounds, bounds[1:])]
    return merge(torch.stack([o for o, _ in parts]), torch.stack([s for _, s in parts]))


@st.composite
def problems(draw):
    """A mask where every query sees at least one key, and cuts anywhere inside the keys
    (no part is empty); the first `pad` keys are masked for every query."""
    length, source = draw(st.integers(1, 7)), draw(st.integers(1, 12))
    pad = draw(st.integers(0, source - 1))
    bits = draw(st.lists(st.booleans(), min_size=length * source, max_size=length * source))
    allowed = torch.tensor(bits).view(length, source)
    allowed[:, :pad] = False
    allowed[:, -1] = True  # every query sees the last key at least
    cuts = sorted(draw(st.sets(st.integers(1, source - 1), max_size=4))) if source > 1 else []
    return length, source, allowed, cuts, draw(st.integers(0, 2**16))


@PROPERTY_SETTINGS
@given(problems())
def test_property_any_split_merged_equals_sdpa(problem):
    length, source, allowed, cuts, seed = problem
    q, k, v = qkv(seed, length, source)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    lse_ref = torch.logsumexp(scores(q, k, allowed), dim=-1)
    out, lse = split_and_merge(q, k, v, allowed, cuts)
    sb.assert_close(out, ref)
    sb.assert_close(lse, lse_ref)
    run_out, run_lse = online_attention(q, k, v, allowed, cuts=cuts)
    sb.assert_close(run_out, ref)
    sb.assert_close(run_lse, lse_ref)


@pytest.mark.parametrize("cuts", [[4], [2, 4], [3, 4, 9], [1, 2, 3, 4]])
def test_first_parts_fully_masked_get_weight_zero(cuts):
    q, k, v = qkv(1, 5, 11)
    allowed = torch.ones(5, 11, dtype=torch.bool)
    allowed[:, :4] = False  # the first parts hold padding only
    first_out, first_lse = attend_part(q, k[..., :cuts[0], :], v[..., :cuts[0], :],
                                       allowed[:, :cuts[0]])
    assert (first_out == 0).all() and torch.isneginf(first_lse).all()
    out, _ = split_and_merge(q, k, v, allowed, cuts)
    run_out, _ = online_attention(q, k, v, allowed, cuts=cuts)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    for got in (out, run_out):
        assert not got.isnan().any()
        sb.assert_close(got, ref)


def test_without_the_guard_the_running_form_gives_nan():
    """The guard is needed: exp(-inf - (-inf)) is nan, which is what it prevents."""
    s = torch.full((1, 3), -math.inf)
    m_new = s.amax(dim=-1)
    assert torch.isnan(torch.exp(s - m_new[..., None])).all()
    assert torch.isnan(torch.exp(torch.tensor(-math.inf) - m_new)).all()


def test_a_query_with_no_key_at_all_gets_zeros_and_minus_infinity():
    q, k, v = qkv(2, 3, 6)
    allowed = torch.ones(3, 6, dtype=torch.bool)
    allowed[0] = False
    out, lse = split_and_merge(q, k, v, allowed, [2, 5])
    run_out, run_lse = online_attention(q, k, v, allowed, cuts=[2, 5])
    for o, s in ((out, lse), (run_out, run_lse)):
        assert (o[..., 0, :] == 0).all() and torch.isneginf(s[..., 0]).all()
        assert s[..., 1:].isfinite().all()
        sb.assert_close(o[..., 1:, :], F.scaled_dot_product_attention(
            q, k, v, attn_mask=allowed)[..., 1:, :])


def test_merge_is_associative_and_order_free():
    q, k, v = qkv(3, 4, 12)
    allowed = torch.ones(4, 12, dtype=torch.bool)
    parts = [attend_part(q, k[..., a:a + 3, :], v[..., a:a + 3, :]) for a in range(0, 12, 3)]
    outs, lses = torch.stack([o for o, _ in parts]), torch.stack([s for _, s in parts])
    flat = merge(outs, lses)
    left = merge(*map(torch.stack, zip(merge(outs[:2], lses[:2]), merge(outs[2:], lses[2:]))))
    shuffled = merge(outs[[2, 0, 3, 1]], lses[[2, 0, 3, 1]])
    for got in (left, shuffled):
        sb.assert_close(got[0], flat[0])
        sb.assert_close(got[1], flat[1])
    sb.assert_close(flat[0], F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))


def test_large_scores_stay_finite():
    q, k, v = qkv(4, 3, 9)
    q = q * 1e3  # scores near 1e3: exp without the maximum would overflow
    allowed = torch.ones(3, 9, dtype=torch.bool)
    out, lse = split_and_merge(q, k, v, allowed, [3, 6])
    assert out.isfinite().all() and lse.isfinite().all()
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_with_float32_statistics(dtype):
    """Kernels keep the statistics in float32 (FlashInfer expects its lse so): the snippets,
    called with half inputs, return a float32 lse, and both the merged parts and the running form,
    over 4096 keys in 64 parts, stay as close to float64 attention as SDPA in that dtype does
    (statistics kept in bfloat16 were 6.5 times further off)."""
    q, k, v = qkv(5, 6, 4096, dtype=torch.float32)
    allowed = torch.ones(6, 4096, dtype=torch.bool)
    allowed[:, :3] = False
    exact = F.scaled_dot_product_attention(*(t.double() for t in (q, k, v)), attn_mask=allowed)
    q, k, v = (t.to(dtype) for t in (q, k, v))
    sdpa_error = (F.scaled_dot_product_attention(q, k, v, attn_mask=allowed).double()
                  - exact).abs().max()
    cuts = list(range(64, 4096, 64))
    out, lse = split_and_merge(q, k, v, allowed, cuts)
    run_out, run_lse = online_attention(q, k, v, allowed, cuts=cuts)
    assert lse.dtype == run_lse.dtype == torch.float32 and run_out.dtype == dtype
    for got in (out.to(dtype), run_out):
        assert (got.double() - exact).abs().max() <= 2 * sdpa_error


def test_flex_lse_merges_with_a_masked_first_part():
    """flex_attention's lse is a part's lse: two calls over halves of the keys, the first
    half hidden from every query by the mask, merged, equal SDPA over all keys."""
    q, k, v = (t.float() for t in qkv(6, 8, 8, d_v=8))
    allowed = torch.ones(8, 8, dtype=torch.bool)
    allowed[:, :4] = False
    halves = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, visible in ((0, False), (4, True)):
            halves.append(flex_attention(
                q, k[..., a:a + 4, :], v[..., a:a + 4, :],
                score_mod=None if visible else (lambda s, b, h, i, j: s - math.inf),
                return_aux=AuxRequest(lse=True)))
    assert torch.isneginf(halves[0][1].lse).all()
    assert (halves[0][0] == 0).all()
    out, _ = merge(torch.stack([o for o, _ in halves]), torch.stack([a.lse for _, a in halves]))
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))


def test_every_tensor_follows_the_inputs_device():
    q, k, v = qkv(7, 4, 9)
    allowed = torch.ones(4, 9, dtype=torch.bool)
    expected = (online_attention(q, k, v, allowed, cuts=[2, 5]),
                split_and_merge(q, k, v, allowed, [2, 5]))
    with sb.stray_tensors_on_meta():
        got = (online_attention(q, k, v, allowed, cuts=[2, 5]),
               split_and_merge(q, k, v, allowed, [2, 5]))
    for (a_out, a_lse), (e_out, e_lse) in zip(got, expected):
        sb.assert_same_device_and_values(a_out, e_out)
        sb.assert_same_device_and_values(a_lse, e_lse)


def flashinfer_merge_state(v_a, s_a, v_b, s_b):
    """FlashInfer's MergeStateKernel (include/flashinfer/attention/cascade.cuh @00b57fe)
    transcribed: the weights are powers of 2, the lse is in base 2."""
    s_max = torch.maximum(s_a, s_b)
    w_a, w_b = torch.exp2(s_a - s_max), torch.exp2(s_b - s_max)
    v = (w_a[..., None] * v_a + w_b[..., None] * v_b) / (w_a + w_b)[..., None]
    return v, torch.log2(w_a + w_b) + s_max


def test_flashinfer_merge_needs_a_base_2_lse():
    """The page: a natural lse times log2(e) before FlashInfer's merge and the result times
    ln 2 after it give the exact merge; the natural lse passed as it is gives wrong weights."""
    q, k, v = qkv(11, 4, 12)
    (o_a, l_a), (o_b, l_b) = (attend_part(q, k[..., a:b, :], v[..., a:b, :])
                              for a, b in ((0, 5), (5, 12)))
    ref_out, ref_lse = merge(torch.stack([o_a, o_b]), torch.stack([l_a, l_b]))
    out, lse2 = flashinfer_merge_state(o_a, l_a * math.log2(math.e), o_b,
                                       l_b * math.log2(math.e))
    sb.assert_close(out, ref_out)
    sb.assert_close(lse2 * math.log(2), ref_lse)
    wrong, _ = flashinfer_merge_state(o_a, l_a, o_b, l_b)
    assert not torch.allclose(wrong, ref_out, atol=1e-3)
