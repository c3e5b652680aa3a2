"""snippets/attention_temperature.py: a temperature in q, SDPA's `scale=` and a FlexAttention
score_mod give the same attention; Gemma's query_pre_attn_scalar; Llama 4's temperature against
its formula written another way (integer arithmetic, Python's math); Scalable-Softmax against
the paper's n^(s z) form, and what it does to the largest weight as the keys grow."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import snippets.attention_temperature as mod
from snippets.attention_temperature import gemma_scale, llama4_temperature, ssmax_temperature, tempered_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "Gemma 3 27B: scale 0.07715, not 1/sqrt(128) = 0.08839",
        "q scaled first == SDPA scale=: True",
        "SDPA scale= == flex score_mod: True",
        "Llama 4 temperature at position       0: 1.0000",
        "Llama 4 temperature at position    8190: 1.0000",
        "Llama 4 temperature at position    8191: 1.0693",
        "Llama 4 temperature at position   65535: 1.2197",
        "Llama 4 temperature at position 1048575: 1.4860",
        "per-query temperature in q == flex score_mod: True",
    ],
    "ssmax": [
        "   n  softmax  SSMax(s=0.43)",
        "    8  0.9550   0.9259",
        "   64  0.7020   0.9918",
        "  512  0.2251   0.9992",
        " 4096  0.0350   0.9999",
        "32768  0.0045   1.0000",
        "SSMax as a temperature in q == n^(s z) form: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64
T = 8  # FlexAttention runs eagerly on CPU: keep it tiny
FLEX_WARNING = "ignore:flex_attention called without torch.compile"

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "attention_temperature.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def qkv(seed, *shape, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(3, *shape, generator=gen, dtype=dtype).unbind(0)


def by_hand(q, k, v, temperature, scale, causal=False):
    """softmax(t_i * scale * q_i . k_j) v, row by row, with the softmax written out."""
    rows = []
    for i in range(q.size(-2)):
        s = temperature[i] * scale * (q[..., i : i + 1, :] @ k.transpose(-2, -1))[..., 0, :]  # (..., S)
        if causal:
            s = s[..., : i + 1]
        e = torch.exp(s - s.amax(-1, keepdim=True))
        w = e / e.sum(-1, keepdim=True)
        rows.append((w[..., None, :] @ v[..., : w.size(-1), :])[..., 0, :])
    return torch.stack(rows, dim=-2)


# --- three ways to put a number in front of q k^T -------------------------------------------
@pytest.mark.filterwarnings(FLEX_WARNING)
@pytest.mark.parametrize("scale", [144**-0.5, 168**-0.5, 1.0, 0.05])
def test_scaling_q_equals_sdpa_scale_equals_flex_score_mod(scale):
    q, k, v = qkv(0, 1, 2, T, 16)
    pre_scaled = F.scaled_dot_product_attention(q * scale, k, v, scale=1.0)
    by_sdpa = F.scaled_dot_product_attention(q, k, v, scale=scale)
    by_flex = flex_attention(q, k, v, scale=1.0, score_mod=lambda s, b, h, i, j: s * scale)
    flex_scale = flex_attention(q, k, v, scale=scale)
    expected = by_hand(q, k, v, [1.0] * T, scale)
    for out in (pre_scaled, by_sdpa, by_flex, flex_scale):
        sb.assert_close(out, expected)
    # and it is not the default scale, unless the scale is 1/sqrt(16)
    assert not torch.allclose(by_sdpa, F.scaled_dot_product_attention(q, k, v), atol=1e-4)


@pytest.mark.filterwarnings(FLEX_WARNING)
def test_per_query_temperature_three_ways_with_a_causal_block_mask():
    q, k, v = qkv(1, 1, 1, T, 8)
    tau = torch.linspace(0.5, 2.0, T, dtype=F64)
    ours = tempered_attention(q, k, v, tau, causal=True)
    blocks = create_block_mask(lambda b, h, i, j: i >= j, None, None, T, T, device="cpu")
    by_flex = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * tau[i], block_mask=blocks)
    sb.assert_close(ours, by_flex)
    sb.assert_close(ours, by_hand(q, k, v, tau.tolist(), 8**-0.5, causal=True))
    # the temperature is per row: one float for all rows (its mean) is something else
    assert not torch.allclose(ours, tempered_attention(q, k, v, tau.mean().item(), causal=True), atol=1e-4)


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 6),
    d=st.integers(1, 8),
    t=st.floats(0.1, 5.0),
    seed=st.integers(0, 2**16),
)
def test_property_one_temperature_is_sdpa_scale(length, d, t, seed):
    """A single temperature t in q is SDPA with scale = t / sqrt(d_k)."""
    q, k, v = qkv(seed, 2, length, d)
    sb.assert_close(tempered_attention(q, k, v, t), F.scaled_dot_product_attention(q, k, v, scale=t / math.sqrt(d)))


def test_temperature_and_scale_compose():
    """With both, the multiplier is temperature * scale, as for Gemma with a temperature."""
    q, k, v = qkv(2, 1, 1, T, 16)
    ours = tempered_attention(q, k, v, 1.3, scale=gemma_scale(168))
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, scale=1.3 / math.sqrt(168)))


# --- Gemma -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model, head_dim, query_pre_attn_scalar",
    # the 27B models' query_pre_attn_scalar is hidden_size / num_attention_heads
    [("Gemma 2 9B", 256, 256), ("Gemma 2 27B", 128, 4608 // 32), ("Gemma 3 4B", 256, 256),
     ("Gemma 3 27B", 128, 5376 // 32)],
)
def test_gemma_scale_is_the_inverse_square_root(model, head_dim, query_pre_attn_scalar):
    """google/gemma_pytorch's config.py: query_pre_attn_scalar is set only for the 27B models
    (hidden_size / num_attention_heads: 4608 / 32 = 144, 5376 / 32 = 168); the others use
    head_dim (256), and the code multiplies q by query_pre_attn_scalar**-0.5."""
    scale = gemma_scale(query_pre_attn_scalar)
    assert scale == pytest.approx(1 / math.sqrt(query_pre_attn_scalar), rel=1e-15)
    if query_pre_attn_scalar == head_dim:
        assert scale == head_dim**-0.5
    else:  # the 27B models: a smaller multiplier than 1/sqrt(128), a warmer (flatter) softmax
        assert scale < head_dim**-0.5


# --- Llama 4 ---------------------------------------------------------------------------------
def llama4_reference(p, floor_scale=8192, attn_scale=0.1):
    """The same formula written another way: integer floor division and math.log1p, one
    position at a time (Meta's code: log(floor((p + 1) / f) + 1) * a + 1)."""
    return 1.0 + attn_scale * math.log1p((p + 1) // floor_scale)


def test_llama4_temperature_equals_the_formula_written_another_way():
    f = 8192
    positions = [0, 1, f - 2, f - 1, f, 2 * f - 2, 2 * f - 1, 3 * f, 10**5, 10**6, 10**7 - 1]
    ours = llama4_temperature(torch.tensor(positions))
    assert ours.dtype == F64
    for p, tau in zip(positions, ours.tolist()):
        assert tau == pytest.approx(llama4_reference(p), rel=1e-15, abs=0), p


@PROPERTY_SETTINGS
@given(
    p=st.integers(0, 2**31),
    floor_scale=st.sampled_from([1, 7, 4096, 8192]),
    attn_scale=st.sampled_from([0.05, 0.1, 0.5]),
)
def test_property_llama4_temperature_against_the_reference(p, floor_scale, attn_scale):
    ours = llama4_temperature(torch.tensor([p]), floor_scale, attn_scale).item()
    assert ours == pytest.approx(llama4_reference(p, floor_scale, attn_scale), rel=1e-14)


def test_llama4_temperature_is_one_below_8191_and_steps_every_8192():
    tau = llama4_temperature(torch.arange(0, 5 * 8192))
    assert torch.equal(tau[:8191], torch.ones(8191, dtype=F64))  # exactly 1: no effect
    assert (tau.diff() >= 0).all()  # never decreases
    steps = (tau.diff() > 0).nonzero().flatten() + 1
    assert steps.tolist() == [m * 8192 - 1 for m in range(1, 6)]  # 8191, 16383, ..., 40959
    assert tau[8191].item() == pytest.approx(1 + 0.1 * math.log(2))


# --- Scalable-Softmax ------------------------------------------------------------------------
def max_weight(n, gap, temperature=1.0):
    """The largest weight of a softmax over n logits, one of them `gap` above the n - 1 others."""
    z = torch.zeros(n, dtype=F64)
    z[-1] = gap
    return torch.softmax(temperature * z, dim=0)[-1].item()


def test_softmax_max_weight_fades_with_n_and_ssmax_keeps_it():
    """Nakanishi's Figure 1 case (one logit +3, the rest -2, s = 0.43): softmax's largest weight
    is 1 / (1 + (n - 1) e^-5), which falls toward 0; SSMax's is 1 / (1 + (n - 1) n^(-5 s)), which
    rises toward 1 because s * 5 = 2.15 > 1."""
    ns = [2**j for j in range(1, 18)]
    plain = [max_weight(n, 5.0) for n in ns]
    ssmax = [max_weight(n, 5.0, ssmax_temperature(torch.tensor([n]), 0.43).item()) for n in ns]
    for n, a, b in zip(ns, plain, ssmax):
        assert a == pytest.approx(1 / (1 + (n - 1) * math.exp(-5)), rel=1e-12)
        assert b == pytest.approx(1 / (1 + (n - 1) * n ** (-5 * 0.43)), rel=1e-12)
    assert all(x > y for x, y in zip(plain, plain[1:]))  # strictly fading
    assert plain[-1] < 0.002  # 0.0011 at n = 2^17
    assert all(y > x for x, y in zip(ssmax, ssmax[1:]))  # rising toward 1
    assert ssmax[-1] > 0.9999


@pytest.mark.parametrize("s, limit", [(0.1, 0.0), (0.2, 0.5), (0.43, 1.0)])
def test_ssmax_keeps_the_weight_only_when_s_times_the_gap_exceeds_one(s, limit):
    """(n - 1) n^(-s gap) tends to 0 if s * gap > 1, to 1 if s * gap = 1, to infinity if
    s * gap < 1: SSMax does not keep every maximum, only those whose gap is above 1 / s."""
    gap = 5.0
    weights = [max_weight(n, gap, s * math.log(n)) for n in (2**10, 2**16, 2**22)]
    assert weights[-1] == pytest.approx(limit, abs=1e-3)
    # and the trend points at the limit
    assert abs(weights[-1] - limit) < abs(weights[0] - limit)


def test_ssmax_is_the_papers_power_form():
    """z -> n^(s z_i) / sum_j n^(s z_j), written with torch.pow, equals softmax(s log(n) z)."""
    gen = torch.Generator().manual_seed(5)
    for n in (1, 3, 100):
        z = torch.randn(n, generator=gen, dtype=F64)
        powers = torch.pow(torch.tensor(float(n), dtype=F64), 0.43 * z)
        t = ssmax_temperature(torch.tensor([n]), 0.43)
        sb.assert_close(torch.softmax(t * z, dim=0), powers / powers.sum())


@pytest.mark.filterwarnings(FLEX_WARNING)
def test_causal_ssmax_as_a_flex_score_mod():
    """Query i sees i + 1 keys: the score_mod multiplies by s log(q_idx + 1)."""
    q, k, v = qkv(3, 1, 2, T, 8)
    s = 0.43
    ours = tempered_attention(q, k, v, ssmax_temperature(torch.arange(1, T + 1), s), causal=True)

    def ssmax_causal(score, b, h, i, j):
        return torch.where(i >= j, score * s * torch.log(i.to(score.dtype) + 1), float("-inf"))

    sb.assert_close(ours, flex_attention(q, k, v, score_mod=ssmax_causal))


def test_float32_inputs_keep_their_dtype():
    q, k, v = qkv(4, 1, 1, T, 8, dtype=torch.float32)
    out = tempered_attention(q, k, v, llama4_temperature(torch.arange(8188, 8196)))
    assert out.dtype == torch.float32
    exact = tempered_attention(q.double(), k.double(), v.double(), llama4_temperature(torch.arange(8188, 8196)))
    torch.testing.assert_close(out.double(), exact, atol=1e-5, rtol=1e-4)
