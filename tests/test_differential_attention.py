"""snippets/differential_attention.py: against two SDPA calls, and the module
against an independent formulation laid out like the authors' code (all 2h maps
at once, then viewed as (h, 2)); lambda_init against the paper's formula."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.differential_attention as mod
from snippets.differential_attention import (
    MultiHeadDifferentialAttention,
    differential_attention,
    lambda_init,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "equals SDPA(q1, k1, v) - lambda SDPA(q2, k2, v): True",
        "rows sum to 1 - lambda = 0.8: True",
        "layer  1: lambda_init = 0.2000",
        "layer  2: lambda_init = 0.3555",
        "layer  4: lambda_init = 0.5561",
        "layer  8: lambda_init = 0.7265",
        "layer 16: lambda_init = 0.7933",
        "layer 32: lambda_init = 0.7999",
    ],
    "module": [
        "output shape: (2, 5, 32)",
        "lambda_init (layer 3): 0.4707, lambda: 0.5285",
        "equals SDPA + RMSNorm written out: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "differential_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def test_lambda_init_is_the_papers_formula():
    # The paper numbers layers l = 1..L; the authors' code passes the 0-based
    # index as `depth` to 0.8 - 0.6 * exp(-0.3 * depth): the same numbers.
    for depth in range(40):
        assert lambda_init(depth + 1) == 0.8 - 0.6 * math.exp(-0.3 * depth)
    assert lambda_init(1) == pytest.approx(0.2)
    assert 0.2 <= lambda_init(100) < 0.8
    with pytest.raises(ValueError, match="from 1"):
        lambda_init(0)


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    heads=st.integers(1, 3),
    length=st.integers(1, 5),
    source=st.integers(1, 6),
    d=st.integers(1, 5),
    lam=st.floats(-1.0, 2.0),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_equals_two_sdpa_calls(batch, heads, length, source, d, lam, masked, seed):
    gen = torch.Generator().manual_seed(seed)
    q1, q2 = torch.randn(2, batch, heads, length, d, generator=gen, dtype=F64).unbind(0)
    k1, k2 = torch.randn(2, batch, heads, source, d, generator=gen, dtype=F64).unbind(0)
    v = torch.randn(batch, heads, source, 2 * d, generator=gen, dtype=F64)
    attend = None
    if masked:
        attend = torch.rand(length, source, generator=gen) < 0.5
        attend[:, 0] = True
    out = differential_attention(q1, k1, q2, k2, v, lam, attend=attend)
    ref = F.scaled_dot_product_attention(q1, k1, v, attn_mask=attend) - lam * F.scaled_dot_product_attention(
        q2, k2, v, attn_mask=attend
    )
    sb.assert_close(out, ref)
    ones = torch.ones(batch, heads, source, 1, dtype=F64)
    sb.assert_close(differential_attention(q1, k1, q2, k2, ones, lam, attend=attend),
                    torch.full((batch, heads, length, 1), 1 - lam, dtype=F64))


def test_query_with_no_key_gets_zeros_not_nan():
    gen = torch.Generator().manual_seed(5)
    q1, k1, q2, k2 = torch.randn(4, 1, 2, 4, 3, generator=gen, dtype=F64).unbind(0)
    v = torch.randn(1, 2, 4, 6, generator=gen, dtype=F64)
    attend = torch.ones(4, 4, dtype=torch.bool).tril()
    attend[0] = False
    out = differential_attention(q1, k1, q2, k2, v, 0.5, attend=attend)
    assert (out[:, :, 0] == 0).all() and not out.isnan().any()


def test_lambda_zero_is_plain_attention_on_the_first_pair():
    gen = torch.Generator().manual_seed(1)
    q1, k1, q2, k2 = torch.randn(4, 1, 2, 5, 3, generator=gen, dtype=F64).unbind(0)
    v = torch.randn(1, 2, 5, 6, generator=gen, dtype=F64)
    sb.assert_close(differential_attention(q1, k1, q2, k2, v, 0.0), F.scaled_dot_product_attention(q1, k1, v))


def authors_layout(attn, x, attend, layer):
    """The module recomputed as the authors' naive code lays it out: 2h softmax
    maps at once, viewed as (h, 2, T, S), map 0 minus lambda times map 1, then
    RMSNorm over each head's 2d channels, times (1 - lambda_init)."""
    B, T, _ = x.shape
    h, d = attn.h, attn.d
    q = attn.w_q(x).view(B, T, 2 * h, d).transpose(1, 2) * d**-0.5
    k = attn.w_k(x).view(B, T, 2 * h, d).transpose(1, 2)
    v = attn.w_v(x).view(B, T, h, 2 * d).transpose(1, 2)
    scores = (q @ k.transpose(-2, -1)).masked_fill(~attend, float("-inf"))
    maps = torch.softmax(scores, -1).view(B, h, 2, T, T)
    lam = torch.exp((attn.lambda_q1 * attn.lambda_k1).sum()) - torch.exp((attn.lambda_q2 * attn.lambda_k2).sum())
    lam = lam + (0.8 - 0.6 * math.exp(-0.3 * (layer - 1)))
    heads = (maps[:, :, 0] - lam * maps[:, :, 1]) @ v
    heads = heads / torch.sqrt(heads.pow(2).mean(-1, keepdim=True) + 1e-5) * attn.norm.weight
    heads = heads * (1 - attn.lambda_init)
    return attn.w_o(heads.transpose(1, 2).reshape(B, T, 2 * h * d))


@pytest.mark.parametrize("d_model,heads,layer", [(8, 1, 1), (16, 2, 4), (24, 3, 12)])
def test_module_matches_the_authors_layout(d_model, heads, layer):
    torch.manual_seed(layer)
    attn = MultiHeadDifferentialAttention(d_model, heads, layer=layer).double()
    with torch.no_grad():
        attn.norm.weight.uniform_(0.5, 1.5)
    x = torch.randn(2, 6, d_model, dtype=F64)
    attend = torch.ones(6, 6, dtype=torch.bool).tril()
    sb.assert_close(attn(x, attend=attend), authors_layout(attn, x, attend, layer))
    assert attn(x).shape == (2, 6, d_model)


def test_lambda_is_learned_through_its_four_vectors():
    torch.manual_seed(2)
    attn = MultiHeadDifferentialAttention(16, 2, layer=2).double()
    with torch.no_grad():
        for p in (attn.lambda_q1, attn.lambda_k1, attn.lambda_q2, attn.lambda_k2):
            p.zero_()
    assert attn.lam().item() == pytest.approx(attn.lambda_init)  # exp(0) - exp(0) = 0
    with torch.no_grad():
        attn.lambda_q1.normal_(0, 0.1)
        attn.lambda_k1.normal_(0, 0.1)
    attn(torch.randn(1, 4, 16, dtype=F64)).sum().backward()
    assert attn.lambda_q1.grad.abs().sum() > 0 and attn.lambda_k1.grad.abs().sum() > 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_finite_and_close(dtype):
    torch.manual_seed(3)
    attn = MultiHeadDifferentialAttention(32, 2, layer=5)
    x = torch.randn(2, 7, 32)
    attend = torch.ones(7, 7, dtype=torch.bool).tril()
    with torch.no_grad():
        ref = attn(x, attend=attend)
        low = attn.to(dtype)(x.to(dtype), attend=attend)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), ref, dtype=dtype)


def test_gradcheck_float64():
    torch.manual_seed(4)
    attn = MultiHeadDifferentialAttention(8, 2, layer=2).double()
    x = torch.randn(1, 3, 8, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: attn(x), (x,))


def test_invalid_width_raises():
    with pytest.raises(ValueError, match="divide"):
        MultiHeadDifferentialAttention(12, 4, layer=1)
