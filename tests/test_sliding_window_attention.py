"""snippets/sliding_window_attention.py: masks, rolling buffer, reach."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.sliding_window_attention as mod
from snippets.sliding_window_attention import (
    RollingKVCache,
    decode_step,
    sliding_window_mask,
    sliding_window_mask_mod,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "window 3 over 6 tokens (1 = may attend):",
        "tensor([[1, 0, 0, 0, 0, 0],",
        "        [1, 1, 0, 0, 0, 0],",
        "        [1, 1, 1, 0, 0, 0],",
        "        [0, 1, 1, 1, 0, 0],",
        "        [0, 0, 1, 1, 1, 0],",
        "        [0, 0, 0, 1, 1, 1]], dtype=torch.int32)",
        "keys per query: [1, 2, 3, 3, 3, 3]",
        "mask_mod gives the same mask: True",
        "equals attention over each window alone: True",
        "Mistral's triu(diagonal=-3) mask is our window 4: True",
    ],
    "rolling_cache": [
        "buffer after 11 tokens (B, H_kv, window, d_k): (1, 2, 4, 8)",
        "position held by each slot: [8, 9, 10, 7]",
        "rolling-buffer decoding equals windowed attention: True",
    ],
    "receptive_field": [
        "window 4, positions reached back after 1..4 layers: [3, 6, 9, 12]",
        "k x (window - 1): [3, 6, 9, 12]",
        "Mistral 7B v0.1, 32 layers x 4096 = 131072 (paper: about 131K)",
        "counted with i - W < j <= i: 32 x 4095 = 131040",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def loop_mask(num_queries, num_keys, window):
    """The rule written out one entry at a time."""
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for i in range(num_queries):
        position = i + num_keys - num_queries
        for j in range(num_keys):
            mask[i, j] = position - window < j <= position
    return mask


@pytest.mark.parametrize("window", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("num_queries,num_keys", [(1, 1), (6, 6), (2, 7),
                                                  (1, 9), (7, 7)])
def test_mask_matches_the_rule_entry_by_entry(num_queries, num_keys, window):
    mask = sliding_window_mask(num_queries, num_keys, window=window)
    assert torch.equal(mask, loop_mask(num_queries, num_keys, window))
    full = sliding_window_mask(num_keys, window=window)
    assert torch.equal(mask, full[num_keys - num_queries :])  # last rows
    mask_mod = sliding_window_mask_mod(window)
    first = num_keys - num_queries
    for i in range(num_queries):
        for j in range(num_keys):  # plain ints, as a mask_mod may get
            assert bool(mask_mod(0, 0, i + first, j)) == bool(mask[i, j])
    # q_idx counted from 0 in the L queries: offset = S - L aligns them
    shifted = sliding_window_mask_mod(window, offset=first)
    q_idx, kv_idx = torch.arange(num_queries)[:, None], torch.arange(num_keys)
    assert torch.equal(shifted(0, 0, q_idx, kv_idx), mask)


def test_flex_attention_after_a_cache_needs_the_offset():
    """The review's case: L = 2 queries after a cache, S = 8, W = 3. The
    mask_mod without offset aligns to the upper left and gives another
    attention; with offset = S - L it equals SDPA with sliding_window_mask."""
    import warnings

    from torch.nn.attention.flex_attention import create_mask, flex_attention

    gen = torch.Generator().manual_seed(3)
    q = torch.randn(1, 1, 2, 4, generator=gen)
    k, v = torch.randn(2, 1, 1, 8, 4, generator=gen).unbind(0)
    ref = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(2, 8, window=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for offset, same in ((0, False), (6, True)):
            mask_mod = sliding_window_mask_mod(3, offset=offset)
            dense = create_mask(mask_mod, 1, 1, 2, 8, device="cpu")[0, 0]
            assert torch.equal(dense, sliding_window_mask(2, 8, window=3)) \
                == same
            block = create_block_mask_for(mask_mod, 2, 8)
            out = flex_attention(q, k, v, block_mask=block)
            assert torch.allclose(out, ref, atol=1e-6) == same


def create_block_mask_for(mask_mod, num_queries, num_keys):
    from torch.nn.attention.flex_attention import create_block_mask

    return create_block_mask(mask_mod, 1, 1, num_queries, num_keys,
                             device="cpu")


def test_mask_mod_under_vmap_like_flex_attention():
    # create_mask in torch.nn.attention.flex_attention vmaps the mask_mod
    # over (b, h, q_idx, kv_idx) like this: the function must not branch.
    fn = sliding_window_mask_mod(3)
    for dims in [(None, None, None, 0), (None, None, 0, None),
                 (None, 0, None, None), (0, None, None, None)]:
        fn = torch.vmap(fn, in_dims=dims)
    idx = torch.arange
    dense = fn(idx(2), idx(3), idx(7), idx(7))  # (B, H, L, S)
    assert dense.shape == (2, 3, 7, 7)
    assert torch.equal(dense, sliding_window_mask(7, window=3).expand(2, 3,
                                                                      7, 7))


def test_hugging_face_formula_is_the_same_convention():
    # transformers.masking_utils: kv_idx > q_idx - sliding_window, and
    # causal_mask_function: kv_idx <= q_idx.
    q, kv = torch.arange(9)[:, None], torch.arange(9)[None, :]
    for w in range(1, 10):
        hf = (kv > q - w) & (kv <= q)
        assert torch.equal(hf, sliding_window_mask(9, window=w))


def test_mistral_reference_mask_is_one_wider():
    # mistral-src one_file_ref.py: tril(diagonal=0) then triu(-W).
    for w in range(1, 8):
        ref = torch.ones(8, 8).tril(diagonal=0).triu(diagonal=-w).bool()
        assert torch.equal(ref, sliding_window_mask(8, window=w + 1))
        assert ref.sum(-1).max() == w + 1


def test_edge_windows_and_validation():
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    assert torch.equal(sliding_window_mask(5, window=5), causal)
    assert torch.equal(sliding_window_mask(5, window=50), causal)
    assert torch.equal(sliding_window_mask(5, window=1),
                       torch.eye(5, dtype=torch.bool))
    for bad in [lambda: sliding_window_mask(3, window=0),
                lambda: sliding_window_mask(4, 3, window=2),
                lambda: sliding_window_mask_mod(0),
                lambda: RollingKVCache(1, 1, 0, 2)]:
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError):
        sliding_window_mask(3, 3, 2)  # window is keyword-only


@PROPERTY_SETTINGS
@given(
    length=st.integers(1, 9),
    window=st.integers(1, 10),
    d_k=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_property_masked_sdpa_equals_attention_per_window(length, window,
                                                          d_k, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 2, length, d_k, generator=gen,
                          dtype=F64).unbind(0)
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(length, window=window)
    )
    for i in range(length):
        lo = max(0, i - window + 1)
        scores = q[:, i : i + 1] @ k[:, lo : i + 1].transpose(-2, -1)
        weights = (scores / d_k**0.5).softmax(-1)  # (2, 1, keys in window)
        sb.assert_close(out[:, i : i + 1], weights @ v[:, lo : i + 1])


def rolling_decode(q, k, v, window):
    b, h_kv, steps, d_k = k.shape
    cache = RollingKVCache(b, h_kv, window, d_k, dtype=k.dtype)
    outs = []
    for t in range(steps):
        outs.append(decode_step(q[..., t : t + 1, :], k[..., t : t + 1, :],
                                v[..., t : t + 1, :], cache))
        assert cache.k.shape == (b, h_kv, window, d_k)  # never grows
        held = cache.pos[cache.pos >= 0].sort().values
        assert held.tolist() == list(range(max(0, t + 1 - window), t + 1))
    return torch.cat(outs, dim=-2), cache


@PROPERTY_SETTINGS
@given(
    window=st.integers(1, 5),
    wraps=st.integers(0, 4),
    extra=st.integers(0, 4),
    kv_heads=st.integers(1, 2),
    group=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_property_rolling_buffer_equals_windowed_attention(
    window, wraps, extra, kv_heads, group, seed
):
    steps = window * wraps + extra + 1  # up to several wraps of the buffer
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, kv_heads * group, steps, 3, generator=gen, dtype=F64)
    k, v = torch.randn(2, 2, kv_heads, steps, 3, generator=gen,
                       dtype=F64).unbind(0)
    full = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(steps, window=window),
        enable_gqa=True,
    )
    decoded, cache = rolling_decode(q, k, v, window)
    sb.assert_close(decoded, full)
    for i in range(max(0, steps - window), steps):
        assert cache.pos[i % window] == i  # position i lives in slot i % w


def test_a_buffer_one_slot_short_is_wrong():
    gen = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 1, 1, 9, 4, generator=gen, dtype=F64).unbind(0)
    full = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(9, window=4)
    )
    short, _ = rolling_decode(q, k, v, 3)
    assert torch.allclose(short[..., :3, :], full[..., :3, :])  # not full
    assert not torch.allclose(short[..., 3:, :], full[..., 3:, :])


def test_rolling_cache_takes_one_token_at_a_time():
    cache = RollingKVCache(1, 1, 3, 2)
    with pytest.raises(ValueError):
        cache.append(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))


@pytest.mark.parametrize("window", [2, 3, 4])
def test_reach_of_stacked_layers_is_k_times_window_minus_one(window):
    length = 14
    one = sliding_window_mask(length, window=window).long()
    reach = one
    for layers in range(1, 5):
        for i in range(length):  # row i reaches back to i - k (w - 1)
            first = int(reach[i].nonzero().min())
            assert first == max(0, i - layers * (window - 1))
        reach = (reach @ one).clamp(max=1)


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_gradients_through_stacked_layers_show_the_same_reach(layers):
    torch.manual_seed(2)
    length, window, d = 12, 3, 4
    mask = sliding_window_mask(length, window=window)
    weights = [torch.randn(3, d, d, dtype=F64) for _ in range(layers)]
    x = torch.randn(1, length, d, dtype=F64, requires_grad=True)
    h = x
    for w in weights:  # a residual stream, like a real decoder
        q, k, v = h @ w[0], h @ w[1], h @ w[2]
        h = h + F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    h[0, -1].sum().backward()
    reached = x.grad[0].abs().sum(-1) > 0
    first = length - 1 - layers * (window - 1)
    assert reached.tolist() == [i >= first for i in range(length)]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_rolling_buffer(dtype):
    gen = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(3, 1, 2, 10, 8, generator=gen).unbind(0)
    full = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(10, window=3)
    )
    low, _ = rolling_decode(q.to(dtype), k.to(dtype), v.to(dtype), 3)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), full, dtype=dtype)


def test_the_rolling_cache_follows_its_device():
    gen = torch.Generator().manual_seed(51)
    q = torch.randn(1, 4, 7, 8, generator=gen)
    k, v = torch.randn(2, 1, 2, 7, 8, generator=gen).unbind(0)
    outs = []
    for stray in (False, True):
        with sb.stray_tensors_on_meta() if stray else torch.device("cpu"):
            cache = RollingKVCache(1, 2, 3, 8, device="cpu")
            outs.append(torch.cat([
                decode_step(q[..., t:t + 1, :], k[..., t:t + 1, :],
                            v[..., t:t + 1, :], cache)
                for t in range(7)], dim=-2))
    sb.assert_same_device_and_values(outs[1], outs[0])
    assert RollingKVCache(1, 1, 2, 1, device="meta").pos.device.type == "meta"
