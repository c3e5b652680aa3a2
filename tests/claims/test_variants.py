"""Claims made by the entries on attention variants: multi-head latent attention, linear
attention, attention sinks, QK-norm and logit soft-capping (torch 2.13.0, CPU)."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention.flex_attention import flex_attention
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from tests.claims import claim

F64 = torch.float64


def qkv(seed, b=1, h=2, L=5, S=6, d=4, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, L, d, generator=gen, dtype=dtype)
    k = torch.randn(b, h, S, d, generator=gen, dtype=dtype)
    v = torch.randn(b, h, S, d, generator=gen, dtype=dtype)
    return q, k, v


@claim("sdpa-float-mask-not-scaled")
def test_sdpa_adds_a_float_mask_to_the_scaled_scores():
    """A float attn_mask is added after the scale, unscaled: with the default scale and with
    an explicit one, SDPA = softmax(q k^T * scale + M) v."""
    q, k, v = qkv(0)
    mask = 3.0 * torch.randn(5, 6, generator=torch.Generator().manual_seed(1), dtype=F64)
    for scale in (None, 0.3, 2.0):
        s = 1 / math.sqrt(4) if scale is None else scale
        expected = torch.softmax(q @ k.transpose(-2, -1) * s + mask, dim=-1) @ v
        got = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


@claim("sdpa-no-sink-argument")
def test_sdpa_has_no_argument_for_a_sink_logit():
    """The op's schema takes query, key, value, attn_mask, dropout_p, is_causal, scale and
    enable_gqa, nothing else; a `sinks` keyword is refused."""
    schema = torch.ops.aten.scaled_dot_product_attention.default._schema
    names = [argument.name for argument in schema.arguments]
    assert names == ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"]
    q, k, v = qkv(2)
    with pytest.raises(TypeError):
        F.scaled_dot_product_attention(q, k, v, sinks=torch.zeros(2, dtype=F64))


@claim("flex-score-mod-scaled-score")
def test_flex_attention_calls_score_mod_on_the_scaled_score():
    """score_mod receives q.k already multiplied by the scale (1/sqrt(d_k) by default, or the
    `scale` argument), and the softmax runs over what it returns. A multiplicative mod cannot
    tell the two orders apart (2 * (q.k * scale) = (2 * q.k) * scale); an additive one can:
    s + bias[i, j] is SDPA with attn_mask=bias, not softmax((q k^T + bias) * scale) v."""
    q, k, v = qkv(3, L=8, S=8)
    bias = 3.0 * torch.randn(8, 8, generator=torch.Generator().manual_seed(4), dtype=F64)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="flex_attention called without")
        doubled = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: 2 * s)
        identity = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s, scale=0.3)
        biased = flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + bias[i, j])
    torch.testing.assert_close(doubled, F.scaled_dot_product_attention(q, k, v, scale=2 / math.sqrt(4)))
    torch.testing.assert_close(identity, F.scaled_dot_product_attention(q, k, v, scale=0.3))
    torch.testing.assert_close(biased, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    bias_then_scale = torch.softmax((q @ k.transpose(-2, -1) + bias) / math.sqrt(4), dim=-1) @ v
    assert not torch.allclose(biased, bias_then_scale, atol=1e-3)


@claim("rmsnorm-last-dim")
def test_rmsnorm_normalises_the_last_dimension_with_its_gain():
    """nn.RMSNorm(d, eps) computes weight * x / sqrt(mean(x^2 over the last dim) + eps); with
    eps=None it uses torch.finfo(x.dtype).eps."""
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, 3, 5, 8, generator=gen, dtype=F64)
    norm = nn.RMSNorm(8, eps=1e-6, dtype=F64)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(8, generator=gen, dtype=F64))
    expected = norm.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(norm(x), expected, rtol=1e-12, atol=1e-12)
    default = nn.RMSNorm(8, dtype=F64)
    assert default.eps is None
    eps = torch.finfo(F64).eps
    torch.testing.assert_close(default(x), x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))


@claim("flop-counter-matmul-only")
def test_flop_counter_counts_two_flops_per_multiply_add_and_nothing_elementwise():
    """FlopCounterMode: a (m, k) @ (k, n) product counts 2 m k n; exp, elu, division, sums and
    additions count 0."""
    gen = torch.Generator().manual_seed(5)
    a, b = torch.randn(7, 3, generator=gen), torch.randn(3, 5, generator=gen)
    with FlopCounterMode(display=False) as counter:
        a @ b
    assert counter.get_total_flops() == 2 * 7 * 3 * 5
    with FlopCounterMode(display=False) as counter:
        (F.elu(a) + 1).exp().sum(-1) / a.abs().sum()
    assert counter.get_total_flops() == 0


@claim("half-exp-overflow")
def test_exp_overflows_float16_above_about_11():
    """torch.exp in float16 is finite at 11.0 and inf at 11.1 (65504 = e^11.09...); exp(50) is
    inf in float16 and finite in float32."""
    assert torch.tensor(11.0, dtype=torch.float16).exp().isfinite()
    assert torch.tensor(11.1, dtype=torch.float16).exp().isinf()
    assert math.log(65504) == pytest.approx(11.0898, abs=1e-4)
    assert torch.tensor(50.0, dtype=torch.float16).exp().isinf()
    assert torch.tensor(50.0).exp().isfinite()


class _Results(TorchDispatchMode):
    """(aten operator, result) of every operator a call dispatches to."""

    def __init__(self):
        super().__init__()
        self.results = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.results.append((str(func), out))
        return out


@claim("sdpa-math-copies-expanded-key")
def test_sdpa_math_backend_copies_a_key_expanded_to_every_head():
    """expand() of a size-1 head axis is a view (same memory, stride 0), but SDPA on the CPU
    with d_v != d_k (the absorbed MLA shapes: key d_c + d_r wide, value d_c) runs the math
    backend, whose first step multiplies the key by the scale: a new (B, h, d_c + d_r, S)
    tensor, h times the one-head key. With a one-head key and enable_gqa=True instead, the
    math backend clones it into h heads. No flash kernel in either."""
    gen = torch.Generator().manual_seed(0)
    b, h, L, S, d_c, d_r = 2, 8, 1, 10, 32, 8
    q = torch.randn(b, h, L, d_c + d_r, generator=gen)
    key = torch.randn(b, 1, S, d_c + d_r, generator=gen)  # (B, 1, S, d_c + d_r)
    value = key[..., :d_c]  # (B, 1, S, d_c)
    wide = key.expand(-1, h, -1, -1)
    assert wide.shape == (b, h, S, d_c + d_r)
    assert wide.data_ptr() == key.data_ptr() and wide.stride(1) == 0
    assert wide.untyped_storage().nbytes() == key.untyped_storage().nbytes()
    flash_op = "aten._scaled_dot_product_flash_attention_for_cpu.default"
    per_head = b * h * S * (d_c + d_r)  # elements of a key of its own per head

    with _Results() as expanded:
        out = F.scaled_dot_product_attention(q, wide, value.expand(-1, h, -1, -1))
    names = [name for name, _ in expanded.results]
    assert flash_op not in names
    scaled_keys = [t for name, t in expanded.results if name == "aten.mul.Scalar"
                   and t.shape == (b, h, d_c + d_r, S)]
    assert len(scaled_keys) == 1 and scaled_keys[0].numel() == per_head == h * key.numel()
    assert scaled_keys[0].untyped_storage().data_ptr() != key.untyped_storage().data_ptr()
    assert scaled_keys[0].stride(1) != 0  # h real copies, not a view

    with _Results() as gqa:
        out_gqa = F.scaled_dot_product_attention(q, key, value, enable_gqa=True)
    assert flash_op not in [name for name, _ in gqa.results]
    clones = [t for name, t in gqa.results if name == "aten.clone.default"]
    assert [tuple(t.shape) for t in clones] == [(b, 1, h, S, d_c + d_r), (b, 1, h, S, d_c)]
    assert torch.allclose(out, out_gqa, atol=1e-6)
