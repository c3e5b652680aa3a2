"""snippets/flash_attention.py: tiled attention equals SDPA; its memory."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.flash_attention as mod
from snippets.flash_attention import (
    TensorBytes,
    flash_attention,
    naive_attention,
    online_softmax,
    tensor_bytes,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "causal=False: equals F.scaled_dot_product_attention: True",
        "causal=True: equals F.scaled_dot_product_attention: True",
        "float64, tiles of 7 x 5, to 1e-12: True",
        "window of 8, masked tiles and rows: True",
        "online_softmax equals torch.softmax: True",
    ],
    "memory": [
        "L = S = 1024, d_k = 64, float32, tiles of 64 x 64",
        "all scores, L x S x 4 bytes: 4096 KiB; one tile: 16 KiB",
        "peak tensor bytes, naive: 8448 KiB, tiled: 369 KiB",
        "largest tensor, naive: 4096 KiB, tiled: 256 KiB (the output)",
        "tiled needs 22.8 times less",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def qkv(seed, lead, length, source, d_k, d_v, dtype):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(*lead, length, d_k, generator=gen, dtype=dtype),
        torch.randn(*lead, source, d_k, generator=gen, dtype=dtype),
        torch.randn(*lead, source, d_v, generator=gen, dtype=dtype),
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "length,source,block_q,block_k",
    [(64, 64, 16, 16), (50, 37, 7, 5), (37, 50, 8, 9), (9, 9, 4, 100),
     (1, 13, 3, 4), (13, 1, 5, 2), (20, 20, 1, 1)],
)
def test_equals_sdpa(dtype, causal, length, source, block_q, block_k):
    q, k, v = qkv(0, (2, 3), length, source, 8, 5, dtype)  # d_v != d_k
    ours = flash_attention(q, k, v, causal=causal, block_q=block_q,
                           block_k=block_k)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert ours.dtype == dtype
    sb.assert_close(ours, ref)


@PROPERTY_SETTINGS
@given(
    lead=st.lists(st.integers(1, 2), max_size=2),
    length=st.integers(1, 12),
    source=st.integers(1, 12),
    d_k=st.integers(1, 6),
    block_q=st.integers(1, 13),
    block_k=st.integers(1, 13),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_equals_sdpa_in_float64(lead, length, source, d_k, block_q,
                                         block_k, causal, seed):
    q, k, v = qkv(seed, lead, length, source, d_k, d_k, torch.float64)
    ours = flash_attention(q, k, v, causal=causal, block_q=block_q,
                           block_k=block_k)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v,
                                                         is_causal=causal))


@PROPERTY_SETTINGS
@given(
    rows=st.integers(1, 4),
    cols=st.integers(1, 20),
    block=st.integers(1, 25),
    magnitude=st.sampled_from([1.0, 30.0, 1e4]),
    seed=st.integers(0, 2**16),
)
def test_property_online_softmax_equals_torch_softmax(rows, cols, block,
                                                      magnitude, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    x = x * magnitude  # 1e4: exp would overflow without the running max
    out = online_softmax(x, block_size=block)
    assert out.isfinite().all()
    sb.assert_close(out, torch.softmax(x, dim=-1))


def test_online_softmax_in_float32_with_huge_logits():
    x = torch.tensor([[1000.0, 999.0, -1000.0, 998.0, 1001.0]])
    sb.assert_close(online_softmax(x, block_size=2), x.softmax(-1))


def masked_reference(q, k, v, allowed):
    """Dense softmax attention with a bool mask; a row that sees no key
    gets zeros (what SDPA gives on the CPU)."""
    scores = (q @ k.transpose(-2, -1)) / q.size(-1) ** 0.5
    weights = scores.masked_fill(~allowed, -math.inf).softmax(dim=-1)
    return weights.nan_to_num(0.0) @ v


@pytest.mark.parametrize("block_size", [4, 5])
def test_online_softmax_with_the_first_block_masked(block_size):
    x = torch.randn(1, 10, generator=torch.Generator().manual_seed(6))
    x[0, :5] = -math.inf  # the first block of 4 or 5 is all -inf
    out = online_softmax(x, block_size=block_size)
    assert out.isfinite().all() and (out[0, :5] == 0).all()
    sb.assert_close(out, x.softmax(-1))


def test_online_softmax_fully_masked_row_is_nan_like_torch():
    x = torch.randn(2, 7, generator=torch.Generator().manual_seed(7))
    x[1] = -math.inf
    out = online_softmax(x, block_size=3)
    assert out[1].isnan().all() and x.softmax(-1)[1].isnan().all()
    sb.assert_close(out[0], x[0].softmax(-1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_online_softmax_keeps_float32_statistics_for_half(dtype):
    # 70000 equal columns: l reaches 70000, inf as a float16 statistic.
    x = torch.zeros(1, 70000, dtype=dtype)
    out = online_softmax(x, block_size=4096)
    assert out.dtype == dtype and (out > 0).all()  # 0 if l were inf
    torch.testing.assert_close(out.float().sum(), torch.tensor(1.0),
                               rtol=0, atol=1e-2)


def test_leading_key_tiles_masked_and_a_fully_masked_row():
    q, k, v = qkv(8, (2, 3), 12, 16, 4, 3, torch.float64)
    rows, cols = torch.arange(12)[:, None], torch.arange(16)
    allowed = (cols <= rows + 4) & (cols > rows)  # row i sees i+1..i+4
    allowed[5] = False  # row 5 sees no key at all
    allowed[7] = cols >= 12  # row 7: its first three tiles of 4 are masked
    ours = flash_attention(q, k, v, attn_mask=allowed, block_q=4, block_k=4)
    assert ours.isfinite().all() and (ours[..., 5, :] == 0).all()
    sb.assert_close(ours, masked_reference(q, k, v, allowed))
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    sb.assert_close(ours, sdpa)  # zeros for row 5 too: sdpa-fully-masked...


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 12),
    source=st.integers(1, 12),
    block_q=st.integers(1, 13),
    block_k=st.integers(1, 13),
    causal=st.booleans(),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_property_masked_leading_tiles_equal_dense(length, source, block_q,
                                                   block_k, causal, data,
                                                   seed):
    """Each row masks its first `lead` keys (often whole tiles, sometimes
    all of them) and a random subset of the rest."""
    q, k, v = qkv(seed, (2,), length, source, 3, 2, torch.float64)
    lead = data.draw(st.lists(st.integers(0, source), min_size=length,
                              max_size=length))
    gen = torch.Generator().manual_seed(seed)
    allowed = torch.rand(length, source, generator=gen) < 0.7
    allowed &= torch.arange(source) >= torch.tensor(lead)[:, None]
    ours = flash_attention(q, k, v, causal=causal, attn_mask=allowed,
                           block_q=block_q, block_k=block_k)
    if causal:
        allowed &= torch.ones(length, source, dtype=torch.bool).tril()
    assert ours.isfinite().all()
    sb.assert_close(ours, masked_reference(q, k, v, allowed))


@PROPERTY_SETTINGS
@given(
    cols=st.integers(1, 20),
    block=st.integers(1, 25),
    lead=st.integers(0, 19),
    seed=st.integers(0, 2**16),
)
def test_property_online_softmax_with_masked_leading_columns(cols, block,
                                                             lead, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, cols, generator=gen, dtype=torch.float64) * 30
    x[0, : min(lead, cols - 1)] = -math.inf  # at least one value is left
    x[1, : lead % cols] = -math.inf
    out = online_softmax(x, block_size=block)
    assert out.isfinite().all()
    sb.assert_close(out, torch.softmax(x, dim=-1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_with_large_scores_stays_finite(dtype):
    q, k, v = qkv(1, (1, 2), 33, 40, 16, 16, torch.float32)
    q, k = q * 80, k * 80  # |q.k| passes 65504: unscaled q @ k^T overflows
    assert ((q.half() @ k.half().transpose(-2, -1)).isinf()).any()
    ours = flash_attention(q.to(dtype), k.to(dtype), v.to(dtype),
                           causal=True, block_q=8, block_k=16)
    assert ours.dtype == dtype and ours.isfinite().all()
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    sb.assert_close(ours.float(), ref, dtype=dtype)


def test_gradcheck_float64():
    q, k, v = (t.requires_grad_() for t in
               qkv(2, (1,), 5, 4, 3, 2, torch.float64))
    assert torch.autograd.gradcheck(
        lambda q, k, v: flash_attention(q, k, v, causal=True, block_q=2,
                                        block_k=3),
        (q, k, v),
    )


def test_arguments_are_validated():
    q, k, v = qkv(3, (1,), 4, 4, 2, 2, torch.float32)
    with pytest.raises(ValueError):
        flash_attention(q, k, v, block_q=0)
    with pytest.raises(ValueError):
        flash_attention(q, k[..., :0, :], v[..., :0, :])
    with pytest.raises(TypeError):
        flash_attention(q, k, v, True)  # causal is keyword-only
    with pytest.raises(TypeError):
        online_softmax(q, 2)


def test_tensor_bytes_counts_live_tensors_exactly():
    def make():
        a = torch.zeros(1000)  # 4000 bytes
        b = torch.ones(500, dtype=torch.float64)  # 4000 bytes, both alive
        del a, b
        c = torch.zeros(250)  # 1000 bytes, alone
        return c.view(25, 10)  # a view: no new storage

    with TensorBytes() as counter:
        out = make()
        assert counter.live == 1000
    assert (counter.peak, counter.largest) == (8000, 4000)
    del out
    assert counter.live == 0  # freed at once, by reference counting
    x = torch.zeros(10)
    assert tensor_bytes(lambda t: t[2:5].t(), x) == (0, 0)  # views only


def test_tiled_peak_is_far_below_materialised_scores():
    n, d_k = 1024, 64
    q, k, v = qkv(4, (1, 1), n, n, d_k, d_k, torch.float32)
    naive_peak, naive_largest = tensor_bytes(naive_attention, q, k, v)
    tiled_peak, tiled_largest = tensor_bytes(flash_attention, q, k, v,
                                             block_q=64, block_k=64)
    scores = n * n * 4
    assert naive_largest == scores and naive_peak >= 2 * scores
    assert tiled_largest < scores // 10  # no tensor close to L x S
    assert naive_peak / tiled_peak > 10  # the measured ratio is ~23


def test_naive_attention_is_plain_attention():
    q, k, v = qkv(5, (2,), 6, 7, 3, 4, torch.float64)
    sb.assert_close(naive_attention(q, k, v),
                    F.scaled_dot_product_attention(q, k, v))


def test_every_tensor_follows_the_inputs_device():
    """Run on CPU inputs while tensors made without device= go to 'meta':
    a tensor created on the default device would raise or leak into the
    result (catches CUDA-only breakage without a GPU)."""
    q, k, v = qkv(11, (2, 2), 13, 9, 8, 8, torch.float32)
    x = torch.randn(3, 10)
    expected = (flash_attention(q, k, v, causal=True, block_q=4, block_k=4),
                flash_attention(q, k, v, block_q=5, block_k=3),
                online_softmax(x, block_size=4))
    with sb.stray_tensors_on_meta():
        got = (flash_attention(q, k, v, causal=True, block_q=4, block_k=4),
               flash_attention(q, k, v, block_q=5, block_k=3),
               online_softmax(x, block_size=4))
    for actual, wanted in zip(got, expected):
        sb.assert_same_device_and_values(actual, wanted)
