"""snippets/hybrid_attention.py: Qwen3-Next's default layer_types, a tiny hybrid stack whose
full-attention caches grow by one key and value per token while the delta-rule states keep their
size, decoding with the caches equal to one pass without them, and the cache count per token."""

import pytest
import torch
import torch.nn.functional as F

import snippets.hybrid_attention as mod
from snippets.delta_rule import delta_rule_recurrent
from snippets.hybrid_attention import (DeltaRuleLayer, FullAttention, HybridStack, cache_bytes,
                                       cache_numbers, layer_types_from_interval)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "layer_types: L L L F L L L F",
        "cached after 6 tokens:  [128, 128, 128, 192, 128, 128, 128, 192]",
        "cached after 10 tokens: [128, 128, 128, 320, 128, 128, 128, 320]",
        "prompt + 4 decoding steps = one pass over 10 tokens: True",
    ],
    "cost": [
        "dense : 96 KiB per token, 0.00 MiB fixed",
        "hybrid: 24 KiB per token, 74.25 MiB fixed",
        "the hybrid holds less from 1057 tokens on; at 262144 tokens: 6.07 GiB against 24.00",
    ],
}
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "hybrid_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def test_layer_types_follow_qwen3_next_defaults():
    """Qwen3NextConfig (transformers, configuration_qwen3_next.py at commit 249ef81) makes layer i
    linear_attention when (i + 1) % full_attention_interval is non-zero, full_attention otherwise;
    48 layers with interval 4 give 12 full-attention layers, at 3, 7, ..., 47."""
    types = layer_types_from_interval(48, 4)
    assert types == (["linear_attention"] * 3 + ["full_attention"]) * 12
    assert [i for i, t in enumerate(types) if t == "full_attention"] == list(range(3, 48, 4))
    assert layer_types_from_interval(5, 1) == ["full_attention"] * 5
    assert layer_types_from_interval(3, 4) == ["linear_attention"] * 3


@pytest.mark.parametrize("interval", [1, 2, 3])
@pytest.mark.parametrize("chunks", [[7], [3, 1, 1, 2], [1] * 7, [4, 3]])
def test_cache_growth_and_decoding_equals_one_pass(interval, chunks):
    torch.manual_seed(interval)
    types = layer_types_from_interval(6, interval)
    stack = HybridStack(12, 3, types).to(F64)
    x = torch.randn(2, sum(chunks), 12, dtype=F64)
    caches, outs, seen = [{} for _ in types], [], 0
    with torch.no_grad():
        for n in chunks:
            outs.append(stack(x[:, seen:seen + n], caches))
            seen += n
            for kind, cache in zip(types, caches):
                if kind == "full_attention":
                    assert set(cache) == {"k", "v"}
                    assert cache["k"].shape == cache["v"].shape == (2, 3, seen, 4)
                else:
                    assert set(cache) == {"state"} and cache["state"].shape == (2, 3, 4, 4)
        whole = stack(x, [{} for _ in types])
    sb.assert_close(torch.cat(outs, dim=1), whole)


def test_full_attention_layer_equals_causal_sdpa():
    torch.manual_seed(1)
    layer = FullAttention(12, 3).to(F64)
    x = torch.randn(2, 5, 12, dtype=F64)
    q, k, v = layer.qkv(x).view(2, 5, 3, 3, 4).permute(2, 0, 3, 1, 4)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    sb.assert_close(layer(x, {}), layer.out(expected.transpose(1, 2).reshape(2, 5, 12)))


def test_delta_rule_layer_equals_the_delta_rule_entry():
    """The layer's loop is the delta rule of snippets/delta_rule.py with no decay."""
    torch.manual_seed(2)
    layer = DeltaRuleLayer(12, 3).to(F64)
    x = torch.randn(2, 6, 12, dtype=F64)
    qkv, b = layer.proj(x).split([36, 3], dim=-1)
    q, k, v = qkv.view(2, 6, 3, 3, 4).permute(2, 0, 3, 1, 4)
    beta = b.sigmoid().transpose(1, 2)
    o, S = delta_rule_recurrent(q, F.normalize(k, dim=-1), v, beta, torch.zeros(2, 3, 6, 1, dtype=F64))
    cache = {}
    sb.assert_close(layer(x, cache), layer.out(o.transpose(1, 2).reshape(2, 6, 12)))
    sb.assert_close(cache["state"], S)


def test_cache_numbers_counts_what_the_stack_caches():
    torch.manual_seed(3)
    types = layer_types_from_interval(8, 4)
    stack = HybridStack(16, 2, types)
    caches = [{} for _ in types]
    with torch.no_grad():
        stack(torch.randn(1, 9, 16), caches)
    held = sum(t.numel() for c in caches for t in c.values())
    assert held == cache_numbers(types, 9, kv_heads=2, head_dim=8, state_numbers=2 * 8 * 8)


def test_qwen3_next_counts():
    """The cost demo's figures, from the formula by hand: 2 * 2 * 256 numbers per token in each of
    12 full-attention layers, 32 * 128 * 128 + 8192 * 4 numbers in each of 36 Gated DeltaNet layers."""
    hybrid = layer_types_from_interval(48, 4)
    shape = dict(kv_heads=2, head_dim=256, state_numbers=32 * 128 * 128 + 8192 * 4)
    assert cache_numbers(hybrid, 1, **shape) - cache_numbers(hybrid, 0, **shape) == 12 * 1024
    assert cache_numbers(["full_attention"] * 48, 1, **shape) == 48 * 1024
    fixed = 36 * (32 * 128 * 128 + 8192 * 4)
    assert cache_numbers(hybrid, 0, **shape) == fixed
    first = -(-fixed // (36 * 1024)) + (fixed % (36 * 1024) == 0)  # smallest T with 36 * 1024 T > fixed
    assert first == 545  # counted in numbers
    dense = ["full_attention"] * 48  # the lines cross at 544: equal there, the hybrid smaller after
    assert fixed == 544 * 36 * 1024
    assert cache_numbers(hybrid, 544, **shape) == cache_numbers(dense, 544, **shape)
    assert cache_numbers(hybrid, 545, **shape) < cache_numbers(dense, 545, **shape)


def test_qwen3_next_bytes_with_a_float32_recurrent_state():
    """Counted in bytes as Transformers stores them (modeling_qwen3_next.py @7515843: the recurrent
    state is created .to(value) after value is cast to float32; the convolution state, keys and
    values stay bfloat16): 36 * (32 * 128 * 128 * 4 + 8192 * 4 * 2) bytes of fixed state, 74.25 MiB,
    and the hybrid holds fewer bytes from T = 1057 on, not from the 545 of a 2-byte state."""
    hybrid, dense = layer_types_from_interval(48, 4), ["full_attention"] * 48
    shape = dict(kv_heads=2, head_dim=256, state_bytes=32 * 128 * 128 * 4 + 8192 * 4 * 2)
    fixed = 36 * (32 * 128 * 128 * 4 + 8192 * 4 * 2)
    assert cache_bytes(hybrid, 0, **shape) == fixed == 74.25 * 2**20
    assert cache_bytes(hybrid, 1, **shape) - fixed == 12 * 1024 * 2
    assert cache_bytes(dense, 1, **shape) == 48 * 1024 * 2
    # 12 * 2048 T + fixed < 48 * 2048 T  <=>  T > fixed / (36 * 2048) = 1056 exactly
    assert fixed == 1056 * 36 * 2048
    assert cache_bytes(hybrid, 1056, **shape) == cache_bytes(dense, 1056, **shape)
    assert cache_bytes(hybrid, 1057, **shape) < cache_bytes(dense, 1057, **shape)
    assert round(cache_bytes(hybrid, 262144, **shape) / 2**30, 2) == 6.07


def test_a_kv_cache_cuts_back_to_a_prefix_and_a_recurrent_state_does_not():
    """The page: keys and values cached for 10 tokens, cut to the first 6, are the cache of those
    6 tokens, so a shared prefix or a rejected draft costs nothing to undo; the recurrent state
    after 10 tokens has no such cut, and only a copy taken after token 6 gives that state back."""
    torch.manual_seed(3)
    x = torch.randn(1, 10, 16)
    full, delta = FullAttention(16, 2), DeltaRuleLayer(16, 2)
    with torch.no_grad():
        long_f, long_d, short_f, short_d = {}, {}, {}, {}
        full(x[:, :6], short_f), delta(x[:, :6], short_d)
        full(x[:, :6], long_f), delta(x[:, :6], long_d)
        snapshot = long_d["state"].clone()  # a copy taken at position 6
        full(x[:, 6:], long_f), delta(x[:, 6:], long_d)
    for name in ("k", "v"):
        sb.assert_close(long_f[name][:, :, :6], short_f[name])
    assert long_d["state"].shape == short_d["state"].shape
    assert not torch.allclose(long_d["state"], short_d["state"], atol=1e-4)
    sb.assert_close(snapshot, short_d["state"])


def test_every_tensor_follows_the_input_device():
    """Under stray_tensors_on_meta a tensor made without `device=` lands on 'meta': the stack
    (a full-attention layer's mask, a recurrent state) must make its tensors on x's device."""
    torch.manual_seed(4)
    types = layer_types_from_interval(4, 2)
    stack = HybridStack(12, 3, types).to(F64)  # built outside: its parameters stay on the CPU
    x = torch.randn(2, 5, 12, dtype=F64)
    with torch.no_grad():
        expected = stack(x[:, :3], [{} for _ in types])
        caches = [{} for _ in types]
        with sb.stray_tensors_on_meta():
            first = stack(x[:, :3], caches)
            second = stack(x[:, 3:], caches)  # a mask over cached keys too
    sb.assert_same_device_and_values(first, expected)
    assert second.device == x.device
