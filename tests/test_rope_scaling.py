"""snippets/rope_scaling.py against the reference code of each method written
out literally (YaRN's repository, Meta's Llama 3.1 code, Hugging Face's
formulas), YaRN's paper as written, tables computed by hand, SDPA, and the
RoPE entry's own rotation."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.rope_scaling as mod
from snippets.rope_scaling import (
    rope_frequencies,
    rotate,
    scaled_frequencies,
)
from snippets.rotary_position_embedding import apply_rope, rope_angles
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "pair c:                   0     16     32     40     48     63",
        "linear: theta / new     8.00   8.00   8.00   8.00   8.00   8.00"
        "   attention factor 1.0000",
        "   ntk: theta / new     1.00   1.70   2.88   3.74   4.88   8.00"
        "   attention factor 1.0000",
        "  yarn: theta / new     1.00   1.00   3.58   8.00   8.00   8.00"
        "   attention factor 1.2079",
        "llama3: theta / new     1.00   1.00   2.69   8.00   8.00   8.00"
        "   attention factor 1.0000",
    ],
    "checks": [
        "linear = positions divided by the factor: True",
        "slowest pair's angle at 2048, unscaled: 0.2731; "
        "at 8192, scaled: 0.2731",
        "yarn keeps the pairs turning >= 32 times: True",
        "yarn divides the pairs turning <= 1 time by 4: True",
        "attention factor 1.1386: scores times 1.2965: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def random(*shape, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


# --- the unscaled frequencies are the RoPE entry's -------------------------------------------
@pytest.mark.parametrize("d,theta", [(8, 10000.0), (64, 10000.0), (128, 500000.0)])
def test_default_frequencies_are_the_rope_entrys(d, theta):
    freq, scale = scaled_frequencies(d, {"rope_theta": theta})
    sb.assert_close(freq, rope_angles(torch.tensor([1]), d, rope_theta=theta, dtype=F64)[0])
    assert scale == 1.0
    x, pos = random(9, d), torch.arange(0, 9000, 1000)
    sb.assert_close(rotate(x, pos, freq), apply_rope(x, pos, layout="half", rope_theta=theta))


# --- linear: position interpolation -----------------------------------------------------------
@PROPERTY_SETTINGS
@given(half_d=st.integers(1, 32), factor=st.sampled_from([1.0, 2.0, 4.0, 8.0, 40.0]),
       seed=st.integers(0, 2**16))
def test_property_linear_scaling_equals_dividing_the_positions(half_d, factor, seed):
    d = 2 * half_d
    freq, _ = scaled_frequencies(d, {"rope_type": "linear", "factor": factor})
    pos = torch.arange(0, 20000, 733)
    x = random(len(pos), d, seed=seed)
    sb.assert_close(rotate(x, pos, freq), rotate(x, pos.double() / factor, rope_frequencies(d)))
    # Chen et al.'s m -> m L / L': the L' = factor * L positions have the angles of positions
    # below L, the trained ones
    assert ((2048 * factor - 1) * freq < 2048 * rope_frequencies(d)).all()


# --- NTK-aware and dynamic NTK ------------------------------------------------------------------
@pytest.mark.parametrize("d,theta,factor", [(8, 10000.0, 4.0), (64, 10000.0, 8.0),
                                            (128, 1e6, 2.0)])
def test_ntk_keeps_pair_zero_and_divides_the_last_pair_by_the_factor(d, theta, factor):
    freq, scale = scaled_frequencies(d, {"rope_type": "ntk", "factor": factor,
                                         "rope_theta": theta})
    default = rope_frequencies(d, theta)
    assert freq[0] == 1.0 and scale == 1.0
    sb.assert_close(freq[-1], default[-1] / factor)
    assert (freq[1:] < default[1:]).all() and (freq[1:-1] > default[1:-1] / factor).all()
    # the reference code (bloc97's, in YaRN's repository): base * alpha ** (dim / (dim - 2))
    base = theta * factor ** (d / (d - 2))
    sb.assert_close(freq, 1.0 / (base ** (torch.arange(0, d, 2, dtype=F64) / d)))


def hf_dynamic_base(base, dim, seq_len, max_pos, factor):
    """Hugging Face's _compute_dynamic_ntk_parameters, as written there."""
    seq_len = seq_len if seq_len is not None and seq_len > max_pos else max_pos
    return base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))


@pytest.mark.parametrize("seq_len", [None, 100, 4096, 4097, 8192, 40000])
def test_dynamic_ntk_is_the_reference_formula_and_default_up_to_the_trained_length(seq_len):
    d, theta, factor, original = 64, 10000.0, 4.0, 4096
    rope = {"rope_type": "dynamic", "factor": factor, "rope_theta": theta}
    freq, _ = scaled_frequencies(d, rope, seq_len=seq_len, max_position_embeddings=original)
    base = hf_dynamic_base(theta, d, seq_len, original, factor)
    sb.assert_close(freq, 1.0 / (base ** (torch.arange(0, d, 2, dtype=F64) / d)))
    if seq_len is None or seq_len <= original:
        sb.assert_close(freq, rope_frequencies(d, theta))
    else:
        assert freq[-1] < rope_frequencies(d, theta)[-1]


# --- YaRN ---------------------------------------------------------------------------------------
def yarn_reference(dim, base, scale, original, beta_fast=32, beta_slow=1):
    """yarn() of LlamaYaRNScaledRotaryEmbedding in jquesnelle/yarn, transcribed."""
    def find_correction_dim(num_rotations):
        return (dim * math.log(original / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(find_correction_dim(beta_fast)), 0)
    high = min(math.ceil(find_correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=F64) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=F64) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (scale * pos_freqs)
    inv_freq_mask = 1 - ramp
    inv_freq = inv_freq_interpolation * (1 - inv_freq_mask) + inv_freq_extrapolation * inv_freq_mask
    return inv_freq, 0.1 * math.log(scale) + 1.0


YARN_CASES = [(64, 10000.0, 4.0, 2048, 32, 1), (128, 1e6, 4.0, 32768, 32, 1),
              (128, 10000.0, 40.0, 4096, 32, 1), (64, 10000.0, 16.0, 4096, 16, 2),
              (8, 10000.0, 2.0, 64, 32, 1)]


@pytest.mark.parametrize("d,theta,factor,original,fast,slow", YARN_CASES)
def test_yarn_equals_the_reference_code(d, theta, factor, original, fast, slow):
    rope = {"rope_type": "yarn", "factor": factor, "rope_theta": theta,
            "original_max_position_embeddings": original, "beta_fast": fast,
            "beta_slow": slow}
    freq, scale = scaled_frequencies(d, rope)
    ref_freq, ref_scale = yarn_reference(d, theta, factor, original, fast, slow)
    sb.assert_close(freq, ref_freq)
    assert scale == pytest.approx(ref_scale, abs=1e-15)


@pytest.mark.parametrize("d,theta,factor,original,fast,slow", YARN_CASES)
def test_yarn_keeps_high_and_divides_low_frequencies_as_the_paper_writes(
        d, theta, factor, original, fast, slow):
    """Peng et al. (2023), section 3.2: r = L / lambda, gamma(r) = 0 below alpha = beta_slow,
    1 above beta = beta_fast, h(theta) = (1 - gamma) theta / s + gamma theta."""
    rope = {"rope_type": "yarn", "factor": factor, "rope_theta": theta,
            "original_max_position_embeddings": original, "beta_fast": fast,
            "beta_slow": slow}
    freq, _ = scaled_frequencies(d, rope)
    default = rope_frequencies(d, theta)
    r = original / (2 * math.pi / default)
    high, low = r >= fast, r <= slow
    assert torch.equal(freq[high], default[high])  # untouched, bit for bit
    sb.assert_close(freq[low], default[low] / factor)
    assert ((freq <= default) & (freq >= default / factor - 1e-18)).all()
    assert (freq[1:] / default[1:] <= freq[:-1] / default[:-1] + 1e-12).all()  # monotone


def test_yarn_hand_table():
    """d = 8, base 10000: theta = 1, 0.1, 0.01, 0.001, wavelengths 2 pi x (1, 10, 100, 1000).
    With L = 2048, r = 326, 32.6, 3.26, 0.326: beta_fast = 32 keeps pairs 0 and 1, beta_slow = 1
    divides pair 3; the ramp runs over floor(1.008) = 1 .. ceil(2.513) = 3 (in pairs), so pair 2
    sits halfway on the ramp: 0.01 * (1/2 + 1/(2 * 4))."""
    freq, scale = scaled_frequencies(8, {"rope_type": "yarn", "factor": 4.0,
                                         "original_max_position_embeddings": 2048})
    expected = torch.tensor([1.0, 0.1, 0.01 * (0.5 + 0.5 / 4), 0.001 / 4], dtype=F64)
    sb.assert_close(freq, expected)
    assert scale == pytest.approx(0.1 * math.log(4) + 1)  # 1.13863


@pytest.mark.parametrize("factor,expected", [(1.0, 1.0), (4.0, 1.1386294361),
                                             (8.0, 1.2079441542), (40.0, 1.3688879454)])
def test_yarn_attention_factor_is_one_tenth_ln_s_plus_one(factor, expected):
    _, scale = scaled_frequencies(64, {"rope_type": "yarn", "factor": factor,
                                       "original_max_position_embeddings": 4096})
    assert scale == pytest.approx(expected, abs=1e-10)
    _, given_ = scaled_frequencies(64, {"rope_type": "yarn", "factor": factor,
                                        "original_max_position_embeddings": 4096,
                                        "attention_factor": 0.5})
    assert given_ == 0.5  # the config's attention_factor wins


@pytest.mark.parametrize("dtype", [F64, torch.float32])
def test_attention_factor_on_q_and_k_is_sdpa_with_its_square_in_scale(dtype):
    d = 32
    freq, scale = scaled_frequencies(d, {"rope_type": "yarn", "factor": 16.0,
                                         "original_max_position_embeddings": 512})
    q, k, v = random(3, 2, 4, 12, d, seed=3, dtype=dtype)
    t = torch.arange(100, 112)
    causal = torch.ones(12, 12, dtype=torch.bool).tril()
    out = F.scaled_dot_product_attention(rotate(q, t, freq, scale), rotate(k, t, freq, scale), v,
                                         attn_mask=causal)
    ref = F.scaled_dot_product_attention(rotate(q, t, freq), rotate(k, t, freq), v,
                                         attn_mask=causal, scale=scale**2 / math.sqrt(d))
    sb.assert_close(out, ref)
    plain = F.scaled_dot_product_attention(rotate(q, t, freq), rotate(k, t, freq), v,
                                           attn_mask=causal)
    assert not torch.allclose(out, plain, atol=1e-3)


# --- Llama 3.1 ----------------------------------------------------------------------------------
def meta_apply_scaling(freqs, scale_factor=8, low_freq_factor=1, high_freq_factor=4,
                       old_context_len=8192):
    """apply_scaling() of meta-llama/llama-models, models/llama3/reference_impl/model.py."""
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs.tolist():
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (
                high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return torch.tensor(new_freqs, dtype=F64)


LLAMA31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
           "rope_theta": 500000.0}


@pytest.mark.parametrize("d,theta", [(128, 500000.0), (64, 10000.0), (8, 10000.0)])
def test_llama3_equals_metas_reference_code(d, theta):
    freq, scale = scaled_frequencies(d, {**LLAMA31, "rope_theta": theta})
    sb.assert_close(freq, meta_apply_scaling(rope_frequencies(d, theta)))
    assert scale == 1.0


def test_llama3_hand_table():
    """d = 8, base 10000, L = 64, factors 1 and 4: wavelengths 2 pi x (1, 10, 100, 1000) =
    6.28 (< 16: kept), 62.8 (between 16 and 64: smooth = (64 / 62.83 - 1) / 3), 628 and 6283
    (> 64: divided by 8)."""
    rope = {**LLAMA31, "original_max_position_embeddings": 64, "rope_theta": 10000.0}
    freq, _ = scaled_frequencies(8, rope)
    smooth = (64 / (20 * math.pi) - 1) / 3
    expected = torch.tensor([1.0, (1 - smooth) * 0.1 / 8 + smooth * 0.1, 0.01 / 8, 0.001 / 8],
                            dtype=F64)
    sb.assert_close(freq, expected)


# --- LongRoPE -----------------------------------------------------------------------------------
def test_longrope_divides_each_pair_by_its_own_factor_short_or_long():
    d, original = 8, 4096
    rope = {"rope_type": "longrope", "factor": 32.0, "original_max_position_embeddings": original,
            "short_factor": [1.0, 1.0, 1.5, 2.0], "long_factor": [1.0, 2.0, 8.0, 30.0]}
    default = rope_frequencies(d)
    short, scale = scaled_frequencies(d, rope, seq_len=original)
    long, _ = scaled_frequencies(d, rope, seq_len=original + 1)
    sb.assert_close(short, default / torch.tensor([1.0, 1.0, 1.5, 2.0], dtype=F64))
    sb.assert_close(long, default / torch.tensor([1.0, 2.0, 8.0, 30.0], dtype=F64))
    assert scale == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))  # 1.189


def test_dynamic_reads_max_position_embeddings_as_transformers_does():
    """Transformers' `dynamic` measures the length against the config's top-level
    `max_position_embeddings`; a `rope_parameters` dict alone has no length."""
    d, theta, factor = 64, 10000.0, 2.0
    rope = {"rope_type": "dynamic", "factor": factor, "rope_theta": theta}
    freq, _ = scaled_frequencies(d, rope, seq_len=8192, max_position_embeddings=4096)
    base = hf_dynamic_base(theta, d, 8192, 4096, factor)
    sb.assert_close(freq, 1.0 / (base ** (torch.arange(0, d, 2, dtype=F64) / d)))
    sb.assert_close(scaled_frequencies(d, rope, seq_len=2048, max_position_embeddings=4096)[0],
                    rope_frequencies(d, theta))
    with pytest.raises(ValueError, match="max_position_embeddings"):
        scaled_frequencies(d, rope, seq_len=8192)
    # original_max_position_embeddings is not a length `dynamic` reads: still refused
    with pytest.raises(ValueError, match="max_position_embeddings"):
        scaled_frequencies(d, {**rope, "original_max_position_embeddings": 4096}, seq_len=8192)


def test_longrope_without_a_factor_takes_the_ratio_of_lengths_like_phi3():
    """Phi-3-mini-128k: no `factor`, max_position_embeddings 131072 over 4096 (s = 32)."""
    rope = {"rope_type": "longrope", "original_max_position_embeddings": 4096,
            "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    _, scale = scaled_frequencies(8, rope, max_position_embeddings=131072)
    assert scale == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))  # 1.190
    assert scaled_frequencies(8, {**rope, "attention_factor": 1.05}, max_position_embeddings=131072)[1] == 1.05
    assert scaled_frequencies(8, rope)[1] == 1.0  # no factor and no length: nothing to scale by


# --- what every method keeps --------------------------------------------------------------------
METHODS = [{"rope_type": "linear", "factor": 4.0}, {"rope_type": "ntk", "factor": 4.0},
           {"rope_type": "dynamic", "factor": 4.0},
           {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256},
           {**LLAMA31, "original_max_position_embeddings": 256, "rope_theta": 10000.0}]


@pytest.mark.parametrize("rope", METHODS, ids=lambda r: r["rope_type"])
def test_scaled_scores_still_depend_only_on_m_minus_n(rope):
    d = 16
    freq, scale = scaled_frequencies(d, rope, seq_len=1024, max_position_embeddings=256)
    q, k = random(2, 1, d, seed=4)

    def score(m, n):
        return (rotate(q, torch.tensor([m]), freq, scale)
                @ rotate(k, torch.tensor([n]), freq, scale).T).item()

    for m, n, shift in [(5, 2, 100), (700, 30, 321), (1000, 1000, 24)]:
        assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-9)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("rope", METHODS[:1] + METHODS[3:4], ids=["linear", "yarn"])
def test_half_precision_with_float32_angles(dtype, rope):
    d = 64
    freq, scale = scaled_frequencies(d, rope)
    pos = torch.arange(0, 1024, 3)
    x = random(len(pos), d, seed=5)
    low = rotate(x.to(dtype), pos, freq, scale)
    assert low.dtype == dtype
    sb.assert_close(low.double(), rotate(x, pos, freq, scale), dtype=dtype)
    # the interpolated positions are fractions: bfloat16 cannot even hold 8191 / 4
    assert torch.tensor(8191 / 4).bfloat16().item() == 2048.0


def test_unknown_type_is_refused():
    with pytest.raises(ValueError, match="rope_type"):
        scaled_frequencies(8, {"rope_type": "su"})


# --- review findings: the dynamic-NTK cache caveat, mscale / mscale_all_dim, truncate ----------
def test_dynamic_ntk_with_cached_keys_is_not_relative_once_the_base_changes():
    """The page: keys cached after rotation keep the base of the length at which they were
    rotated, so once T passes the trained length cached decoding differs from re-encoding, and
    the score is no longer a function of m - n alone."""
    d, original = 16, 64
    rope = {"rope_type": "dynamic", "factor": 4.0}
    q, k = random(2, 1, d, seed=7)

    def score(m, n, key_len, query_len):
        key_freq, _ = scaled_frequencies(d, rope, seq_len=key_len, max_position_embeddings=original)
        query_freq, _ = scaled_frequencies(d, rope, seq_len=query_len, max_position_embeddings=original)
        return (rotate(q, torch.tensor([m]), query_freq)
                @ rotate(k, torch.tensor([n]), key_freq).T).item()

    # Within the trained length the base does not move: cached = re-encoded.
    assert score(40, 10, key_len=41, query_len=60) == pytest.approx(score(40, 10, 60, 60), abs=1e-12)
    # Key 10 cached at length 100, query at 199 (length 200): not the re-encoded score ...
    cached, fresh = score(199, 10, key_len=100, query_len=200), score(199, 10, 200, 200)
    assert abs(cached - fresh) > 1e-3
    # ... and a shift of both positions that keeps m - n changes it when the cache is stale.
    assert abs(score(150, 10, key_len=100, query_len=151)
               - score(199, 59, key_len=100, query_len=200)) > 1e-3


def test_yarn_mscale_and_mscale_all_dim_as_transformers_reads_them():
    """DeepSeek-V3's rope_scaling (factor 40, mscale 1.0, mscale_all_dim 1.0): the cos/sin factor
    is get_mscale(40, 1) / get_mscale(40, 1) = 1, as in Transformers' _compute_yarn_parameters;
    DeepSeek applies the 0.1 ln s + 1 through its softmax scale instead (its inference/model.py:
    softmax_scale *= mscale ** 2). Without the two keys the factor is 0.1 ln 40 + 1."""
    deepseek = {"rope_type": "yarn", "factor": 40.0, "rope_theta": 10000.0,
                "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0,
                "mscale": 1.0, "mscale_all_dim": 1.0}
    freq, scale = scaled_frequencies(64, deepseek)
    assert scale == 1.0
    plain = {k: v for k, v in deepseek.items() if not k.startswith("mscale")}
    freq_plain, scale_plain = scaled_frequencies(64, plain)
    assert scale_plain == pytest.approx(0.1 * math.log(40.0) + 1.0) and scale_plain > 1.3
    assert torch.equal(freq, freq_plain)  # the keys change the factor, not the frequencies
    # mscale 0.707 over mscale_all_dim 1 (a different t in the cos/sin than in the softmax):
    _, ratio = scaled_frequencies(64, {**deepseek, "mscale": 0.707})
    assert ratio == pytest.approx((0.0707 * math.log(40) + 1) / (0.1 * math.log(40) + 1))


def gpt_oss_inv_freq(head_dim, base, scaling_factor, initial_context_length, ntk_alpha, ntk_beta):
    """RotaryEmbedding._compute_concentration_and_inv_freq of openai/gpt-oss
    (gpt_oss/torch/model.py), transcribed: the ramp's ends are not rounded."""
    freq = base ** (torch.arange(0, head_dim, 2, dtype=F64) / head_dim)
    concentration = 0.1 * math.log(scaling_factor) + 1.0
    d_half = head_dim / 2
    low = d_half * math.log(initial_context_length / (ntk_beta * 2 * math.pi)) / math.log(base)
    high = d_half * math.log(initial_context_length / (ntk_alpha * 2 * math.pi)) / math.log(base)
    assert 0 < low < high < d_half - 1
    interpolation, extrapolation = 1.0 / (scaling_factor * freq), 1.0 / freq
    ramp = (torch.arange(d_half, dtype=F64) - low) / (high - low)
    mask = 1 - ramp.clamp(0, 1)
    return concentration, interpolation * (1 - mask) + extrapolation * mask


def test_yarn_truncate_false_is_gpt_oss_and_true_rounds_the_ramp_ends():
    oss = {"rope_type": "yarn", "factor": 32.0, "rope_theta": 150000.0,
           "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0}
    concentration, reference = gpt_oss_inv_freq(64, 150000.0, 32.0, 4096, 1.0, 32.0)
    freq, scale = scaled_frequencies(64, {**oss, "truncate": False})
    sb.assert_close(freq, reference)
    assert scale == pytest.approx(concentration)
    rounded, _ = scaled_frequencies(64, oss)  # truncate defaults to True: floor / ceil
    assert not torch.allclose(rounded, reference)
    sb.assert_close(rounded, yarn_reference(64, 150000.0, 32.0, 4096)[0])
