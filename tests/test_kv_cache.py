"""snippets/kv_cache.py: cached decoding equals one causal pass, memory."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right

import snippets.kv_cache as mod
from snippets.kv_cache import (
    CachedCausalSelfAttention,
    KVCache,
    causal_mask_at,
    format_bytes,
    kv_bytes_per_token,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "cached keys (B, H_kv, T, d_k): (1, 2, 10, 8)",
        "prefill + 4 decode steps equal one causal pass: True",
        "mask for 3 new tokens after 5 cached (1 = may attend):",
        "tensor([[1, 1, 1, 1, 1, 1, 0, 0],",
        "        [1, 1, 1, 1, 1, 1, 1, 0],",
        "        [1, 1, 1, 1, 1, 1, 1, 1]], dtype=torch.int32)",
        "equals causal_lower_right: True",
        "is_causal=True (upper-left) gives the same: False",
    ],
    "memory": [
        "MHA   (H_kv = 64): 2.50 MiB per token, 10 GiB per 4096 tokens",
        "GQA-8 (H_kv =  8): 320 KiB per token, 1.25 GiB per 4096 tokens",
        "MQA   (H_kv =  1): 40 KiB per token, 160 MiB per 4096 tokens",
        "bytes held by the caches: 960",
        "formula matches: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def layer_and_input(seed, batch, heads, kv_heads, d_k, length, dtype=F64):
    torch.manual_seed(seed)
    attn = CachedCausalSelfAttention(heads * d_k, heads, kv_heads).to(dtype)
    x = torch.randn(batch, length, heads * d_k, dtype=dtype)
    return attn, x


def run_in_chunks(attn, x, sizes):
    cache, outs, start = KVCache(), [], 0
    for size in sizes:
        outs.append(attn(x[:, start : start + size], cache, offset=start))
        start += size
    assert start == x.size(1) == len(cache)
    return torch.cat(outs, dim=1), cache


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    kv_heads=st.integers(1, 3),
    group=st.integers(1, 3),
    d_k=st.integers(1, 4),
    length=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_property_token_by_token_equals_full_causal_attention(
    batch, kv_heads, group, d_k, length, seed
):
    attn, x = layer_and_input(seed, batch, kv_heads * group, kv_heads, d_k,
                              length)
    decoded, cache = run_in_chunks(attn, x, [1] * length)
    sb.assert_close(decoded, attn(x))
    assert cache.k.shape == (batch, kv_heads, length, d_k)  # only H_kv heads


@pytest.mark.parametrize(
    "sizes", [[12], [1] * 12, [2] * 6, [3] * 4, [5, 5, 2], [7, 1, 1, 3],
              [1, 11], [4, 8]]
)
def test_chunked_prefill_equals_one_pass(sizes):
    attn, x = layer_and_input(1, 2, 4, 2, 3, 12)
    chunked, _ = run_in_chunks(attn, x, sizes)
    sb.assert_close(chunked, attn(x))


@PROPERTY_SETTINGS
@given(
    cuts=st.lists(st.integers(1, 5), min_size=1, max_size=6),
    kv_heads=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**16),
)
def test_property_any_chunking_equals_one_pass(cuts, kv_heads, seed):
    attn, x = layer_and_input(seed, 1, 4, kv_heads, 2, sum(cuts))
    chunked, _ = run_in_chunks(attn, x, cuts)
    sb.assert_close(chunked, attn(x))


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_one_pass_is_causal_sdpa_with_repeated_kv_heads(kv_heads):
    attn, x = layer_and_input(2, 2, 4, kv_heads, 3, 6)
    b, t, _ = x.shape
    q = attn.w_q(x).view(b, t, 4, 3).transpose(1, 2)
    k = attn.w_k(x).view(b, t, kv_heads, 3).transpose(1, 2)
    v = attn.w_v(x).view(b, t, kv_heads, 3).transpose(1, 2)
    k = k.repeat_interleave(4 // kv_heads, dim=1)  # query heads share KV
    v = v.repeat_interleave(4 // kv_heads, dim=1)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    expected = attn.w_o(heads.transpose(1, 2).reshape(b, t, 12))
    sb.assert_close(attn(x), expected)


@pytest.mark.parametrize("offset,new", [(0, 1), (0, 4), (3, 1), (5, 3),
                                        (2, 6)])
def test_mask_at_offset_is_lower_right(offset, new):
    keys = offset + new
    mask = causal_mask_at(new, keys, offset=offset)
    full = torch.ones(keys, keys, dtype=torch.bool).tril()
    assert torch.equal(mask, full[offset:])  # the last rows of the S x S
    q = torch.randn(1, 2, new, 4, dtype=F64)
    k, v = torch.randn(2, 1, 2, keys, 4, dtype=F64).unbind(0)
    sb.assert_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        F.scaled_dot_product_attention(
            q, k, v, attn_mask=causal_lower_right(new, keys)
        ),
    )


def test_upper_left_is_wrong_after_a_cache():
    q = torch.randn(1, 1, 2, 4, dtype=F64)
    k, v = torch.randn(2, 1, 1, 5, 4, dtype=F64).unbind(0)
    lower = F.scaled_dot_product_attention(
        q, k, v, attn_mask=causal_mask_at(2, 5, offset=3)
    )
    upper = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert not torch.allclose(lower, upper)


def test_future_tokens_do_not_change_the_past():
    attn, x = layer_and_input(3, 1, 2, 1, 2, 7)
    y = x.clone()
    y[:, 4:] = torch.randn(1, 3, 4, dtype=F64)
    sb.assert_close(attn(x)[:, :4], attn(y)[:, :4])


def test_arguments_are_validated():
    attn, x = layer_and_input(4, 1, 2, 2, 2, 3)
    cache = KVCache()
    attn(x[:, :2], cache, offset=0)
    with pytest.raises(ValueError, match="offset"):
        attn(x[:, 2:], cache, offset=3)  # 2 tokens are cached, not 3
    with pytest.raises(ValueError, match="offset"):
        attn(x, offset=1)  # no cache: nothing before position 0
    with pytest.raises(TypeError):
        attn(x, None, 0)  # offset is keyword-only
    with pytest.raises(TypeError):
        causal_mask_at(2, 5, 3)  # here too
    with pytest.raises(ValueError):
        KVCache().append(torch.zeros(1, 1, 2, 3), torch.zeros(1, 1, 2, 4))
    with pytest.raises(ValueError):
        CachedCausalSelfAttention(8, 4, 3)


def test_llama_2_70b_numbers():
    gqa = kv_bytes_per_token(80, 8, 128, 2)
    mha = kv_bytes_per_token(80, 64, 128, 2)
    assert gqa == 320 * 1024 and mha == 2.5 * 1024**2 and mha == 8 * gqa
    assert kv_bytes_per_token(80, 1, 128, 2) == 40 * 1024
    assert format_bytes(gqa) == "320 KiB" and format_bytes(mha) == "2.50 MiB"
    assert format_bytes(gqa * 4096) == "1.25 GiB"
    assert format_bytes(mha * 4096) == "10 GiB"
    assert format_bytes(512) == "512 B" and format_bytes(1536) == "1.50 KiB"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16,
                                   torch.bfloat16])
@pytest.mark.parametrize("layers,kv_heads,d_k,tokens", [(1, 1, 4, 3),
                                                        (3, 2, 8, 5)])
def test_formula_counts_the_bytes_caches_hold(dtype, layers, kv_heads, d_k,
                                              tokens):
    torch.manual_seed(5)
    stack = [CachedCausalSelfAttention(2 * kv_heads * d_k, 2 * kv_heads,
                                       kv_heads).to(dtype)
             for _ in range(layers)]
    caches = [KVCache() for _ in stack]
    h = torch.randn(2, tokens, 2 * kv_heads * d_k, dtype=dtype)
    with torch.no_grad():
        for layer, cache in zip(stack, caches):
            h = h + layer(h, cache)
    held = sum(t.nelement() * t.element_size()
               for c in caches for t in (c.k, c.v))
    size = torch.finfo(dtype).bits // 8
    per_token = kv_bytes_per_token(layers, kv_heads, d_k, size)
    assert held == 2 * tokens * per_token  # batch of 2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_decoding_is_close_to_float32(dtype):
    attn, x = layer_and_input(6, 2, 4, 2, 8, 9, dtype=torch.float32)
    with torch.no_grad():
        reference = attn(x)
        low, _ = run_in_chunks(attn.to(dtype), x.to(dtype), [4, 1, 1, 3])
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), reference, dtype=dtype)
