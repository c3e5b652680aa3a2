"""snippets/cross_attention_cache.py: cached encoder keys/values equal recomputing them."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.cross_attention_cache as mod
from snippets.cross_attention import CrossAttention
from snippets.cross_attention_cache import CrossAttentionCache
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "steps: 6 key projections: 7 (1 cached + 6 recomputed)",
        "cached equals recomputed: True",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=15, deadline=None, derandomize=True)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 3),
    source=st.integers(1, 6),
    heads=st.sampled_from([1, 2, 4]),
    memory_dim=st.integers(1, 7),
    steps=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_property_cached_equals_recomputed(batch, source, heads, memory_dim, steps, seed):
    torch.manual_seed(seed)
    d_model = 2 * heads
    attn = CrossAttention(d_model, heads, kdim=memory_dim, vdim=memory_dim).double()
    memory = torch.randn(batch, source, memory_dim, dtype=torch.float64)
    lengths = torch.randint(1, source + 1, (batch,))
    padding = torch.arange(source)[None, :] >= lengths[:, None]
    cache = CrossAttentionCache(attn, memory, memory_padding=padding)
    x = torch.randn(batch, 1, d_model, dtype=torch.float64)
    for _ in range(steps):
        cached = cache(x)
        sb.assert_close(cached, attn(x, memory, memory, key_padding_mask=padding))
        x = x + cached


def test_projects_memory_once():
    torch.manual_seed(1)
    attn = CrossAttention(8, 2)
    calls = []
    attn.w_k.register_forward_hook(lambda *_: calls.append("k"))
    attn.w_v.register_forward_hook(lambda *_: calls.append("v"))
    cache = CrossAttentionCache(attn, torch.randn(1, 5, 8))
    for _ in range(4):
        cache(torch.randn(1, 1, 8))
    assert calls == ["k", "v"]


def test_gradcheck_float64():
    torch.manual_seed(2)
    attn = CrossAttention(4, 2, kdim=3, vdim=3).double()
    memory = torch.randn(1, 3, 3, dtype=torch.float64, requires_grad=True)
    x = torch.randn(1, 1, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, m: CrossAttentionCache(attn, m)(x), (x, memory))


def test_memory_padding_is_keyword_only():
    attn = CrossAttention(4, 2)
    memory = torch.randn(1, 3, 4)
    padding = torch.tensor([[False, False, True]])
    with pytest.raises(TypeError):
        CrossAttentionCache(attn, memory, padding)
    cache = CrossAttentionCache(attn, memory, memory_padding=padding)
    x = torch.randn(1, 1, 4)
    sb.assert_close(cache(x), attn(x, memory, memory, key_padding_mask=padding))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_match_recomputing_in_float32(dtype):
    # W_q = W_k = 40 I, +-1 vectors: q.k = 40 * 40 * 64 = 102400 > 65504 for the matching source
    # token, 12800 once scaled. The old q @ k^T would be inf in float16.
    gen = torch.Generator().manual_seed(7)
    attn = CrossAttention(128, 2)
    with torch.no_grad():
        for linear in (attn.w_q, attn.w_k):
            linear.weight.copy_(40 * torch.eye(128))
            linear.bias.zero_()
    memory = (torch.randint(0, 2, (2, 5, 128), generator=gen) * 2 - 1).float()
    # float32, no overflow: the layer run in full (the keys and values recomputed), not the cache
    reference = attn(memory[:, 2:3], memory, memory)
    attn = attn.to(dtype)
    cached = CrossAttentionCache(attn, memory.to(dtype))(memory[:, 2:3].to(dtype))
    assert cached.isfinite().all()
    sb.assert_close(cached.float(), reference, dtype=dtype)
