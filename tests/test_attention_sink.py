"""snippets/attention_sink.py: the sink logit equals an extra zero-value key
(against SDPA, two constructions), and the StreamingLLM cache keeps exactly the
sinks and the window and equals masked attention over the whole stream."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.attention_sink as mod
from snippets.attention_sink import SinkCache, add_sink_afterwards, attention_with_sink, streaming_mask
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "sink = extra key with score = sink and zero value: True",
        "mean weight on real keys, per head: ['0.922', '0.822', '0.444']",
        "query with no key -> zeros: True",
    ],
    "streaming": [
        "positions kept after 20 tokens: [0, 1, 2, 3, 14, 15, 16, 17, 18, 19]",
        "cache size: 10 = 4 + 6",
        "every step equals the full sequence with streaming_mask: True",
        "row 19 of the mask (1 = may attend):",
        "11110000000000111111",
    ],
    "lse": [
        "lse from flex_attention, o * sigmoid(lse - sink) = softmax over [scores, sink]: True",
        "flex's lse = torch.logsumexp of the scaled scores: True",
        "share kept by the keys, query 0, per head: ['0.668', '0.630', '0.067']",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "attention_sink.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def inputs(seed, batch, heads, length, source, d, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, length, d, generator=gen, dtype=dtype)
    k = torch.randn(batch, heads, source, d, generator=gen, dtype=dtype)
    v = torch.randn(batch, heads, source, d, generator=gen, dtype=dtype)
    sink = 3 * torch.randn(heads, generator=gen, dtype=dtype)
    return q, k, v, sink


def sdpa_with_masked_extra_key(q, k, v, sink, attend):
    """Extra key = zero vector, its score set to the sink by a float mask."""
    B, h, L, d = q.shape
    S = k.size(-2)
    zeros = q.new_zeros(B, h, 1, d)
    bias = q.new_zeros(B, h, L, S)
    if attend is not None:
        bias = bias.masked_fill(~attend, float("-inf"))
    bias = torch.cat([bias, sink.view(1, h, 1, 1).expand(B, h, L, 1)], dim=-1)
    return F.scaled_dot_product_attention(
        q, torch.cat([k, zeros], -2), torch.cat([v, zeros], -2), attn_mask=bias
    )


def sdpa_with_real_extra_key(q, k, v, sink):
    """Extra key built as a vector: one more dimension, q gets a 1 there and the
    sink key gets sink / scale, so its score is exactly the sink. No mask."""
    B, h, L, d = q.shape
    scale = d**-0.5
    q_aug = torch.cat([q, q.new_ones(B, h, L, 1)], -1)
    k_aug = torch.cat([k, k.new_zeros(B, h, k.size(-2), 1)], -1)
    sink_key = torch.cat([q.new_zeros(B, h, 1, d), (sink / scale).view(1, h, 1, 1).expand(B, h, 1, 1)], -1)
    v_aug = torch.cat([v, v.new_zeros(B, h, 1, v.size(-1))], -2)
    return F.scaled_dot_product_attention(q_aug, torch.cat([k_aug, sink_key], -2), v_aug, scale=scale)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    heads=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    d=st.integers(1, 6),
    density=st.sampled_from([None, 0.0, 0.5, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_property_sink_equals_extra_zero_value_key(batch, heads, length, source, d, density, seed):
    q, k, v, sink = inputs(seed, batch, heads, length, source, d)
    attend = None
    if density is not None:
        gen = torch.Generator().manual_seed(seed + 1)
        attend = torch.rand(batch, 1, length, source, generator=gen) < density
    out = attention_with_sink(q, k, v, sink, attend=attend)
    sb.assert_close(out, sdpa_with_masked_extra_key(q, k, v, sink, attend))
    if attend is None:
        sb.assert_close(out, sdpa_with_real_extra_key(q, k, v, sink))


def test_matches_the_formula_with_the_sink_in_the_denominator():
    """exp(s_j) / (exp(sink) + sum_i exp(s_i)), written out without softmax."""
    q, k, v, sink = inputs(1, 2, 3, 4, 5, 6)
    scores = q @ k.transpose(-2, -1) / 6**0.5
    weights = scores.exp() / (sink.view(1, 3, 1, 1).exp() + scores.exp().sum(-1, keepdim=True))
    sb.assert_close(attention_with_sink(q, k, v, sink), weights @ v)
    # weight left for the real keys: 1 - exp(sink) / denominator
    total = attention_with_sink(q, k, torch.ones(2, 3, 5, 1, dtype=F64), sink)
    assert (total < 1).all() and (total > 0).all()


def test_sink_of_minus_infinity_is_plain_attention():
    q, k, v, _ = inputs(2, 1, 2, 3, 4, 5)
    sink = torch.full((2,), float("-inf"), dtype=F64)
    sb.assert_close(attention_with_sink(q, k, v, sink), F.scaled_dot_product_attention(q, k, v))


def test_fully_masked_row_gives_zeros_and_finite_gradients():
    q, k, v, sink = (t.requires_grad_() for t in inputs(3, 1, 2, 3, 4, 5))
    attend = torch.ones(3, 4, dtype=torch.bool)
    attend[1] = False
    out = attention_with_sink(q, k, v, sink, attend=attend)
    assert (out[:, :, 1] == 0).all() and not out.isnan().any()
    out.sum().backward()
    assert all(t.grad.isfinite().all() for t in (q, k, v, sink))


def test_gradcheck_float64_including_the_sink():
    q, k, v, sink = (t.requires_grad_() for t in inputs(4, 1, 2, 3, 4, 3))
    attend = torch.ones(3, 4, dtype=torch.bool).tril(diagonal=1)
    fn = lambda q, k, v, sink: attention_with_sink(q, k, v, sink, attend=attend)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (q, k, v, sink))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_finite_and_close(dtype):
    q, k, v, sink = inputs(5, 2, 3, 5, 7, 16, torch.float32)
    q = q * 30  # |q.k| beyond 65504 before the scale, if it were not applied first
    k = k * 100
    attend = torch.ones(5, 7, dtype=torch.bool).tril(diagonal=2)
    low = attention_with_sink(*(t.to(dtype) for t in (q, k, v, sink)), attend=attend)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), attention_with_sink(q, k, v, sink, attend=attend), dtype=dtype)


def expected_positions(total, n_sink, window):
    if total <= n_sink + window:
        return list(range(total))
    return list(range(n_sink)) + list(range(total - window, total))


@PROPERTY_SETTINGS
@given(
    n_sink=st.integers(0, 4),
    window=st.integers(1, 6),
    chunks=st.lists(st.integers(1, 7), min_size=1, max_size=12),
)
def test_property_cache_keeps_the_sinks_and_the_window(n_sink, window, chunks):
    total = sum(chunks)
    gen = torch.Generator().manual_seed(total)
    k, v = torch.randn(2, 1, 2, total, 3, generator=gen, dtype=F64).unbind(0)
    cache, start = SinkCache(n_sink=n_sink, window=window), 0
    for size in chunks:
        cache.append(k[..., start : start + size, :], v[..., start : start + size, :])
        start += size
        kept = expected_positions(start, n_sink, window)
        assert cache.positions.tolist() == kept
        assert cache.k.size(-2) <= n_sink + window
        assert torch.equal(cache.k, k[..., kept, :]) and torch.equal(cache.v, v[..., kept, :])


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 24),
    n_sink=st.integers(0, 4),
    window=st.integers(1, 8),
    seed=st.integers(0, 2**16),
)
def test_property_decoding_with_the_cache_equals_the_masked_stream(length, n_sink, window, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 2, 2, length, 4, generator=gen, dtype=F64).unbind(0)
    attend = streaming_mask(length, n_sink=n_sink, window=window)
    cache = SinkCache(n_sink=n_sink, window=window)
    for t in range(length):
        cache.append(k[..., t : t + 1, :], v[..., t : t + 1, :])
        step = F.scaled_dot_product_attention(q[..., t : t + 1, :], cache.k, cache.v)
        full = F.scaled_dot_product_attention(q[..., t : t + 1, :], k, v, attn_mask=attend[t : t + 1])
        sb.assert_close(step, full)
        assert attend[t].nonzero().flatten().tolist() == cache.positions.tolist()


def test_streaming_mask_special_cases():
    causal = torch.ones(9, 9, dtype=torch.bool).tril()
    assert torch.equal(streaming_mask(9, n_sink=0, window=9), causal)  # the window covers everything
    assert torch.equal(streaming_mask(9, n_sink=3, window=100), causal)
    band = causal & ~torch.ones(9, 9, dtype=torch.bool).tril(diagonal=-3)
    assert torch.equal(streaming_mask(9, n_sink=0, window=3), band)  # no sinks: a sliding window
    assert streaming_mask(9, n_sink=2, window=3)[8].tolist() == [True, True] + [False] * 4 + [True] * 3


@pytest.mark.parametrize("n_sink,window", [(-1, 4), (2, 0)])
def test_invalid_cache_sizes_raise(n_sink, window):
    with pytest.raises(ValueError, match="n_sink"):
        SinkCache(n_sink=n_sink, window=window)


def test_the_cache_follows_the_device_of_the_keys():
    q, k, v, _ = inputs(31, 1, 2, 9, 9, 4, dtype=torch.float32)
    plain = SinkCache(n_sink=2, window=3)
    with sb.stray_tensors_on_meta():
        cache = SinkCache(n_sink=2, window=3)
        for t in range(9):
            cache.append(k[..., t:t + 1, :], v[..., t:t + 1, :])
    for t in range(9):
        plain.append(k[..., t:t + 1, :], v[..., t:t + 1, :])
    assert cache.positions.device == k.device
    assert cache.positions.tolist() == plain.positions.tolist()
    sb.assert_same_device_and_values(cache.k, plain.k)
    mask = streaming_mask(9, n_sink=2, window=3, device="meta")
    assert mask.device.type == "meta"


# --- the sink added afterwards from the log-sum-exp (gpt-oss's sinks, FlashAttention-style kernels)
@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    heads=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    d=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_property_sink_afterwards_equals_the_sink_column(batch, heads, length, source, d, seed):
    """o * sigmoid(lse - sink), with o from SDPA and lse from torch.logsumexp, equals the softmax
    over [scores, sink] with the sink column dropped; every row keeps at least one key."""
    q, k, v, sink = inputs(seed, batch, heads, length, source, d)
    gen = torch.Generator().manual_seed(seed + 2)
    attend = torch.rand(batch, 1, length, source, generator=gen) < 0.6
    attend[..., 0] = True
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    scores = (q @ k.transpose(-2, -1) / d**0.5).masked_fill(~attend, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    sb.assert_close(add_sink_afterwards(out, lse, sink), attention_with_sink(q, k, v, sink, attend=attend))


def test_sink_afterwards_gradients_match_the_sink_column():
    q, k, v, sink = (t.requires_grad_() for t in inputs(11, 1, 2, 3, 4, 5))
    attend = torch.ones(3, 4, dtype=torch.bool).tril(diagonal=1)

    def afterwards(q, k, v, sink):
        scores = (q @ k.transpose(-2, -1) / 5**0.5).masked_fill(~attend, float("-inf"))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        return add_sink_afterwards(out, torch.logsumexp(scores, -1), sink)

    grads = torch.autograd.grad(afterwards(q, k, v, sink).sum(), (q, k, v, sink))
    expected = torch.autograd.grad(attention_with_sink(q, k, v, sink, attend=attend).sum(), (q, k, v, sink))
    for got, want in zip(grads, expected):
        sb.assert_close(got, want)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_flex_lse_with_a_row_without_keys_gives_zeros():
    """flex_attention's returned lse: a query with no key has lse = -inf, so the keys keep
    sigmoid(-inf) = 0 of it and the output is 0, as attention_with_sink gives it."""
    from torch.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention

    def from_query_1(b, h, q_idx, kv_idx):
        return (q_idx > 0) & (kv_idx <= q_idx)

    T = 16
    q, k, v, sink = inputs(12, 1, 2, T, T, 4, dtype=torch.float32)
    blocks = create_block_mask(from_query_1, None, None, T, T, device="cpu", BLOCK_SIZE=8)
    out, aux = flex_attention(q, k, v, block_mask=blocks, return_aux=AuxRequest(lse=True))
    attend = torch.ones(T, T, dtype=torch.bool).tril()
    attend[0] = False
    got = add_sink_afterwards(out, aux.lse, sink)
    assert (got[..., 0, :] == 0).all() and not got.isnan().any()
    sb.assert_close(got, attention_with_sink(q, k, v, sink, attend=attend))


def gpt_oss_layout_sdpa(Q, K, V, S, sm_scale, sliding_window=0):
    """Attention with sinks in the layout of gpt-oss's reference sdpa() (openai/gpt-oss,
    gpt_oss/torch/model.py at commit a194b99), restated head by head: Q is (T, G, m, d), m query
    heads per key/value head, K and V are (T, G, d), S has one sink per query head, head g * m + j;
    causal, optionally with a window (key j seen by query i when i - window < j <= i)."""
    T, G, m, d = Q.shape
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    seen = (j <= i) & ((j > i - sliding_window) if sliding_window else True)
    out = Q.new_empty(T, G, m, d)
    for g in range(G):
        for member in range(m):
            scores = (Q[:, g, member] @ K[:, g].T * sm_scale).masked_fill(~seen, float("-inf"))
            column = S[g * m + member].expand(T, 1)
            weights = torch.softmax(torch.cat([scores, column], dim=-1), dim=-1)[:, :T]
            out[:, g, member] = weights @ V[:, g]
    return out.reshape(T, -1)


def test_gpt_oss_layout_equals_the_sink_column():
    """gpt-oss's layout (grouped heads, one sink per query head, the sliding window of its even
    layers): attention_with_sink and add_sink_afterwards give the same result."""
    gen = torch.Generator().manual_seed(13)
    T, G, m, d = 7, 2, 3, 4  # 2 KV heads, 3 query heads each
    Q = torch.randn(T, G, m, d, generator=gen, dtype=F64)
    K, V = torch.randn(2, T, G, d, generator=gen, dtype=F64).unbind(0)
    S = 2 * torch.randn(G * m, generator=gen, dtype=F64)
    for window in (0, 3):
        expected = gpt_oss_layout_sdpa(Q, K, V, S, d**-0.5, window).view(T, G * m, d).transpose(0, 1)[None]
        q = Q.reshape(T, G * m, d).transpose(0, 1)[None]  # (1, h, T, d), head = g * m + j
        k = K.repeat_interleave(m, dim=1).transpose(0, 1)[None]
        v = V.repeat_interleave(m, dim=1).transpose(0, 1)[None]
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        attend = (j <= i) & ((j > i - window) if window else True)
        sb.assert_close(attention_with_sink(q, k, v, S, attend=attend), expected)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        scores = (q @ k.transpose(-2, -1) * d**-0.5).masked_fill(~attend, float("-inf"))
        sb.assert_close(add_sink_afterwards(out, torch.logsumexp(scores, -1), S), expected)


def test_a_row_without_keys_gets_zero_even_if_attention_returned_nan():
    """add_sink_afterwards' docstring: lse = -inf (no key in the row) gives 0, whatever the
    kernel returned for that row (NaN from a kernel that divides 0 by 0)."""
    from snippets.attention_sink import add_sink_afterwards

    out = torch.randn(1, 2, 3, 4)
    out[0, 1, 2] = float("nan")
    lse = torch.zeros(1, 2, 3)
    lse[0, 1, 2] = float("-inf")
    got = add_sink_afterwards(out, lse, torch.zeros(2))
    assert torch.equal(got[0, 1, 2], torch.zeros(4))
    assert torch.allclose(got[0, 0], out[0, 0] * 0.5)  # sigmoid(0 - 0) = 1/2


def test_pieces_merged_by_lse_take_the_sink_once_after_the_merge():
    """The page: a row computed in pieces (split-KV decoding, ring attention) and merged by
    the pieces' log-sum-exps gets the sink once, after the merge; correcting every piece
    counts exp(sink) once per piece."""
    torch.manual_seed(5)
    B, h, L, S, d = 1, 2, 3, 8, 4
    q, k, v = torch.randn(B, h, L, d), torch.randn(B, h, S, d), torch.randn(B, h, S, d)
    sink = torch.tensor([0.5, 2.0])

    def piece(keys):  # plain attention over some keys: (output, lse)
        s = (q * d ** -0.5) @ k[:, :, keys].transpose(-2, -1)
        return torch.softmax(s, dim=-1) @ v[:, :, keys], torch.logsumexp(s, dim=-1)

    (o1, l1), (o2, l2) = piece(slice(0, 5)), piece(slice(5, S))
    lse = torch.logaddexp(l1, l2)
    merged = o1 * (l1 - lse).exp().unsqueeze(-1) + o2 * (l2 - lse).exp().unsqueeze(-1)
    reference = attention_with_sink(q, k, v, sink)
    sb.assert_close(add_sink_afterwards(merged, lse, sink), reference)
    # The sink on every piece, then the same merge: exp(sink) counted twice.
    w1 = torch.logaddexp(l1, sink.view(-1, 1))
    w2 = torch.logaddexp(l2, sink.view(-1, 1))
    total = torch.logaddexp(torch.logaddexp(l1, l2), torch.log(torch.tensor(2.0)) + sink.view(-1, 1))
    twice = (add_sink_afterwards(o1, l1, sink) * (w1 - total).exp().unsqueeze(-1)
             + add_sink_afterwards(o2, l2, sink) * (w2 - total).exp().unsqueeze(-1))
    assert not torch.allclose(twice, reference, atol=1e-3)
