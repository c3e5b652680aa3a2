"""Claims about float8 and integer tensors, the formats of a quantized KV cache (torch 2.13.0)."""

import math

import pytest
import torch
import torch.nn.functional as F

from tests.claims import claim

FP8 = torch.float8_e4m3fn


@claim("float8-e4m3fn-cpu-cast")
def test_float8_e4m3fn_casts_on_the_cpu_round_and_saturate():
    """A float32 tensor casts to float8_e4m3fn on the CPU: one byte per element, the nearest
    representable value (3 mantissa bits), and 448 at most: larger magnitudes, infinities
    included, saturate to +-448 instead of becoming inf or NaN; NaN stays NaN."""
    x = torch.tensor([0.3, 1.0, 448.0, 460.0, 1000.0, -500.0, math.inf, -math.inf])
    f8 = x.to(FP8)
    assert f8.element_size() == 1 and torch.finfo(FP8).max == 448.0
    assert f8.float().tolist() == [0.3125, 1.0, 448.0, 448.0, 448.0, -448.0, 448.0, -448.0]
    assert torch.finfo(FP8).eps == 0.125  # 3 mantissa bits: 1 + 1/8 follows 1
    assert torch.tensor([math.nan]).to(FP8).float().isnan().all()


@claim("float8-e4m3fnuz-cpu-cast")
def test_float8_e4m3fnuz_stops_at_240_and_casts_past_it_to_nan():
    """The other e4m3 variant: 240 at most, and on the CPU a float32 magnitude past it casts to
    NaN, not to 240."""
    fnuz = torch.float8_e4m3fnuz
    assert torch.finfo(fnuz).max == 240.0
    assert torch.tensor([240.0, -240.0]).to(fnuz).float().tolist() == [240.0, -240.0]
    assert torch.tensor([448.0, -1000.0, math.inf]).to(fnuz).float().isnan().all()


@claim("float8-sdpa-cpu-not-implemented")
def test_sdpa_does_not_take_float8_tensors_on_the_cpu():
    """F.scaled_dot_product_attention on float8_e4m3fn tensors raises NotImplementedError on
    the CPU, and so does elementwise addition: a float8 cache is dequantized before attention."""
    q = torch.randn(1, 3, 4).to(FP8)
    with pytest.raises(NotImplementedError):
        F.scaled_dot_product_attention(q, q, q)
    with pytest.raises(NotImplementedError):
        q + q


@claim("float-to-uint8-truncates-wraps")
def test_casting_to_uint8_truncates_and_wraps():
    """`.to(torch.uint8)` truncates in-range values toward zero. Out-of-range values are
    undefined behaviour (C++ float-to-integer conversion); this CPU build happens to wrap them
    (300 becomes 44), and the page gives that as this CPU's result only. An integer quantizer
    rounds and clamps before it casts. torch.round rounds halves to the even neighbour (2.5
    becomes 2)."""
    x = torch.tensor([0.9, 2.5, 255.7, 300.0])
    assert x[:3].to(torch.uint8).tolist() == [0, 2, 255]  # in range: truncation, defined
    assert x[3:].to(torch.uint8).tolist() == [44]  # out of range: this CPU's result
    assert x.round().clamp(0, 255).to(torch.uint8).tolist() == [1, 2, 255, 255]
