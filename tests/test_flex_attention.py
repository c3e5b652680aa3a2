"""snippets/flex_attention.py: the site's masks and ALiBi in FlexAttention,
against SDPA with the site's own boolean and float masks.

FlexAttention runs eagerly here, slowly: every new shape or function costs
a compilation by Dynamo's eager backend. So the shapes are fixed (T = 32,
blocks of 8) and the block masks are built once for the module.
"""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import (
    create_block_mask,
    create_mask,
    flex_attention,
    or_masks,
)

import snippets.flex_attention as mod
from snippets.alibi import alibi_attention, alibi_slopes
from snippets.document_masking import (
    document_ids,
    document_mask,
    document_mask_mod,
)
from snippets.flex_attention import (
    alibi_score_mod,
    block_kinds,
    causal_mask_mod,
)
from snippets.prefix_lm_mask import prefix_lm_mask, prefix_lm_mask_mod
from snippets.sliding_window_attention import (
    sliding_window_mask,
    sliding_window_mask_mod,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "blocks (2 = full, 1 = partial, 0 = skipped):",
        "tensor([[1, 0, 0, 0],",
        "        [2, 1, 0, 0],",
        "        [2, 2, 1, 0],",
        "        [2, 2, 2, 1]])",
        "sparsity: 37.5 %",
        "causal mask_mod equals is_causal=True: True",
        "ALiBi score_mod equals alibi_attention: True",
    ],
    "site_masks": [
        "sliding window: True",
        "document masking: True",
        "prefix LM: True",
        "documents and a window: True",
    ],
}
T, TILE = 32, 8
F64 = torch.float64
# The snippet silences this warning at import; pytest restores the filters
# for every test, so say it again here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:flex_attention called without torch.compile")


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def qkv(seed, batch=2, heads=2, dtype=F64, d_k=8):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(3, batch, heads, T, d_k, generator=gen,
                       dtype=dtype).unbind(0)


IDS = torch.stack([document_ids([10, 6, 12], T), document_ids([20, 12], T)])
PREFIX = torch.tensor([12, 5])


@pytest.fixture(scope="module")
def cases():
    """name -> (mask_mod, boolean attend mask (B or 1, 1, T, T), BlockMask),
    each BlockMask built once for the whole module."""
    window = sliding_window_mask(T, window=6)
    specs = {
        "causal": (causal_mask_mod, torch.ones(T, T, dtype=torch.bool).tril(),
                   None),
        "window": (sliding_window_mask_mod(6), window, None),
        "document": (document_mask_mod(IDS), document_mask(IDS)[:, None], 2),
        "prefix": (prefix_lm_mask_mod(PREFIX),
                   prefix_lm_mask(PREFIX, T)[:, None], 2),
    }
    return {
        name: (mask_mod, attend[None, None] if attend.dim() == 2 else attend,
               create_block_mask(mask_mod, batch, None, T, T, device="cpu",
                                 BLOCK_SIZE=TILE))
        for name, (mask_mod, attend, batch) in specs.items()
    }


def kinds_by_hand(dense, q_tile, kv_tile):
    """(B, H, L, S) boolean mask -> the kind of each block, counted here:
    2 if every entry is True, 1 if some are, 0 if none."""
    b, h, rows, cols = dense.shape
    tiles = dense.reshape(b, h, rows // q_tile, q_tile, cols // kv_tile,
                          kv_tile).transpose(3, 4).flatten(-2)
    return torch.where(tiles.all(-1), 2, tiles.any(-1).long())


@pytest.mark.parametrize("name", ["causal", "window", "document", "prefix"])
def test_flex_equals_sdpa_with_the_sites_masks(cases, name):
    mask_mod, attend, block_mask = cases[name]
    q, k, v = qkv(0)
    out = flex_attention(q, k, v, block_mask=block_mask)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v,
                                                        attn_mask=attend))


@pytest.mark.parametrize("name", ["causal", "window", "document", "prefix"])
def test_block_kinds_match_the_blocks_of_the_dense_mask(cases, name):
    mask_mod, attend, block_mask = cases[name]
    kinds = block_kinds(block_mask)
    assert kinds.shape == (attend.size(0), 1, T // TILE, T // TILE)
    dense = create_mask(mask_mod, attend.size(0), 1, T, T, device="cpu")
    assert torch.equal(dense, attend.expand_as(dense))
    assert torch.equal(kinds, kinds_by_hand(dense, TILE, TILE))
    # PyTorch's own view of the blocks: every computed one, full or not.
    assert torch.equal(kinds > 0, block_mask.to_dense() > 0)


def test_block_kinds_with_rectangular_blocks_and_no_full_blocks():
    # 4-row by 8-column blocks; and the same mask with full blocks not kept
    # apart, as separate_full_blocks=False does: every computed block is 1.
    mask_mod = sliding_window_mask_mod(6)
    dense = create_mask(mask_mod, 1, 1, T, T, device="cpu")
    rect = create_block_mask(mask_mod, None, None, T, T, device="cpu",
                             BLOCK_SIZE=(4, 8))
    assert torch.equal(block_kinds(rect), kinds_by_hand(dense, 4, 8))
    merged = create_block_mask(mask_mod, None, None, T, T, device="cpu",
                               BLOCK_SIZE=8, separate_full_blocks=False)
    assert torch.equal(block_kinds(merged),
                       (kinds_by_hand(dense, 8, 8) > 0).long())


@settings(max_examples=25, deadline=None, derandomize=True)
@given(lengths=st.lists(st.integers(1, 12), min_size=1, max_size=5),
       window=st.integers(1, T), prefix=st.integers(0, T))
def test_property_block_kinds_of_combined_masks(lengths, window, prefix):
    total = sum(lengths)
    if total > T:
        lengths, total = [T], T
    ids = document_ids(lengths, T)[None]
    mask_mod = or_masks(prefix_lm_mask_mod(torch.tensor([prefix])),
                        mod.and_masks(document_mask_mod(ids),
                                      sliding_window_mask_mod(window)))
    block_mask = create_block_mask(mask_mod, 1, None, T, T, device="cpu",
                                   BLOCK_SIZE=TILE)
    dense = create_mask(mask_mod, 1, 1, T, T, device="cpu")
    expected = (prefix_lm_mask(torch.tensor([prefix]), T)
                | (document_mask(ids) & sliding_window_mask(T, window=window)))
    assert torch.equal(dense[:, 0], expected)
    assert torch.equal(block_kinds(block_mask), kinds_by_hand(dense, 8, 8))


@pytest.mark.parametrize("heads", [3, 8])
def test_alibi_score_mod_equals_the_sites_alibi(cases, heads):
    _, _, causal = cases["causal"]
    q, k, v = qkv(1, heads=heads)
    score_mod = alibi_score_mod(alibi_slopes(heads, dtype=F64))
    out = flex_attention(q, k, v, score_mod=score_mod, block_mask=causal)
    sb.assert_close(out, alibi_attention(q, k, v))
    # The same bias written out, scores scaled first (what score_mod gets).
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    slopes = alibi_slopes(heads, dtype=F64)[:, None, None]
    scores = q @ k.transpose(-2, -1) / 8**0.5 + slopes * (j - i)
    scores = scores.masked_fill(j > i, float("-inf"))
    sb.assert_close(out, torch.softmax(scores, dim=-1) @ v)


def test_alibi_with_zero_slopes_is_plain_causal_attention(cases):
    _, attend, causal = cases["causal"]
    q, k, v = qkv(2)
    out = flex_attention(q, k, v, score_mod=alibi_score_mod(torch.zeros(2)),
                         block_mask=causal)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v,
                                                        is_causal=True))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(cases, dtype):
    mask_mod, attend, block_mask = cases["document"]
    q, k, v = qkv(3, dtype=torch.float32)
    low = flex_attention(q.to(dtype), k.to(dtype), v.to(dtype),
                         block_mask=block_mask)
    assert low.dtype == dtype and low.isfinite().all()
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    sb.assert_close(low.float(), ref, dtype=dtype)


def test_one_block_mask_serves_every_batch_entry_and_head(cases):
    _, _, causal = cases["causal"]  # built with B=None, H=None
    assert causal.shape == (1, 1, T, T)
    q, k, v = qkv(4, batch=3, heads=4)
    out = flex_attention(q, k, v, block_mask=causal)
    sb.assert_close(out, F.scaled_dot_product_attention(q, k, v,
                                                        is_causal=True))
