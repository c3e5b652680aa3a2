"""snippets/nope.py against SDPA and an attention written out row by row, Hugging Face's
no_rope_layers and temperature formulas as written there, and the RoPE entry (which does depend
on positions)."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.nope as mod
from snippets.nope import no_rope_layers, nope_attention, nope_query_scale
from snippets.rotary_position_embedding import apply_rope
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "causal=False: shuffling the input shuffles the output: True",
        "causal=True: shuffling the input shuffles the output: False",
        "causal=False: [0.1667, 0.1667, 0.1667, 0.1667, 0.1667, 0.1667]",
        "causal=True: [1.0, 0.5, 0.3333, 0.25, 0.2, 0.1667]",
    ],
    "layers": [
        "no_rope_layers[:8]: [1, 1, 1, 0, 1, 1, 1, 0]",
        "NoPE layers (12 of 48): [4, 8, 12, 16] ... 48",
        "SmolLM3, 36 layers: 9 NoPE layers",
        "query at position         0: times 1.0000",
        "query at position      8190: times 1.0000",
        "query at position      8191: times 1.0693",
        "query at position     65535: times 1.2197",
        "query at position   1048575: times 1.4860",
        "q * s is SDPA with scale s / sqrt(d): True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def random(*shape, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


def by_rows(x, w_q, w_k, w_v, causal):
    """Attention written out query by query, with no mask tensor and no SDPA."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    rows = []
    for i in range(x.size(0)):
        seen = i + 1 if causal else x.size(0)
        weights = torch.softmax(k[:seen] @ q[i] / math.sqrt(q.size(-1)), dim=0)
        rows.append(weights @ v[:seen])
    return torch.stack(rows)


@pytest.mark.parametrize("causal", [False, True])
def test_nope_attention_is_sdpa_and_the_written_out_attention(causal):
    x = random(7, 12, seed=1)
    w_q, w_k, w_v = random(3, 12, 12, seed=2)
    sb.assert_close(nope_attention(x, w_q, w_k, w_v, causal=causal),
                    by_rows(x, w_q, w_k, w_v, causal))


@PROPERTY_SETTINGS
@given(length=st.integers(2, 9), seed=st.integers(0, 2**16), data=st.data())
def test_property_bidirectional_nope_is_permutation_equivariant(length, seed, data):
    """f(P x) = P f(x) for every permutation P: without positions and without a mask,
    attention cannot tell the order of its inputs."""
    perm = torch.tensor(data.draw(st.permutations(list(range(length)))))
    x = random(length, 8, seed=seed)
    w_q, w_k, w_v = random(3, 8, 8, seed=seed + 1)
    out = nope_attention(x, w_q, w_k, w_v, causal=False)
    sb.assert_close(nope_attention(x[perm], w_q, w_k, w_v, causal=False), out[perm])


def test_causal_nope_is_equivariant_for_no_permutation_but_the_identity():
    """Every one of the 119 other orders of 5 tokens changes some output: the causal mask
    gives each token a different set of keys, and so a position (Haviv et al., 2022)."""
    x = random(5, 8, seed=3)
    w_q, w_k, w_v = random(3, 8, 8, seed=4)
    out = nope_attention(x, w_q, w_k, w_v, causal=True)
    for order in itertools.permutations(range(5)):
        perm = torch.tensor(order)
        same = torch.allclose(nope_attention(x[perm], w_q, w_k, w_v, causal=True), out[perm])
        assert same == (order == tuple(range(5))), order


def test_causal_mask_lets_a_token_count_its_predecessors():
    """Equal scores, a first token with value 1 and the rest 0: token i (from 1) gets 1 / i
    with the causal mask, and 1 / T everywhere without it."""
    for length in (3, 10, 33):
        q = k = torch.zeros(length, 4, dtype=F64)
        v = torch.zeros(length, 1, dtype=F64)
        v[0] = 1.0
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)[:, 0]
        full = F.scaled_dot_product_attention(q, k, v)[:, 0]
        sb.assert_close(causal, 1.0 / torch.arange(1, length + 1, dtype=F64))
        sb.assert_close(full, torch.full((length,), 1.0 / length, dtype=F64))


def test_a_rope_score_depends_on_the_offset_which_a_nope_score_never_sees():
    """A NoPE score is q . k: no position enters it. The RoPE score of the same q and k changes
    with the offset m - n and only with it (the same at (5, 0) and (55, 50))."""
    q, k = random(2, 1, 16, seed=5)

    def rope(m, n):
        return (apply_rope(q, torch.tensor([m]), layout="half")
                @ apply_rope(k, torch.tensor([n]), layout="half").T).item()

    scores = [rope(m, 0) for m in (0, 5, 50)]
    assert scores[0] == pytest.approx((q @ k.T).item(), abs=1e-5)  # offset 0: the NoPE score
    assert len({round(s, 6) for s in scores}) == 3
    assert rope(55, 50) == pytest.approx(scores[1], abs=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_half_precision_matches_float64(dtype, causal):
    x = random(2, 9, 16, seed=6)
    w_q, w_k, w_v = random(3, 16, 16, seed=7) / 4
    low = nope_attention(x.to(dtype), w_q.to(dtype), w_k.to(dtype), w_v.to(dtype), causal=causal)
    assert low.dtype == dtype
    sb.assert_close(low.double(), nope_attention(x, w_q, w_k, w_v, causal=causal), dtype=dtype)
    if not causal:  # equivariance holds within the dtype's tolerance too
        perm = torch.tensor([4, 0, 8, 2, 6, 1, 3, 5, 7])
        shuffled = nope_attention(x.to(dtype)[:, perm], w_q.to(dtype), w_k.to(dtype),
                                  w_v.to(dtype), causal=False)
        sb.assert_close(shuffled.double(), low.double()[:, perm], dtype=dtype)


@pytest.mark.parametrize("num_layers,interval,nope", [
    (48, 4, [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47]),  # Llama 4 Scout/Maverick: 12 of 48
    (36, 4, [3, 7, 11, 15, 19, 23, 27, 31, 35]),  # SmolLM3: 9 of 36
    (10, 3, [2, 5, 8]),
    (4, 1, [0, 1, 2, 3]),
])
def test_no_rope_layers_is_hugging_faces_default(num_layers, interval, nope):
    """Written out, not recomputed: 0 marks a NoPE layer (counted from 0), 1 a RoPE layer."""
    flags = no_rope_layers(num_layers, interval)
    assert len(flags) == num_layers and set(flags) <= {0, 1}
    assert [i for i, flag in enumerate(flags) if flag == 0] == nope


def test_query_scale_is_llama4s_formula_and_one_below_floor_scale():
    positions = torch.tensor([0, 1, 8190, 8191, 16383, 100_000, 10**7])
    ref = torch.log1p(torch.floor((positions.double() + 1.0) / 8192)) * 0.1 + 1.0
    assert nope_query_scale(positions).dtype == torch.float32
    sb.assert_close(nope_query_scale(positions).double(), ref, dtype=torch.float32)
    assert (nope_query_scale(torch.arange(8191)) == 1).all()
    assert nope_query_scale(torch.tensor([8191])).item() == pytest.approx(1 + 0.1 * math.log(2))
    assert nope_query_scale(torch.tensor([65535])).item() == pytest.approx(1 + 0.1 * math.log(9))
    assert (nope_query_scale(torch.arange(0, 10**6, 977)).diff() >= 0).all()


def test_query_scale_per_position_is_a_per_row_softmax_temperature():
    q, k, v = random(3, 1, 2, 6, 8, seed=8)
    s = nope_query_scale(torch.tensor([0, 8191, 20000, 40000, 70000, 90000]))
    out = F.scaled_dot_product_attention(q * s[:, None], k, v, is_causal=True)
    scores = (q @ k.transpose(-2, -1)) * s[:, None] / math.sqrt(8)
    scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
    sb.assert_close(out, torch.softmax(scores, dim=-1) @ v)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_query_scaled_as_the_docstring_says_stays_half_and_runs_in_sdpa(dtype):
    """As copied into a half-precision model: the scale is float32, the product is cast back,
    SDPA gets three tensors of one dtype and agrees with float64 to the dtype's tolerance."""
    q, k, v = random(3, 1, 2, 6, 8, seed=9)
    s = nope_query_scale(torch.tensor([0, 8191, 20000, 40000, 70000, 90000]))
    qh, kh, vh = q.to(dtype), k.to(dtype), v.to(dtype)
    out = F.scaled_dot_product_attention((qh * s[:, None]).to(qh.dtype), kh, vh, is_causal=True)
    assert out.dtype == dtype
    ref = F.scaled_dot_product_attention(q * s.double()[:, None], k, v, is_causal=True)
    sb.assert_close(out.double(), ref, dtype=dtype)


def test_llama4_nope_decoding_step_needs_the_query_position():
    """The page: a plain NoPE layer needs no positions at decoding time, but Llama 4's NoPE
    layers need the query's absolute position p for tau(p): the same query, keys and values give
    the same output at p = 0 and p = 8190 (tau = 1) and another one at p = 8191 (tau > 1)."""
    q, k, v = random(3, 1, 2, 9, 8, seed=11)
    q = q[..., -1:, :]  # one decoding query over 9 cached keys

    def step(p):
        tau = nope_query_scale(torch.tensor([p])).item()
        return F.scaled_dot_product_attention(q, k, v, scale=tau / math.sqrt(8))

    plain = F.scaled_dot_product_attention(q, k, v)  # no position anywhere
    sb.assert_close(step(0), plain)
    sb.assert_close(step(8190), plain)
    assert not torch.allclose(step(8191), plain, atol=1e-6)
