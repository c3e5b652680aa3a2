"""snippets/relative_position_bias.py: Shaw et al.'s relative keys against
eq. (4) written out, T5's buckets against a table worked out by hand, and
both biases through SDPA against scores + bias computed directly."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.relative_position_bias as mod
from snippets.relative_position_bias import (
    ShawRelativeKeys,
    T5RelativePositionBias,
    relative_positions,
    shaw_attention,
    t5_relative_position_bucket,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "clip(j - i, 2) for 5 tokens:",
        "tensor([[ 0,  1,  2,  2,  2],",
        "        [-1,  0,  1,  2,  2],",
        "        [-2, -1,  0,  1,  2],",
        "        [-2, -2, -1,  0,  1],",
        "        [-2, -2, -2, -1,  0]])",
        "learned vectors, 2k + 1: 5",
        "SDPA with the bias equals eq. (4): True",
        "and with a causal mask: True",
    ],
    "t5": [
        "j - i  -128  -40  -16   -8   -7   -1    0    1    7    8   16   40"
        "  128",
        "bidir.   15   12   10    8    7    1    0   17   23   24   26   28"
        "   31",
        "causal   31   23   16    8    7    1    0    0    0    0    0    0"
        "    0",
        "bidirectional=True: SDPA equals scores + bias: True",
        "bidirectional=False: SDPA equals scores + bias: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def qkv(seed, b, h, length, source, d, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(b, h, length, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype))


def test_relative_positions_table():
    expected = torch.tensor([[-2, -1, 0, 1], [-3, -2, -1, 0]])
    assert torch.equal(relative_positions(2, 4), expected)  # last 2 of 4
    assert torch.equal(relative_positions(3), torch.tensor(
        [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]]))
    with pytest.raises(ValueError, match="queries"):
        relative_positions(5, 3)


# --- Shaw et al. 2018 -------------------------------------------------------

def shaw_by_loop(q, k, v, relative_keys, attend=None):
    """Eq. (4) of arXiv 1803.02155 one (i, j) at a time:
    e_ij = q_i (k_j + a_ij)^T / sqrt(d), a_ij = w[clip(j - i, k)]."""
    b, h, length, d = q.shape
    source, kmax = k.size(-2), relative_keys.max_distance
    w = relative_keys.w.weight
    e = torch.empty(b, h, length, source, dtype=q.dtype)
    for r in range(length):
        i = source - length + r
        for j in range(source):
            a_ij = w[max(-kmax, min(kmax, j - i)) + kmax]
            e[..., r, j] = ((q[..., r, :] * (k[..., j, :] + a_ij)).sum(-1)
                            / math.sqrt(d))
            if attend is not None and not attend[r, j]:
                e[..., r, j] = float("-inf")
    return torch.softmax(e, dim=-1) @ v


def test_clipped_indices_by_hand():
    relative_keys = ShawRelativeKeys(4, max_distance=1)
    assert relative_keys.w.num_embeddings == 3  # w_-1, w_0, w_1
    rel = relative_positions(4).clamp(-1, 1) + 1
    assert torch.equal(rel, torch.tensor([[1, 2, 2, 2], [0, 1, 2, 2],
                                          [0, 0, 1, 2], [0, 0, 0, 1]]))


@pytest.mark.parametrize("kmax", [0, 1, 3, 20])
@pytest.mark.parametrize("length,source", [(6, 6), (2, 6), (1, 6)])
def test_shaw_through_sdpa_equals_the_loop(kmax, length, source):
    torch.manual_seed(kmax)
    relative_keys = ShawRelativeKeys(8, max_distance=kmax).double()
    q, k, v = qkv(kmax, 2, 3, length, source, 8)
    sb.assert_close(shaw_attention(q, k, v, relative_keys),
                    shaw_by_loop(q, k, v, relative_keys))
    attend = relative_positions(length, source) <= 0  # causal, aligned
    sb.assert_close(shaw_attention(q, k, v, relative_keys, attend=attend),
                    shaw_by_loop(q, k, v, relative_keys, attend=attend))


@PROPERTY_SETTINGS
@given(kmax=st.integers(0, 6), length=st.integers(1, 7),
       extra=st.integers(0, 4), d=st.integers(1, 8),
       seed=st.integers(0, 2**16))
def test_property_bias_is_the_second_term_of_eq_5(kmax, length, extra, d,
                                                 seed):
    """Eq. (5): q_i (k_j + a_ij)^T = q_i k_j^T + q_i a_ij^T, so SDPA's own
    scaled q k^T plus our mask is eq. (4)."""
    torch.manual_seed(seed)
    source = length + extra
    relative_keys = ShawRelativeKeys(d, max_distance=kmax).double()
    q, k, v = qkv(seed, 1, 2, length, source, d)
    bias = relative_keys(q, source)
    assert bias.shape == (1, 2, length, source)
    rel = relative_positions(length, source).clamp(-kmax, kmax) + kmax
    a = relative_keys.w.weight[rel]  # (L, S, d)
    eq4 = ((q[..., :, None, :] * (k[..., None, :, :] + a)).sum(-1)
           / math.sqrt(d))
    sb.assert_close(q @ k.transpose(-2, -1) / math.sqrt(d) + bias, eq4)
    sb.assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=bias),
                    torch.softmax(eq4, dim=-1) @ v)


def test_distances_beyond_k_share_one_vector_and_only_used_rows_learn():
    torch.manual_seed(1)
    relative_keys = ShawRelativeKeys(4, max_distance=10).double()
    q, k, v = qkv(1, 1, 2, 3, 3, 4)  # distances -2..2 only
    shaw_attention(q, k, v, relative_keys).sum().backward()
    grad = relative_keys.w.weight.grad  # rows 0..20 for w_-10..w_10
    used = torch.zeros(21, dtype=torch.bool)
    used[8:13] = True
    assert (grad[used].abs().sum(-1) > 0).all()
    assert (grad[~used] == 0).all()

    near = ShawRelativeKeys(4, max_distance=2).double()
    q = torch.randn(1, 1, 1, 4, dtype=F64)
    bias = near(q, 9)[0, 0, 0]  # one query at position 8, keys 0..8
    assert torch.equal(bias[:7], bias[:1].expand(7))  # j - i <= -2: w_-2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_shaw_in_half_precision(dtype):
    torch.manual_seed(2)
    relative_keys = ShawRelativeKeys(32, max_distance=4)
    q, k, v = qkv(2, 2, 4, 16, 16, 32, dtype=torch.float32)
    exact = shaw_attention(q.double(), k.double(), v.double(),
                           relative_keys.double())
    low = shaw_attention(q.to(dtype), k.to(dtype), v.to(dtype),
                         relative_keys.to(dtype))
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.double(), exact, dtype=dtype)


def test_shaw_bias_scales_q_first_so_float16_does_not_overflow():
    torch.manual_seed(6)
    relative_keys = ShawRelativeKeys(32, max_distance=4).half()
    q = (torch.randn(1, 2, 16, 32) * 1e4).half()  # |q . a| beyond 65504
    a = relative_keys.w.weight
    assert (q @ a.T).isinf().any()  # the unscaled product overflows
    bias = relative_keys(q, 16)
    assert bias.isfinite().all()
    exact = relative_keys.double()(q.double(), 16)
    # float16 sums of 32 products: errors relative to the largest entry
    assert (bias.double() - exact).abs().max() < 2e-3 * exact.abs().max()


# --- T5 ---------------------------------------------------------------------

# Bidirectional, num_buckets=32, max_distance=128: 16 buckets per direction
# (keys after the query: +16). max_exact = 16 // 2 = 8, so distances 0..7
# are their own bucket. For n >= 8 the bucket is
#   8 + floor(log(n / 8) / log(128 / 8) * 8) = 8 + floor(2 * log2(n / 8)),
# at most 15:
#   n = 8:   2 log2(1)      = 0     -> 8
#   n = 11:  2 log2(1.375)  = 0.92  -> 8
#   n = 12:  2 log2(1.5)    = 1.17  -> 9
#   n = 15:  2 log2(1.875)  = 1.81  -> 9
#   n = 16:  2 log2(2)      = 2     -> 10
#   n = 22:  2 log2(2.75)   = 2.92  -> 10
#   n = 23:  2 log2(2.875)  = 3.05  -> 11
#   n = 32:  2 log2(4)      = 4     -> 12
#   n = 40:  2 log2(5)      = 4.64  -> 12
#   n = 46:  2 log2(5.75)   = 5.04  -> 13
#   n = 64:  2 log2(8)      = 6     -> 14
#   n = 90:  2 log2(11.25)  = 6.98  -> 14
#   n = 91:  2 log2(11.375) = 7.02  -> 15
#   n = 127: 2 log2(15.875) = 7.98  -> 15
#   n = 128: 2 log2(16)     = 8     -> 16, capped at 15; so is n = 500
BIDIRECTIONAL = {
    0: 0, -1: 1, -2: 2, -7: 7, -8: 8, -11: 8, -12: 9, -15: 9, -16: 10,
    -22: 10, -23: 11, -32: 12, -40: 12, -46: 13, -64: 14, -90: 14, -91: 15,
    -127: 15, -128: 15, -500: 15,
    1: 17, 7: 23, 8: 24, 15: 25, 16: 26, 40: 28, 127: 31, 128: 31, 500: 31,
}
# Causal, num_buckets=32, max_distance=128: only n = i - j >= 0 counts
# (keys after the query: bucket 0). max_exact = 16; for n >= 16 the bucket
# is 16 + floor(log(n / 16) / log(128 / 16) * 16)
#    = 16 + floor(16/3 * log2(n / 16)), at most 31:
#   n = 16:  16/3 * 0             -> 16
#   n = 20:  16/3 * log2(1.25)    = 1.72  -> 17
#   n = 32:  16/3 * 1             = 5.33  -> 21
#   n = 40:  16/3 * log2(2.5)     = 7.05  -> 23
#   n = 64:  16/3 * 2             = 10.67 -> 26
#   n = 100: 16/3 * log2(6.25)    = 14.10 -> 30
#   n = 127: 16/3 * log2(7.9375)  = 15.94 -> 31
#   n = 128: 16/3 * 3             = 16    -> 32, capped at 31; so is 500
CAUSAL = {
    0: 0, -1: 1, -8: 8, -15: 15, -16: 16, -20: 17, -32: 21, -40: 23,
    -64: 26, -100: 30, -127: 31, -128: 31, -500: 31,
    1: 0, 8: 0, 16: 0, 500: 0,
}


@pytest.mark.parametrize("bidirectional,table", [(True, BIDIRECTIONAL),
                                                 (False, CAUSAL)])
def test_buckets_against_the_hand_computed_table(bidirectional, table):
    rel = torch.tensor(list(table))
    buckets = t5_relative_position_bucket(rel, bidirectional=bidirectional)
    assert buckets.tolist() == list(table.values())
    assert buckets.dtype == rel.dtype


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64),
                                                      (8, 20)])
def test_buckets_are_monotone_and_cover_the_range(bidirectional,
                                                  num_buckets, max_distance):
    back = t5_relative_position_bucket(-torch.arange(0, 3 * max_distance),
                                       bidirectional=bidirectional,
                                       num_buckets=num_buckets,
                                       max_distance=max_distance)
    assert (back.diff() >= 0).all()
    half = num_buckets // 2 if bidirectional else num_buckets
    assert back[0] == 0 and back[-1] == half - 1
    assert torch.equal(back.unique(), torch.arange(half))  # none unused
    assert (back[max_distance:] == half - 1).all()
    ahead = t5_relative_position_bucket(torch.arange(1, 3 * max_distance),
                                        bidirectional=bidirectional,
                                        num_buckets=num_buckets,
                                        max_distance=max_distance)
    if bidirectional:
        assert torch.equal(ahead, back[1:] + half)
    else:
        assert (ahead == 0).all()


def t5_by_loop(q, k, v, t5_bias):
    """softmax(q_i k_j + b[bucket(j - i), h]) over keys, one (i, j) at a
    time; causal: only j <= i. No 1/sqrt(d), as in T5."""
    b, h, length, _ = q.shape
    source = k.size(-2)
    table = t5_bias.bias.weight  # (num_buckets, H)
    e = torch.empty(b, h, length, source, dtype=q.dtype)
    for r in range(length):
        i = source - length + r
        for j in range(source):
            bucket = t5_relative_position_bucket(
                torch.tensor(j - i), bidirectional=t5_bias.bidirectional)
            e[..., r, j] = (q[..., r, :] * k[..., j, :]).sum(-1) \
                + table[bucket]
            if not t5_bias.bidirectional and j > i:
                e[..., r, j] = float("-inf")
    return torch.softmax(e, dim=-1) @ v


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("length,source", [(10, 10), (3, 10), (1, 200)])
def test_t5_bias_through_sdpa_equals_the_loop(bidirectional, length, source):
    torch.manual_seed(3)
    t5_bias = T5RelativePositionBias(3, bidirectional=bidirectional).double()
    q, k, v = qkv(3, 2, 3, length, source, 8)
    bias = t5_bias(length, source)
    assert bias.shape == (3, length, source)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)
    sb.assert_close(out, t5_by_loop(q, k, v, t5_bias))


def test_causal_t5_bias_folds_in_the_causal_mask():
    t5_bias = T5RelativePositionBias(2, bidirectional=False)
    bias = t5_bias(5)
    future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    assert bias[:, future].isneginf().all()
    assert bias[:, ~future].isfinite().all()
    # row r of a decoding step equals the last rows of the full table
    assert torch.equal(t5_bias(2, 5), bias[:, -2:])


def test_t5_bias_is_shared_across_batch_and_learns_per_head():
    torch.manual_seed(4)
    t5_bias = T5RelativePositionBias(4, bidirectional=True).double()
    q, k, v = qkv(4, 3, 4, 6, 6, 8)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=t5_bias(6),
                                         scale=1.0)
    out.sum().backward()
    grad = t5_bias.bias.weight.grad  # (32, 4)
    used = t5_relative_position_bucket(relative_positions(6),
                                       bidirectional=True).unique()
    assert (grad[used].abs() > 0).all()
    unused = torch.ones(32, dtype=torch.bool)
    unused[used] = False
    assert (grad[unused] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_t5_in_half_precision(dtype):
    torch.manual_seed(5)
    t5_bias = T5RelativePositionBias(4, bidirectional=False)
    q, k, v = qkv(5, 2, 4, 40, 40, 16, dtype=torch.float32)
    bias = t5_bias(40)
    exact = F.scaled_dot_product_attention(q.double(), k.double(),
                                           v.double(),
                                           attn_mask=bias.double(),
                                           scale=1.0)
    low = F.scaled_dot_product_attention(q.to(dtype), k.to(dtype),
                                         v.to(dtype), attn_mask=bias,
                                         scale=1.0)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.double(), exact, dtype=dtype)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="max_distance"):
        ShawRelativeKeys(4, max_distance=-1)
