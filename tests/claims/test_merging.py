"""Claims behind merging partial attention results by log-sum-exp (torch 2.13.0, CPU).

flex_attention runs eagerly here (no torch.compile): the unfused reference path. Shapes are
tiny so that it stays quick.
"""

import math
import warnings

import pytest
import torch
from torch.nn.attention.flex_attention import AuxOutput, AuxRequest, flex_attention

from tests.claims import claim

WARNING = "flex_attention called without torch.compile"
pytestmark = pytest.mark.filterwarnings(f"ignore:{WARNING}")


def qkv(dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [t.to(dtype) for t in torch.randn(3, 1, 2, 8, 4, generator=gen).unbind(0)]


def scaled_scores(q, k):
    q, k = q.double(), k.double()
    return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))


@claim("flex-aux-lse")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_flex_returns_the_natural_log_sum_exp_of_the_scaled_scores(dtype):
    q, k, v = qkv(dtype)
    result = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))
    out, aux = result
    assert isinstance(aux, AuxOutput) and out.dtype == dtype
    assert aux.lse.shape == (1, 2, 8)  # (B, H, L)
    assert aux.lse.dtype == torch.float32  # float32 even for half inputs
    expected = torch.logsumexp(scaled_scores(q, k), dim=-1)  # natural log, not log2
    tolerance = 1e-5 if dtype == torch.float32 else 1e-2
    assert torch.allclose(aux.lse.double(), expected, atol=tolerance)
    assert not torch.allclose(aux.lse.double(), expected / math.log(2), atol=0.1)
    # The score_mod's result is what is summed: a constant added to every score adds to lse.
    _, shifted = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + 3.0,
                                return_aux=AuxRequest(lse=True))
    assert torch.allclose(shifted.lse, aux.lse + 3.0, atol=tolerance)


@claim("flex-return-lse-deprecated")
def test_return_lse_still_works_but_is_deprecated():
    q, k, v = qkv()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, lse = flex_attention(q, k, v, return_lse=True)
    messages = [str(w.message) for w in caught]
    assert any("return_lse is deprecated" in m and "return_aux=AuxRequest(lse=True)" in m
               for m in messages), messages
    _, aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))
    assert torch.equal(lse, aux.lse)


@claim("logsumexp-all-neginf")
def test_logsumexp_of_nothing_is_minus_infinity_not_nan():
    empty = torch.full((2, 3), -math.inf)
    assert torch.isneginf(torch.logsumexp(empty, dim=-1)).all()
    assert torch.isneginf(torch.logaddexp(empty[0], empty[1])).all()
    # The naive formula would give nan: max is -inf and -inf - (-inf) is nan.
    m = empty.amax(dim=-1, keepdim=True)
    assert torch.isnan(m + torch.log(torch.exp(empty - m).sum(-1, keepdim=True))).all()
