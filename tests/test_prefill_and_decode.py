"""snippets/prefill_and_decode.py: chunked prefill and decode with a KV cache equal one causal
SDPA pass; the arithmetic intensity of a linear layer grows with the tokens per call."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right

import snippets.prefill_and_decode as mod
from snippets.prefill_and_decode import arithmetic_intensity, chunk_mask, generate
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "chunked prefill + decode equals one causal pass: True",
        "mask of 2 new queries after 4 cached keys:",
        "  [1, 1, 1, 1, 1, 0]",
        "  [1, 1, 1, 1, 1, 1]",
        "is_causal=True on that chunk equals it: False",
    ],
    "intensity": [
        "    1 tokens:    1.0 FLOPs per byte",
        "   16 tokens:   15.5 FLOPs per byte",
        "  256 tokens:  170.7 FLOPs per byte",
        " 2048 tokens:  409.6 FLOPs per byte",
    ],
}

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def qkv(seed, length, d_k=8, d_v=6, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 3, length, d_k, generator=gen).to(dtype),
            torch.randn(2, 3, length, d_k, generator=gen).to(dtype),
            torch.randn(2, 3, length, d_v, generator=gen).to(dtype))


@pytest.mark.parametrize("prompt,chunk", [(10, 3), (10, 4), (10, 7), (10, 10), (10, 64),
                                          (7, 1), (1, 5), (12, 5)])
def test_chunked_prefill_then_decode_equals_one_causal_pass(prompt, chunk):
    q, k, v = qkv(0, 12)  # 12 - prompt tokens decoded one at a time
    out = generate(q, k, v, prompt=prompt, chunk=chunk)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(total=st.integers(1, 16), data=st.data())
def test_property_any_prompt_and_chunk(total, data):
    prompt = data.draw(st.integers(1, total))
    chunk = data.draw(st.integers(1, total + 2))
    q, k, v = qkv(data.draw(st.integers(0, 2**16)), total)
    out = generate(q, k, v, prompt=prompt, chunk=chunk)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_prefill_in_one_chunk_is_the_plain_causal_pass_and_decode_needs_no_mask():
    q, k, v = qkv(1, 9)
    one_pass = generate(q, k, v, prompt=9, chunk=9)
    sb.assert_close(one_pass, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    for t in range(9):
        assert chunk_mask(1, offset=t).all()  # a decode step sees every cached key


@pytest.mark.parametrize("length,offset", [(1, 0), (3, 0), (2, 4), (5, 7), (4, 1)])
def test_chunk_mask_is_causal_lower_right(length, offset):
    q, k, v = qkv(2, offset + length)
    q = q[..., :length, :]
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=chunk_mask(length, offset))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(length, offset + length))
    sb.assert_close(ours, ref)
    expected = torch.ones(length, offset + length, dtype=torch.bool).tril(diagonal=offset)
    assert torch.equal(chunk_mask(length, offset), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    q, k, v = qkv(3, 11, dtype=dtype)
    out = generate(q, k, v, prompt=8, chunk=3)
    assert out.dtype == dtype
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))


@pytest.mark.parametrize("tokens", [1, 3, 64, 500])
@pytest.mark.parametrize("d_in,d_out", [(32, 32), (48, 16)])
def test_intensity_is_flops_over_bytes(tokens, d_in, d_out):
    """2 n d_in d_out FLOPs over (d_in d_out + n d_in + n d_out) * 2 bytes in bfloat16."""
    layer = torch.nn.Linear(d_in, d_out, bias=False, dtype=torch.bfloat16)
    x = torch.zeros(tokens, d_in, dtype=torch.bfloat16)
    with torch.no_grad():
        got = arithmetic_intensity(layer, x)
    flops = 2 * tokens * d_in * d_out
    moved = 2 * (d_in * d_out + tokens * d_in + tokens * d_out)
    assert got == pytest.approx(flops / moved)


def test_intensity_grows_with_tokens_and_halves_in_float32():
    layer = torch.nn.Linear(64, 64, bias=False)
    with torch.no_grad():
        ratios = [arithmetic_intensity(layer, torch.zeros(n, 64)) for n in (1, 4, 16, 256)]
        half = arithmetic_intensity(layer.to(torch.bfloat16), torch.zeros(16, 64, dtype=torch.bfloat16))
    assert ratios == sorted(ratios) and ratios[0] < 1
    assert half == pytest.approx(2 * ratios[2])

