"""snippets/prefix_caching.py: the hash chain (equal hashes only for equal prefixes,
full blocks only) and prefill on cached blocks against recomputing the whole prompt,
then decoding on top of it; the model's attention against an explicit softmax."""

import hashlib
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.prefix_caching as mod
from snippets.prefix_caching import PrefixCache, TinyDecoder, block_hashes
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "request A: 0 of 14 tokens reused",
        "request B: 8 of 13 tokens reused",
        "decoding on the reused prefix equals recomputing: True",
        "block (3, 4) after another prefix, same hash: False",
        "full blocks hashed, of 6 and 7 tokens: 3 3",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)

tokens_st = st.lists(st.integers(0, 5), min_size=0, max_size=14)


@PROPERTY_SETTINGS
@given(a=tokens_st, b=tokens_st, size=st.integers(1, 4))
def test_property_equal_hashes_exactly_for_equal_prefixes(a, b, size):
    ha, hb = block_hashes(a, size), block_hashes(b, size)
    assert len(ha) == len(a) // size  # full blocks only
    for j in range(min(len(ha), len(hb))):
        same_prefix = a[:(j + 1) * size] == b[:(j + 1) * size]
        assert (ha[j] == hb[j]) == same_prefix


def test_a_salt_isolates_equal_prompts():
    tokens = [1, 2, 3, 4]
    assert block_hashes(tokens, 2, b"x") != block_hashes(tokens, 2, b"y")
    assert block_hashes(tokens, 2, b"x") == block_hashes(tokens, 2, b"x")
    assert block_hashes(tokens, 2, b"x") != block_hashes(tokens, 2)


def test_the_chain_is_the_formula_seed_first_salt_in_the_first_block():
    """h_0 is a fixed seed (not the salt), and the salt is one of the first
    block's extra keys e_1, as vLLM does (page: Formula)."""
    def h(parent, block, extra):
        return hashlib.sha256(parent + repr((block, extra)).encode()).digest()

    h1 = h(mod.SEED, (1, 2), b"x")
    h2 = h(h1, (3, 4), b"")
    assert block_hashes([1, 2, 3, 4, 5], 2, b"x") == [h1, h2]
    assert mod.SEED != b"" and len(mod.SEED) == 32


def model64(seed):
    torch.manual_seed(seed)
    return TinyDecoder(vocab=6, d_model=8, heads=2, layers=3).double()


@PROPERTY_SETTINGS
@given(shared=st.lists(st.integers(0, 5), max_size=10),
       first=st.lists(st.integers(0, 5), min_size=1, max_size=5),
       second=st.lists(st.integers(0, 5), min_size=1, max_size=5),
       size=st.integers(1, 4), seed=st.integers(0, 2**10))
def test_property_prefill_on_cached_blocks_equals_recomputing(
        shared, first, second, size, seed):
    model, cache = model64(seed), PrefixCache(size)
    with torch.no_grad():
        cache.prefill(model, shared + first)
        tokens = shared + second
        hidden, present, reused = cache.prefill(model, tokens)
        full, full_kv = model(torch.tensor(tokens))
    common = 0  # the longest common prefix of the two prompts
    for x, y in zip(shared + first, tokens):
        if x != y:
            break
        common += 1
    expected = (common // size) * size
    if expected == len(tokens):
        expected -= size  # a fully cached prompt still computes a block
    assert reused == expected
    sb.assert_close(hidden, full[reused:])
    for (k, v), (k_full, v_full) in zip(present, full_kv):
        sb.assert_close(k, k_full)
        sb.assert_close(v, v_full)


def test_decoding_after_a_cache_hit_equals_recomputing():
    model, cache = model64(3), PrefixCache(2)
    prompt = [1, 2, 3, 4, 5, 0, 1]
    with torch.no_grad():
        cache.prefill(model, prompt)
        tokens = prompt[:6] + [3]
        hidden, past, reused = cache.prefill(model, tokens)
        assert reused == 6
        for step in range(4):
            nxt = step % 6
            tokens.append(nxt)
            hidden, past = model(torch.tensor([nxt]), past)
            full, _ = model(torch.tensor(tokens))
            sb.assert_close(hidden[-1], full[-1])


def test_only_the_computed_blocks_are_new_entries():
    model, cache = model64(0), PrefixCache(3)
    with torch.no_grad():
        cache.prefill(model, [1, 2, 3, 4, 5, 0, 1])  # 2 full blocks
        assert len(cache.blocks) == 2
        cache.prefill(model, [1, 2, 3, 4, 5, 0, 2, 2, 2])
    assert len(cache.blocks) == 3  # the shared blocks are stored once


def test_attention_of_the_model_matches_an_explicit_softmax():
    model = model64(5)
    tokens = torch.tensor([1, 4, 2, 2, 0])
    with torch.no_grad():
        x = model.embed(tokens)
        for proj in model.qkv:
            q, k, v = proj(x).unflatten(-1, (3, 2, -1)).permute(1, 2, 0, 3)
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
            future = torch.ones(5, 5, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(-1)
            x = x + (weights @ v).transpose(0, 1).flatten(1)
        hidden, _ = model(tokens)
    sb.assert_close(hidden, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_reuse_agrees_up_to_rounding(dtype):
    """Reusing stored K/V is a copy: in half precision too, the prefill on
    cached blocks equals the full prefill's last rows to its tolerance."""
    torch.manual_seed(1)
    model, cache = TinyDecoder(vocab=6, d_model=8).to(dtype), PrefixCache(2)
    with torch.no_grad():
        cache.prefill(model, [1, 2, 3, 4, 5])
        hidden, _, reused = cache.prefill(model, [1, 2, 3, 4, 0])
        full, _ = model(torch.tensor([1, 2, 3, 4, 0]))
    assert reused == 4 and hidden.dtype == dtype
    sb.assert_close(hidden, full[4:], dtype=dtype)
