"""snippets/deepseek_sparse_attention.py: the indexer against its formula, top-k
selection through a boolean SDPA mask against the gathered keys and against the
additive -inf mask of DeepSeek-V3.2's reference code, and k >= L against dense
causal attention."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.deepseek_sparse_attention as mod
from snippets.deepseek_sparse_attention import (
    LightningIndexer,
    sparse_attention_gathered,
    sparse_attention_masked,
    top_k_mask,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "keys per query: [1, 2, 3, 3, 3, 3, 3, 3]",
        "masked SDPA equals the gathered keys: True",
        "k >= L gives dense causal attention: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def causal(num_q, num_k):
    return torch.ones(num_q, num_k, dtype=torch.bool).tril(num_k - num_q)


def test_indexer_is_the_papers_sum_over_heads():
    gen = torch.Generator().manual_seed(1)
    indexer = LightningIndexer(6, n_heads=3, head_dim=4).double()
    x = torch.randn(5, 6, generator=gen, dtype=F64)
    got = indexer(x[2:], x)  # the last 3 of 5 tokens query
    q = (x[2:] @ indexer.wq.weight.T).view(3, 3, 4)
    k, w = x @ indexer.wk.weight.T, x[2:] @ indexer.ww.weight.T
    want = torch.zeros(3, 5, dtype=F64)
    for t in range(3):
        for s in range(5):
            want[t, s] = sum(w[t, j] * torch.relu(q[t, j] @ k[s])
                             for j in range(3))
    sb.assert_close(got, want)


@PROPERTY_SETTINGS
@given(num_q=st.integers(1, 6), extra=st.integers(0, 5),
       top_k=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_property_mask_selects_the_top_k_earlier_keys(num_q, extra, top_k, seed):
    num_k = num_q + extra
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(num_q, num_k, generator=gen, dtype=F64)
    keep = top_k_mask(scores, top_k)
    allowed = causal(num_q, num_k)
    assert not (keep & ~allowed).any()  # never a future key
    counts = allowed.sum(-1).clamp(max=top_k)
    assert torch.equal(keep.sum(-1), counts)  # min(k, keys so far)
    for t in range(num_q):  # every kept score beats every dropped one
        dropped = scores[t][allowed[t] & ~keep[t]]
        if dropped.numel():
            assert scores[t][keep[t]].min() > dropped.max()


@PROPERTY_SETTINGS
@given(num_q=st.integers(1, 6), extra=st.integers(0, 5),
       top_k=st.integers(1, 12), heads=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_property_masked_sdpa_equals_gathered_keys(num_q, extra, top_k,
                                                   heads, seed):
    num_k = num_q + extra
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(heads, num_q, 4, generator=gen, dtype=F64)
    k = torch.randn(num_k, 4, generator=gen, dtype=F64)
    v = torch.randn(num_k, 3, generator=gen, dtype=F64)
    raw = torch.randn(num_q, num_k, generator=gen, dtype=F64)  # index scores
    keep = top_k_mask(raw, top_k)
    masked = sparse_attention_masked(q, k, v, keep)
    sb.assert_close(sparse_attention_gathered(q, k, v, keep, top_k), masked)
    # DeepSeek-V3.2's reference code, written independently: the causal mask
    # is added to the index scores, topk(min(k, S)) picks, and the additive
    # mask -inf.scatter_(-1, picks, 0) + causal goes into a plain softmax.
    mask = torch.zeros(num_q, num_k, dtype=F64).masked_fill(
        ~causal(num_q, num_k), float("-inf"))
    idx = (raw + mask).topk(min(top_k, num_k), dim=-1).indices
    index_mask = torch.full((num_q, num_k), float("-inf"), dtype=F64)
    index_mask = index_mask.scatter(-1, idx, 0.0) + mask
    logits = q @ k.T / math.sqrt(4) + index_mask
    sb.assert_close((logits.softmax(-1) @ v), masked)


@PROPERTY_SETTINGS
@given(num_q=st.integers(1, 6), extra=st.integers(0, 5),
       surplus=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_property_k_at_least_the_length_is_dense_causal(num_q, extra,
                                                        surplus, seed):
    num_k = num_q + extra
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, num_q, 4, generator=gen, dtype=F64)
    k = torch.randn(num_k, 4, generator=gen, dtype=F64)
    v = torch.randn(num_k, 4, generator=gen, dtype=F64)
    keep = top_k_mask(torch.randn(num_q, num_k, generator=gen, dtype=F64),
                      num_k + surplus)
    assert torch.equal(keep, causal(num_q, num_k))
    dense = F.scaled_dot_product_attention(
        q, k.expand(2, -1, -1), v.expand(2, -1, -1),
        attn_mask=causal(num_q, num_k))
    sb.assert_close(sparse_attention_masked(q, k, v, keep), dense)


def test_prefill_k_at_least_the_length_equals_is_causal():
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(3, 6, 8, generator=gen)
    k, v = torch.randn(2, 6, 8, generator=gen).unbind(0)
    keep = top_k_mask(torch.randn(6, 6, generator=gen), 2048)  # V3.2's k
    dense = F.scaled_dot_product_attention(
        q, k[None], v[None], is_causal=True, enable_gqa=True)
    sb.assert_close(sparse_attention_masked(q, k, v, keep), dense)


def test_decoding_one_query_keeps_k_of_the_cache():
    gen = torch.Generator().manual_seed(5)
    scores = torch.randn(1, 40, generator=gen)
    keep = top_k_mask(scores, 7)
    assert keep.sum().item() == 7
    assert set(keep[0].nonzero().flatten().tolist()) == set(
        scores[0].topk(7).indices.tolist())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype):
    gen = torch.Generator().manual_seed(6)
    q = torch.randn(4, 5, 8, generator=gen)
    k, v = torch.randn(2, 9, 8, generator=gen).unbind(0)
    keep = top_k_mask(torch.randn(5, 9, generator=gen), 4)
    ref = sparse_attention_gathered(q, k, v, keep, 4)
    for f in (sparse_attention_masked, sparse_attention_gathered):
        args = (q.to(dtype), k.to(dtype), v.to(dtype), keep)
        out = f(*args) if f is sparse_attention_masked else f(*args, 4)
        assert out.dtype == dtype
        sb.assert_close(out.float(), ref, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_large_half_scores_stay_finite_and_match_sdpa(dtype):
    """Entries of +-40 at d_k = 64: q.k = 102400 > 65504, float16's largest
    number; scaled first, 12800 fits. Both functions agree with SDPA."""
    gen = torch.Generator().manual_seed(8)
    k = 40 * (torch.randint(0, 2, (6, 64), generator=gen) * 2 - 1).float()
    q = k[torch.randperm(6, generator=gen)][None].repeat(2, 1, 1)  # (H, L, d)
    v = torch.randn(6, 64, generator=gen)
    keep = top_k_mask(torch.randn(6, 6, generator=gen), 3)
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    if dtype == torch.float16:  # scaling after the product overflows
        assert torch.einsum("hld,sd->hls", q, k).isinf().any()
    ref = F.scaled_dot_product_attention(q, k[None], v[None], attn_mask=keep,
                                         enable_gqa=True)
    for out in (sparse_attention_masked(q, k, v, keep),
                sparse_attention_gathered(q, k, v, keep, 3)):
        assert out.isfinite().all()
        sb.assert_close(out, ref)
