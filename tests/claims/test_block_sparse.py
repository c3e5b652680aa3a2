"""Claims about block-sparse selections in FlexAttention (torch 2.13.0, CPU, the
eager path that runs without torch.compile). Tiny shapes: T = 16, tiles of 4."""

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from tests.claims import claim

T, TILE = 16, 4
pytestmark = pytest.mark.filterwarnings(
    "ignore:flex_attention called without torch.compile")


@claim("flex-mask-mod-reads-a-table")
def test_a_mask_mod_may_index_a_tensor_of_chosen_blocks():
    """A mask_mod that looks up a boolean table captured from outside (per
    head and query, which key blocks were chosen) gives a block mask whose
    rows list only the tiles holding a chosen block, and flex_attention with
    it equals SDPA with the same selection as a dense boolean mask."""
    gen = torch.Generator().manual_seed(0)
    chosen = torch.rand(2, T, T // TILE, generator=gen) < 0.5  # (h, T, N)
    chosen[:, torch.arange(T), torch.arange(T) // TILE] = True  # own block

    def mask_mod(b, h, q_idx, kv_idx):
        return chosen[h, q_idx, kv_idx // TILE] & (kv_idx <= q_idx)

    blocks = create_block_mask(mask_mod, None, 2, T, T, device="cpu",
                               BLOCK_SIZE=TILE)
    dense = chosen.repeat_interleave(TILE, -1) & torch.ones(
        T, T, dtype=torch.bool).tril()  # (h, T, T)
    tiles = dense.unflatten(1, (T // TILE, TILE)).unflatten(
        3, (T // TILE, TILE)).any(4).any(2)  # (h, rows, cols)
    counts = blocks.kv_num_blocks[0] + blocks.full_kv_num_blocks[0]
    assert torch.equal(counts, tiles.sum(-1).int())
    assert counts.sum() < tiles.numel()  # some tiles are skipped
    q, k, v = torch.randn(3, 1, 2, T, 8, generator=gen).unbind(0)
    out = flex_attention(q, k, v, block_mask=blocks)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=dense)
    assert torch.allclose(out, ref, atol=1e-5)
