"""snippets/cross_layer_kv_sharing.py: a consumer layer against attention recomputed
with its producer's weights on the producer's input, cached decoding against
recomputing, and the cache size against the layers that produce K/V."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.cross_layer_kv_sharing as mod
from snippets.cross_layer_kv_sharing import SharedKVDecoder, kv_bytes_per_token
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "no sharing   cached layers [0, 1, 2, 3, 4, 5], decoding equals recomputing: True",
        "CLA, pairs   cached layers [0, 2, 4], decoding equals recomputing: True",
        "last 2 reuse cached layers [0, 1, 2, 3], decoding equals recomputing: True",
        "Gemma 3n E4B, bfloat16 bytes per token: 40960 instead of 71680",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@st.composite
def layouts(draw):
    n = draw(st.integers(1, 5))
    source = []
    for i in range(n):
        producers = [j for j in range(i) if source[j] == j]
        source.append(draw(st.sampled_from(producers + [i])))
    return source


def explicit(model, tokens):
    """Each layer recomputed by hand: queries from its own input, keys and
    values from its producer's weights applied to the producer's input."""
    x, inputs = model.embed(tokens), {}
    for i, source in enumerate(model.kv_source):
        inputs[i] = x
        k, v = model.wkv[str(source)](inputs[source]).chunk(2, dim=-1)
        q, k, v = (model.split(t) for t in (model.wq[i](x), k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        future = torch.ones(len(tokens), len(tokens), dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(-1)
        x = x + (weights @ v).transpose(0, 1).flatten(1)
    return x


@PROPERTY_SETTINGS
@given(source=layouts(), length=st.integers(1, 7), seed=st.integers(0, 999))
def test_property_shared_kv_equals_recomputing_with_the_producers_weights(
        source, length, seed):
    torch.manual_seed(seed)
    model = SharedKVDecoder(source, vocab=8, d_model=8).double()
    tokens = torch.randint(0, 8, (length,))
    with torch.no_grad():
        hidden, cache = model(tokens)
        sb.assert_close(hidden, explicit(model, tokens))
    assert sorted(cache) == [i for i, s in enumerate(source) if s == i]


@PROPERTY_SETTINGS
@given(source=layouts(), prompt=st.integers(1, 5), steps=st.integers(1, 3),
       seed=st.integers(0, 999))
def test_property_cached_decoding_equals_recomputing(source, prompt, steps,
                                                     seed):
    torch.manual_seed(seed)
    model = SharedKVDecoder(source, vocab=8, d_model=8).double()
    tokens = torch.randint(0, 8, (prompt + steps,))
    with torch.no_grad():
        full, _ = model(tokens)
        out, cache = model(tokens[:prompt])
        for t in range(prompt, prompt + steps):
            step, cache = model(tokens[t:t + 1], cache)
            out = torch.cat([out, step])
    sb.assert_close(out, full)
    for k, v in cache.values():  # (H, S, d_h): every token, once per producer
        assert k.shape[1] == v.shape[1] == prompt + steps


def test_cache_bytes_count_only_producers():
    assert kv_bytes_per_token([0, 1, 2, 3], 8, 128, 2) == 2 * 4 * 8 * 128 * 2
    assert kv_bytes_per_token([0, 0, 2, 2], 8, 128, 2) * 2 == kv_bytes_per_token(
        [0, 1, 2, 3], 8, 128, 2)  # CLA with pairs halves the cache
    gemma = list(range(20)) + [18 + (i % 5 == 4) for i in range(15)]
    assert len(gemma) == 35 and sum(s == i for i, s in enumerate(gemma)) == 20
    # The 15 sharing layers keep the local/global pattern of their sources:
    # 4 local layers, then a global one (indices 4, 9, ... are global).
    assert all((s % 5 == 4) == (i % 5 == 4) for i, s in enumerate(gemma))


def test_a_source_must_be_an_earlier_producer():
    for bad in ([1, 1], [0, 0, 1], [0, 2, 2]):
        with pytest.raises(ValueError, match="kv_source"):
            SharedKVDecoder(bad)
    model = SharedKVDecoder([0, 0, 2])
    assert sorted(model.wkv) == ["0", "2"]  # consumers have no K/V weights


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    torch.manual_seed(2)
    model = SharedKVDecoder([0, 0, 2, 2], vocab=8, d_model=8)
    tokens = torch.randint(0, 8, (5,))
    with torch.no_grad():
        ref, _ = model(tokens)
        out, cache = model.to(dtype)(tokens)
    assert out.dtype == dtype and all(k.dtype == dtype for k, _ in cache.values())
    sb.assert_close(out.float(), ref, dtype=dtype)
