"""Claims cited by the chunked-attention entry: FlexAttention with a chunked mask_mod
(torch 2.13.0, CPU, the eager path a CPU gets without torch.compile). Tiny shapes, one block
mask."""

import warnings

import torch
import torch.nn.functional as F

from tests.claims import claim


@claim("flex-chunked-mask-mod")
def test_flex_attention_with_a_chunked_mask_mod_equals_sdpa_and_skips_other_chunks():
    """flex_attention with a block mask built from the chunked mask_mod gives SDPA's output
    with the boolean mask, and the block mask marks the blocks between two chunks empty."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def chunked(b, h, q_idx, kv_idx):
        return (q_idx // 8 == kv_idx // 8) & (kv_idx <= q_idx)

    gen = torch.Generator().manual_seed(2)
    q, k, v = torch.randn(3, 1, 2, 16, 8, generator=gen).unbind(0)
    block_mask = create_block_mask(chunked, None, None, 16, 16, device="cpu", BLOCK_SIZE=8)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        out = flex_attention(q, k, v, block_mask=block_mask)
    pos = torch.arange(16)
    attend = (pos[:, None] // 8 == pos[None, :] // 8) & (pos[None, :] <= pos[:, None])
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    assert torch.allclose(out, ref, atol=1e-5)
    assert block_mask.to_dense()[0, 0].tolist() == [[1, 0], [0, 1]]
