"""Claims about the log-sum-exp that torch.nn.attention.flex_attention returns (torch 2.13.0, CPU,
the eager path without torch.compile). Shapes as in test_flex.py: T = 16, blocks of 8."""

import pytest
import torch
from torch.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention

from tests.claims import claim

T, TILE = 16, 8
pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")


@claim("flex-lse-natural-log")
def test_returned_lse_is_the_natural_logsumexp_of_the_scaled_scores():
    """return_aux=AuxRequest(lse=True) gives (out, aux) with aux.lse of shape (B, h, L): the natural
    logarithm (not log2) of the sum of exp over each row's scores after the scale, the mask applied."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, T, 8, generator=gen).unbind(0)

    def causal(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx

    blocks = create_block_mask(causal, None, None, T, T, device="cpu", BLOCK_SIZE=TILE)
    out, aux = flex_attention(q, k, v, block_mask=blocks, return_aux=AuxRequest(lse=True))
    assert aux.lse.shape == (1, 2, T)
    scores = (q @ k.transpose(-2, -1) * 8**-0.5).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(),
                                                            float("-inf"))
    assert torch.allclose(aux.lse, torch.logsumexp(scores, dim=-1), atol=1e-5)
    assert not torch.allclose(aux.lse, torch.logsumexp(scores, dim=-1) / torch.log(torch.tensor(2.0)), atol=1e-2)
