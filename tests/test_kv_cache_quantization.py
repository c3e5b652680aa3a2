"""snippets/kv_cache_quantization.py: each quantizer's error against its format's
bound, the attention-error bound against random perturbations, KIVI's per-channel
keys against per-token keys, attention against an explicit softmax, and the bytes
per token against the KV-cache entry's formula."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.kv_cache_quantization as mod
from snippets.kv_cache import kv_bytes_per_token
from snippets.kv_cache_quantization import (
    FP8,
    attention,
    bytes_per_token,
    dequantize_fp8,
    dequantize_int,
    error_bound,
    quantize_fp8,
    quantize_int,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "float8, one scale       max error 5.4e-02",
        "float8, scale per head  max error 5.3e-02",
        "8-bit, K per token      max error 6.8e-03",
        "8-bit, K per channel    max error 5.6e-03",
        "2-bit, K per token      max error 6.9e-01",
        "2-bit, K per channel    max error 2.8e-01",
        "every error within its bound: True",
        "bfloat16: 327680 bytes per token",
        "float8, int8: 163840 bytes per token",
        "2-bit: 40960 bytes per token",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def kv(seed, heads=2, seq=16, d=8, outlier=0.0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(heads, seq, d, generator=gen) * torch.rand(
        heads, 1, 1, generator=gen).mul(4).add(0.1)  # heads of unlike range
    x[..., 1] += outlier
    return x


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_float8_error_is_within_half_a_step(per_head, seed):
    x = kv(seed)
    x8, scale = quantize_fp8(x, per_head)
    assert x8.dtype == FP8 and x8.element_size() == 1
    assert scale.shape == ((2, 1, 1) if per_head else ())
    # The largest |x| of each scaled slice lands on 448 exactly.
    peak = x8.float().abs().amax(dim=(-2, -1)) if per_head else x8.float().abs().max()
    assert torch.all(peak == 448.0)
    # 3 mantissa bits: half a step is 1/16 of the value for normal numbers,
    # 2**-10 of the scale below the smallest normal (2**-6), in subnormals.
    err = (dequantize_fp8(x8, scale) - x).abs()
    assert torch.all(err <= torch.maximum(x.abs() / 16, scale * 2**-10) + 1e-7)


@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("dim", [-1, -2])
def test_integer_error_is_within_half_a_step(bits, dim):
    x = kv(7, outlier=5.0)
    codes, scale, low = quantize_int(x, dim, bits)
    assert codes.dtype == torch.uint8 and int(codes.max()) <= 2**bits - 1
    expected = (2, 16, 1) if dim == -1 else (2, 1, 8)  # per token / channel
    assert scale.shape == low.shape == expected
    err = (dequantize_int(codes, scale, low) - x).abs()
    assert torch.all(err <= scale / 2 + 1e-6)
    # The ends of every slice are levels: its min and max come back.
    back = dequantize_int(codes, scale, low)
    sb.assert_close(back.amin(dim), x.amin(dim))
    sb.assert_close(back.amax(dim), x.amax(dim))


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**16), k_err=st.floats(0, 0.3),
       v_err=st.floats(0, 0.3), length=st.integers(1, 9))
def test_property_error_bound_holds_for_any_perturbation(seed, k_err, v_err,
                                                          length):
    """The bound is a theorem about attention, not about one quantizer:
    any E_K, E_V within k_err, v_err keep the output within it."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(4, 3, 5, generator=gen, dtype=F64) * 2
    k, v = torch.randn(2, 2, length, 5, generator=gen, dtype=F64).unbind(0)
    for _ in range(3):
        e_k = (torch.rand(k.shape, generator=gen, dtype=F64) * 2 - 1) * k_err
        e_v = (torch.rand(v.shape, generator=gen, dtype=F64) * 2 - 1) * v_err
        if _ == 0:  # the worst case: every error at its limit
            e_k, e_v = e_k.sign() * k_err, e_v.sign() * v_err
        error = (attention(q, k + e_k, v + e_v) - attention(q, k, v)).abs()
        bound = error_bound(q, k_err, v_err, v.abs().max())
        assert torch.all(error <= bound + 1e-12)


def test_bound_vanishes_without_error_and_is_tight_for_values():
    q = torch.randn(2, 1, 4, dtype=F64)
    assert torch.all(error_bound(q, 0.0, 0.0, 3.0) == 0)
    # A shift of every value by v_err moves the output by exactly v_err.
    k, v = torch.randn(2, 1, 6, 4, dtype=F64).unbind(0)
    moved = attention(q, k, v + 0.01) - attention(q, k, v)
    sb.assert_close(moved, torch.full_like(moved, 0.01))
    sb.assert_close(error_bound(q, 0.0, 0.01, 1.0), torch.full((2, 1, 1), 0.01, dtype=F64))


@pytest.mark.parametrize("seed", range(5))
def test_kivi_per_channel_keys_beat_per_token_keys_with_outlier_channels(seed):
    """KIVI's finding, measured: with a channel of large keys (the demo's
    shapes), 2-bit keys per channel give a smaller attention error than
    2-bit keys per token."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(4, 1, 32, generator=gen)
    k, v = torch.randn(2, 2, 64, 32, generator=gen).unbind(0)
    k[..., 5] += 10.0
    exact = attention(q, k, v)
    v_hat = dequantize_int(*quantize_int(v, -1, 2))
    errors = {}
    for dim in (-1, -2):
        k_hat = dequantize_int(*quantize_int(k, dim, 2))
        errors[dim] = (attention(q, k_hat, v_hat) - exact).abs().max()
    assert errors[-2] < errors[-1]


def test_attention_matches_an_explicit_softmax():
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(6, 2, 4, generator=gen, dtype=F64)
    k, v = torch.randn(2, 3, 5, 4, generator=gen, dtype=F64).unbind(0)
    k_rep, v_rep = k.repeat_interleave(2, 0), v.repeat_interleave(2, 0)
    weights = (q @ k_rep.transpose(-2, -1) / math.sqrt(4)).softmax(-1)
    sb.assert_close(attention(q, k, v), weights @ v_rep)


@pytest.mark.parametrize("bits", [16, 8])
def test_bytes_per_token_match_the_kv_cache_entry(bits):
    for layers, heads, d in ((80, 8, 128), (32, 8, 128), (1, 1, 64)):
        assert bytes_per_token(layers, heads, d, bits) == kv_bytes_per_token(
            layers, heads, d, bits // 8)
    assert bytes_per_token(80, 8, 128, 2) * 8 == bytes_per_token(80, 8, 128, 16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_dequantized_into_half_precision(dtype):
    k, v = kv(1), kv(2)
    q = kv(3, seq=2).repeat_interleave(2, dim=0)
    k_hat = dequantize_fp8(*quantize_fp8(k, per_head=True), dtype=dtype)
    v_hat = dequantize_fp8(*quantize_fp8(v, per_head=True), dtype=dtype)
    assert k_hat.dtype == v_hat.dtype == dtype
    out = attention(q.to(dtype), k_hat, v_hat)
    ref = attention(q, k_hat.float(), v_hat.float())
    assert out.dtype == dtype
    sb.assert_close(out.float(), ref, dtype=dtype)


def test_a_constant_slice_does_not_divide_by_zero():
    x = torch.ones(1, 4, 3)
    codes, scale, low = quantize_int(x, -1, 2)
    assert torch.equal(dequantize_int(codes, scale, low), x)
    x8, s = quantize_fp8(torch.zeros(1, 2, 2))
    assert torch.equal(dequantize_fp8(x8, s), torch.zeros(1, 2, 2))
