"""snippets/alibi.py: the slopes against the paper and the authors' rule,
and SDPA with the ALiBi mask against scores + bias computed directly."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.alibi as mod
from snippets.alibi import alibi_attention, alibi_bias, alibi_slopes
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "8 heads, log2 of the slopes: -1 -2 -3 -4 -5 -6 -7 -8",
        "6 heads, log2 of the slopes: -2 -4 -6 -8 -1 -3",
        "12 heads, log2 of the slopes: -1 -2 -3 -4 -5 -6 -7 -8"
        " -0.5 -1.5 -2.5 -3.5",
        "5 heads, log2 of the slopes: -2 -4 -6 -8 -1",
        "bias of head 0 (slope 1/2), 4 tokens:",
        "  0.0  -inf  -inf  -inf",
        " -0.5   0.0  -inf  -inf",
        " -1.0  -0.5   0.0  -inf",
        " -1.5  -1.0  -0.5   0.0",
        "SDPA with the ALiBi mask equals scores + bias: True",
        "the authors' bias m * j gives the same output: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def test_eight_and_sixteen_heads_as_the_paper_lists_them():
    # arXiv 2108.12409, section 3: 1/2^1 ... 1/2^8 for 8 heads; for 16,
    # 1/2^0.5, 1/2^1, 1/2^1.5, ..., 1/2^8 (start and ratio 1/sqrt(2)).
    eight = torch.tensor([2.0 ** -e for e in range(1, 9)], dtype=F64)
    torch.testing.assert_close(alibi_slopes(8, dtype=F64), eight,
                               rtol=0, atol=0)
    sixteen = alibi_slopes(16, dtype=F64)
    sb.assert_close(sixteen[0], torch.tensor(2 ** -0.5, dtype=F64))
    sb.assert_close(sixteen[1:] / sixteen[:-1],
                    torch.full((15,), 2 ** -0.5, dtype=F64))
    sb.assert_close(sixteen[-1], torch.tensor(2.0 ** -8, dtype=F64))


def exponents_by_the_rule(n):
    """The authors' rule, as exponents of 2 written in closed form:
    p = largest power of 2 <= n; -8k/p for k = 1..p, then the odd
    multiples of -8/(2p), -4(2k - 1)/p for k = 1..n - p."""
    p = 2 ** int(math.floor(math.log2(n)))
    return ([-8 * k / p for k in range(1, p + 1)]
            + [-4 * (2 * k - 1) / p for k in range(1, n - p + 1)])


@pytest.mark.parametrize("n", range(1, 65))
def test_slopes_follow_the_rule_for_every_head_count(n):
    slopes = alibi_slopes(n, dtype=F64)
    assert slopes.shape == (n,)
    sb.assert_close(slopes.log2(), torch.tensor(exponents_by_the_rule(n),
                                                dtype=F64))
    assert len(set(slopes.tolist())) == n  # no two heads share a slope
    assert (slopes > 0).all() and (slopes < 1).all()


@pytest.mark.parametrize("n,expected", [
    (6, [-2, -4, -6, -8, -1, -3]),  # 4 heads' slopes + 2 of the 8 heads'
    (5, [-2, -4, -6, -8, -1]),
    (12, [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5]),
    (1, [-8]),
    (3, [-4, -8, -2]),
])
def test_hand_worked_head_counts(n, expected):
    sb.assert_close(alibi_slopes(n, dtype=F64).log2(),
                    torch.tensor(expected, dtype=F64))


def test_the_extra_slopes_interleave_with_the_first_ones():
    """p < n < 2p heads: the first p slopes are those of p heads, and every
    slope is one of the 2p heads' slopes; the extra ones interleave with the
    first ones, and the first extra slope, 2^(-4/p), is above all of them."""
    for n in (3, 5, 6, 7, 9, 12, 15, 20, 24, 31):
        p = 2 ** int(math.floor(math.log2(n)))
        slopes = alibi_slopes(n, dtype=F64)
        sb.assert_close(slopes[:p], alibi_slopes(p, dtype=F64))
        finer = alibi_slopes(2 * p, dtype=F64)
        sb.assert_close(slopes[p:], finer[0::2][: n - p])
        sb.assert_close(slopes[:p], finer[1::2])
        assert slopes[p] > slopes[:p].max()
        for j in range(1, n - p):
            assert slopes[j - 1] > slopes[p + j] > slopes[j]


def test_bias_values_one_by_one():
    h, length, source = 6, 3, 5  # 3 new queries after 2 cached tokens
    bias = alibi_bias(h, length, source)
    assert bias.shape == (h, length, source) and bias.dtype == torch.float32
    for dtype in (torch.float16, torch.bfloat16, F64):  # never below fp32
        assert alibi_bias(h, 2, dtype=dtype).dtype == (
            F64 if dtype == F64 else torch.float32)
    slopes = alibi_slopes(h)
    for head in range(h):
        for r in range(length):
            i = source - length + r  # position of the query
            for j in range(source):
                value = bias[head, r, j].item()
                if j > i:
                    assert value == float("-inf")
                else:
                    assert value == pytest.approx(
                        -slopes[head].item() * (i - j))
    assert (bias[:, torch.arange(3), torch.arange(2, 5)] == 0).all()


def direct_alibi(q, k, v):
    """Loop over heads and queries: softmax(q k^T / sqrt(d) - m (i - j))
    over the keys j <= i, everything written out, no mask tensor."""
    b, h, length, d = q.shape
    source = k.size(-2)
    slopes = alibi_slopes(h, dtype=F64)
    out = torch.zeros(b, h, length, v.size(-1), dtype=q.dtype)
    for head in range(h):
        for r in range(length):
            i = source - length + r
            keys = torch.arange(i + 1)  # j <= i only
            scores = torch.einsum("bd,bjd->bj", q[:, head, r],
                                  k[:, head, keys])
            scores = scores / math.sqrt(d) - slopes[head] * (i - keys)
            weights = torch.softmax(scores, dim=-1)  # (b, i + 1)
            out[:, head, r] = (weights[..., None] * v[:, head, keys]).sum(1)
    return out


def qkv(seed, b, h, length, source, d, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(b, h, length, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype))


@pytest.mark.parametrize("heads", [8, 12, 6, 5])
@pytest.mark.parametrize("length,source", [(9, 9), (1, 9), (4, 9)])
def test_sdpa_with_the_mask_equals_the_direct_loop(heads, length, source):
    q, k, v = qkv(heads, 2, heads, length, source, 8)
    sb.assert_close(alibi_attention(q, k, v), direct_alibi(q, k, v))


@PROPERTY_SETTINGS
@given(heads=st.integers(1, 20), length=st.integers(1, 8),
       extra=st.integers(0, 5), d=st.integers(1, 8),
       seed=st.integers(0, 2**16))
def test_property_sdpa_equals_scores_plus_bias(heads, length, extra, d, seed):
    source = length + extra
    q, k, v = qkv(seed, 1, heads, length, source, d)
    bias = alibi_bias(heads, length, source, dtype=F64)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) + bias
    expected = torch.softmax(scores, dim=-1) @ v
    sb.assert_close(alibi_attention(q, k, v), expected)


def test_the_authors_row_constant_bias_is_equivalent():
    """The official fairseq code adds m * j to every row (with the -inf
    future mask); softmax is unchanged by the per-row shift m * i."""
    q, k, v = qkv(3, 2, 8, 10, 10, 16)
    j = torch.arange(10)
    future = j[None, :] > j[:, None]
    slopes = alibi_slopes(8, dtype=F64)[:, None, None]
    official = (slopes * j).masked_fill(future, float("-inf"))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=official)
    sb.assert_close(alibi_attention(q, k, v), ref)


def test_zero_slopes_would_be_plain_causal_attention():
    """Sanity check of the mask: without the penalty it is is_causal."""
    q, k, v = qkv(4, 1, 4, 6, 6, 8)
    causal_only = alibi_bias(4, 6).isinf().double() * float("-inf")
    causal_only = causal_only.nan_to_num(nan=0.0)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    sb.assert_close(F.scaled_dot_product_attention(q, k, v,
                                                   attn_mask=causal_only),
                    ref)
    assert not torch.allclose(alibi_attention(q, k, v), ref)


def test_decoding_one_token_equals_the_last_row_of_the_full_pass():
    q, k, v = qkv(5, 2, 6, 12, 12, 8)
    full = alibi_attention(q, k, v)
    step = alibi_attention(q[..., -1:, :], k, v)
    sb.assert_close(step, full[..., -1:, :])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_with_the_float32_mask(dtype):
    q, k, v = qkv(6, 2, 8, 300, 300, 32, dtype=torch.float32)
    exact = alibi_attention(q.double(), k.double(), v.double())
    low = alibi_attention(q.to(dtype), k.to(dtype), v.to(dtype))
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.double(), exact, dtype=dtype)


def test_sdpa_uses_a_float32_mask_at_float32_precision_for_bfloat16():
    """Why alibi_bias stays float32: SDPA (CPU, torch 2.13) accepts it with
    bfloat16 q/k/v and keeps its precision. With q = k = 0 and one-hot
    values, the output is the attention weights, softmax(bias) itself."""
    heads, source = 12, 600
    bias = alibi_bias(heads, 1, source)  # the last of 600 tokens
    assert not torch.equal(bias.bfloat16().float(), bias)  # rounding loses
    zeros = torch.zeros(1, heads, 1, 8, dtype=torch.bfloat16)
    keys = torch.zeros(1, heads, source, 8, dtype=torch.bfloat16)
    one_hot = torch.eye(source, dtype=torch.bfloat16).expand(1, heads, -1,
                                                             -1)
    exact = torch.softmax(bias.double(), dim=-1)  # (H, 1, S)
    kept = F.scaled_dot_product_attention(zeros, keys, one_hot,
                                          attn_mask=bias)
    rounded = F.scaled_dot_product_attention(zeros, keys, one_hot,
                                             attn_mask=bias.bfloat16())
    assert kept.dtype == torch.bfloat16
    seen = exact > 1e-6  # relative errors of the weights that matter

    def relative_error(out):
        return ((out[0].double() - exact) / exact)[seen].abs().max()

    # bfloat16 output rounding alone is 2^-9; a rounded mask is far worse
    assert relative_error(kept) < 2**-7 < relative_error(rounded)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        alibi_slopes(0)
    with pytest.raises(ValueError, match="queries"):
        alibi_bias(4, 5, 3)


def test_every_tensor_follows_the_inputs_device():
    q, k, v = qkv(21, 1, 4, 3, 5, 8, dtype=torch.float32)
    expected = alibi_attention(q, k, v)
    with sb.stray_tensors_on_meta():
        out = alibi_attention(q, k, v)
    sb.assert_same_device_and_values(out, expected)
    assert alibi_slopes(6, device="meta").device.type == "meta"
    assert alibi_bias(4, 3, 5, device="meta").device.type == "meta"


@pytest.mark.parametrize("device, mask_dtype", [("cpu", torch.float32), ("meta", torch.bfloat16)])
def test_the_mask_stays_float32_on_the_cpu_and_takes_qs_dtype_elsewhere(monkeypatch, device, mask_dtype):
    """The branch for CUDA, run on the meta device (no data, so no GPU needed): off the CPU the
    mask is converted to q's dtype, as CUDA's kernels want; on the CPU it stays float32."""
    seen = []
    real = F.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, **kwargs):
        seen.append(attn_mask.dtype)
        return real(q, k, v, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr(mod.F, "scaled_dot_product_attention", spy)
    q = torch.randn(1, 4, 3, 8, dtype=torch.bfloat16, device=device)
    alibi_attention(q, q, q)
    assert seen == [mask_dtype]
