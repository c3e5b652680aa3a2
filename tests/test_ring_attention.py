"""snippets/ring_attention.py: a simulated ring of devices, merged by log-sum-exp, and the
Ulysses all-to-all both equal full attention (SDPA)."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.ring_attention as mod
from snippets.ring_attention import all_to_all, ring_attention, ulysses_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "ring of 1: equals full causal attention: True",
        "ring of 2: equals full causal attention: True",
        "ring of 4: equals full causal attention: True",
        "ring of 5: equals full causal attention: True",
        "Ulysses over 4 devices equals it too: True",
    ],
    "memory": [
        " 1 devices: at most 64 of 64 keys and values per device (100.0%)",
        " 2 devices: at most 64 of 64 keys and values per device (100.0%)",
        " 4 devices: at most 32 of 64 keys and values per device (50.0%)",
        " 8 devices: at most 16 of 64 keys and values per device (25.0%)",
        "16 devices: at most  8 of 64 keys and values per device (12.5%)",
    ],
}

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def qkv(seed, length, heads=4, d_k=8, d_v=6, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, heads, length, d_k, generator=gen).to(dtype),
            torch.randn(2, heads, length, d_k, generator=gen).to(dtype),
            torch.randn(2, heads, length, d_v, generator=gen).to(dtype))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length,devices", [(16, 4), (17, 4), (7, 7), (5, 2), (30, 3), (1, 1)])
def test_ring_equals_sdpa(causal, length, devices):
    """Uneven shards included, and shards of a single position."""
    q, k, v = qkv(0, length)
    ring, _ = ring_attention(q, k, v, devices=devices, causal=causal)
    sb.assert_close(ring, F.scaled_dot_product_attention(q, k, v, is_causal=causal))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(length=st.integers(1, 20), data=st.data(), causal=st.booleans(),
       seed=st.integers(0, 2**16))
def test_property_ring_equals_sdpa(length, data, causal, seed):
    devices = data.draw(st.integers(1, min(length, 9)))
    q, k, v = qkv(seed, length, heads=2)
    ring, _ = ring_attention(q, k, v, devices=devices, causal=causal)
    sb.assert_close(ring, F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def test_early_devices_see_fully_masked_shards_and_stay_finite():
    """With a causal mask, device 0's queries see nothing of any later shard: those partial
    results have lse = -inf and weight 0 (the guard of attend_part), never NaN."""
    q, k, v = qkv(1, 12)
    ring, _ = ring_attention(q, k, v, devices=6)
    assert ring.isfinite().all()
    sb.assert_close(ring, F.scaled_dot_product_attention(q, k, v, is_causal=True))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    """Called with half inputs directly: the output comes back in that dtype, as close to
    float64 attention as SDPA in that dtype, because the ring keeps its outputs and lses in
    float32 between merges."""
    q, k, v = qkv(2, 512, dtype=torch.float64)
    exact = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    q, k, v = (t.to(dtype) for t in (q, k, v))
    sdpa_error = (F.scaled_dot_product_attention(q, k, v, is_causal=True).double()
                  - exact).abs().max()
    ring, _ = ring_attention(q, k, v, devices=16)
    assert ring.dtype == dtype
    assert (ring.double() - exact).abs().max() <= 2 * sdpa_error


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length,devices", [(16, 4), (18, 4), (9, 2), (5, 1)])
def test_ulysses_equals_sdpa(causal, length, devices):
    q, k, v = qkv(3, length, heads=4)
    out = ulysses_attention(q, k, v, devices=devices, causal=causal)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def test_all_to_all_moves_each_piece_to_its_device_and_back():
    shards = [torch.arange(6).view(1, 6, 1) * 10 + r for r in range(3)]  # device r: (1, 6, 1)
    swapped = all_to_all(shards, split_dim=1, cat_dim=0)
    assert [t.shape for t in swapped] == [(3, 2, 1)] * 3
    assert swapped[1][:, :, 0].tolist() == [[20, 30], [21, 31], [22, 32]]
    back = all_to_all(swapped, split_dim=0, cat_dim=1)
    assert all(torch.equal(a, b) for a, b in zip(back, shards))


@pytest.mark.parametrize("length,devices,expected", [(64, 1, 64), (64, 2, 64), (64, 4, 32),
                                                     (64, 8, 16), (63, 4, 32), (10, 3, 7)])
def test_peak_keys_per_device_is_two_shards(length, devices, expected):
    """A device holds the shard it computes on and the one arriving: 2 T / N for N > 1."""
    q, k, v = qkv(4, length, heads=1)
    _, peak = ring_attention(q, k, v, devices=devices)
    assert peak == expected


def test_more_devices_than_positions_is_refused():
    q, k, v = qkv(6, 3)
    with pytest.raises(ValueError, match="devices"):
        ring_attention(q, k, v, devices=4)
    with pytest.raises(ValueError, match="devices"):
        ring_attention(q, k, v, devices=0)


def test_every_tensor_follows_the_inputs_device():
    q, k, v = qkv(5, 10)
    expected = ring_attention(q, k, v, devices=3)[0]
    with sb.stray_tensors_on_meta():
        got = ring_attention(q, k, v, devices=3)[0]
    sb.assert_same_device_and_values(got, expected)


def test_formula_counts_devices_and_shards_from_0_like_the_code():
    """The record's ring formula j = (r - s) mod N, with devices, shards and the merge's sum all
    counted from 0, is the snippet's send rule: at step s device r holds shard (r - s) mod N,
    its own at step 0, and meets every shard 0..N-1 once."""
    import yaml

    record = yaml.safe_load(open("termbase/data/terms/ring-attention.yml", encoding="utf-8"))
    ring, merged = record["formula"][0], record["formula"][1]
    assert ring.startswith(r"j = (r - s) \bmod N")
    assert merged.count(r"\sum_{j=0}^{N - 1}") == 2 and "j=1" not in merged
    for n in (1, 2, 5):
        held = list(range(n))  # device r starts with shard r
        seen = [set() for _ in range(n)]
        for s in range(n):
            for r in range(n):
                assert held[r] == (r - s) % n
                seen[r].add(held[r])
            held = [held[(r - 1) % n] for r in range(n)]  # the snippet's send
        assert all(got == set(range(n)) for got in seen)
    for lang in ("en", "es", "da"):  # the prose that restates the numbering
        page = open(f"docs/glossary/ring-attention.{lang}.md", encoding="utf-8").read()
        assert r"$r = 0, \ldots, N - 1$" in page and r"$r = 1, \ldots, N$" not in page


def test_the_figure_numbers_steps_as_the_formula_and_the_code_do():
    """The picture's step in each block is the s of j = (r - s) mod N, counted from 0."""
    from figures.merging import ring_schedule

    for devices in (1, 2, 4, 5):
        schedule = ring_schedule(devices)
        assert all(schedule[r][(r - s) % devices] == s for r in range(devices) for s in range(devices))
