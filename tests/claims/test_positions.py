"""Claims cited by the entries on positions (positional encoding, RoPE, ALiBi, relative
position bias) and their notebook: how SDPA treats a float mask and its scale, half-precision
integers, nn.Embedding past its table, torch.view_as_complex. PyTorch 2.13.0, CPU."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

from tests.claims import claim

F64 = torch.float64
FLASH_CPU = "aten._scaled_dot_product_flash_attention_for_cpu.default"


class _Ops(TorchDispatchMode):
    """The names of the aten operators a call dispatches to."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(str(func))
        return func(*args, **(kwargs or {}))


def qkv(seed, b=2, h=3, length=5, source=7, d=8, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(b, h, length, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype),
            torch.randn(b, h, source, d, generator=gen, dtype=dtype))


def by_hand(q, k, v, mask, scale):
    return torch.softmax(q @ k.transpose(-2, -1) * scale + mask, dim=-1) @ v


@claim("sdpa-float-mask-added-after-scale")
def test_sdpa_adds_a_float_mask_after_scaling_the_scores():
    """softmax(q k^T / sqrt(d) + attn_mask) v: the mask itself is not scaled. A mask of shape
    (H, L, S) is broadcast over the batch; the default CPU path sends it to the math backend.
    The same mask as (1, H, L, S) takes the default path's CPU flash kernel. Default CPU path,
    the math backend and the flash backend."""
    q, k, v = qkv(0)
    gen = torch.Generator().manual_seed(1)
    mask = 3.0 * torch.randn(3, 5, 7, generator=gen, dtype=F64)  # (H, L, S)
    expected = by_hand(q, k, v, mask, 1 / math.sqrt(8))
    scaled_mask = by_hand(q, k, v, mask / math.sqrt(8), 1 / math.sqrt(8))
    runs = [(mask, None, False), (mask, SDPBackend.MATH, False),
            (mask[None], None, True), (mask[None], SDPBackend.MATH, False),
            (mask[None], SDPBackend.FLASH_ATTENTION, True)]
    for attn_mask, backend, flash in runs:
        with _Ops() as ops:
            if backend is None:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            else:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        assert (FLASH_CPU in ops.ops) == flash, (tuple(attn_mask.shape), backend)
        torch.testing.assert_close(out, expected, atol=1e-12, rtol=1e-10)
        assert not torch.allclose(out, scaled_mask, atol=1e-3)
    # the same in float32, the dtype of most callers
    q32, k32, v32 = (t.float() for t in (q, k, v))
    for attn_mask in (mask.float(), mask[None].float()):  # math, then the flash kernel
        out = F.scaled_dot_product_attention(q32, k32, v32, attn_mask=attn_mask)
        torch.testing.assert_close(out.double(), expected, atol=1e-5, rtol=1e-4)


@claim("sdpa-scale-argument")
def test_sdpa_scale_replaces_the_default_one_over_sqrt_d():
    """By default SDPA multiplies q k^T by 1/sqrt(E), E = q.size(-1) (it divides by sqrt(d_k));
    scale=s multiplies it by s instead; scale=1.0 leaves the scores unscaled, and a float mask
    is still added as it is."""
    q, k, v = qkv(2)
    gen = torch.Generator().manual_seed(3)
    mask = torch.randn(5, 7, generator=gen, dtype=F64)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               by_hand(q, k, v, mask, 1 / math.sqrt(8)),
                               atol=1e-12, rtol=1e-10)
    for scale in (1.0, 0.3):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                             scale=scale)
        torch.testing.assert_close(out, by_hand(q, k, v, mask, scale),
                                   atol=1e-12, rtol=1e-10)
    unscaled = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                              scale=1.0)
    default = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert not torch.allclose(unscaled, default, atol=1e-3)


@claim("sdpa-float32-mask-bfloat16-precision")
def test_sdpa_keeps_a_float32_mask_at_float32_precision_for_bfloat16():
    """SDPA (CPU) accepts a float32 attn_mask with bfloat16 q/k/v and returns bfloat16. With
    q = k = 0 and one-hot values the output is softmax(mask) itself, the attention weights.
    On the math path, which a 3-D (H, 1, S) mask takes even when d_v = d_k, they are exactly
    the float64 weights rounded to bfloat16 (so within half a unit in the last place, 2^-8
    relative). On the CPU
    flash kernel, which the same mask as (1, H, 1, S) takes when d_v = d_k, they are within
    1 % (measured: 0.75 %). With the mask rounded to bfloat16 they are off by more than 2^-5
    (over 3 %) on both paths. Relative errors over every weight above bfloat16's smallest
    normal number."""
    heads, source = 12, 600
    # ALiBi's slopes for 12 heads: most are not powers of 2, so m * distance is
    # rarely a number bfloat16 can hold
    slope = 2.0 ** (-8 / heads * torch.arange(1, heads + 1, dtype=torch.float32))
    mask = -slope[:, None, None] * torch.arange(source - 1, -1, -1.0)  # (H, 1, S)
    assert not torch.equal(mask.bfloat16().float(), mask)  # rounding loses
    exact = torch.softmax(mask.double(), dim=-1)
    seen = exact > torch.finfo(torch.bfloat16).tiny
    v = torch.eye(source, dtype=torch.bfloat16).expand(1, heads, -1, -1)

    def relative_error(out):
        return ((out[0].double() - exact) / exact)[seen].abs().max()

    def attend(d_k, attn_mask):
        q = torch.zeros(1, heads, 1, d_k, dtype=torch.bfloat16)
        k = torch.zeros(1, heads, source, d_k, dtype=torch.bfloat16)
        with _Ops() as ops:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        assert out.dtype == torch.bfloat16
        return out, FLASH_CPU in ops.ops

    # math path: a 3-D mask, also with d_k = d_v (and with d_v = 600 != d_k = 8)
    for d_k in (source, 8):
        kept, flash = attend(d_k, mask)
        rounded, _ = attend(d_k, mask.bfloat16())
        assert not flash
        assert torch.equal(kept[0], exact.bfloat16())  # the best a bfloat16 output can be
        assert relative_error(kept) <= 2**-8
        assert relative_error(rounded) > 2**-5
    # CPU flash kernel: 4-D mask, d_k = d_v = 600
    kept, flash = attend(source, mask[None])
    rounded, _ = attend(source, mask[None].bfloat16())
    assert flash
    assert relative_error(kept) <= 0.01
    assert relative_error(rounded) > 2**-5


@claim("bfloat16-integers-above-256")
def test_bfloat16_counts_exactly_only_up_to_256():
    """bfloat16 keeps 8 significant bits: every integer up to 256 is exact, 257 rounds to
    256 and 1001 to 1000; float16 (11 bits) is exact up to 2048, and 2049 rounds to 2048."""
    small = torch.arange(257, dtype=torch.float32)
    assert torch.equal(small.bfloat16().float(), small)
    as_bf16 = torch.tensor([257.0, 1001.0, 4097.0]).bfloat16().tolist()
    assert as_bf16 == [256.0, 1000.0, 4096.0]
    up_to = torch.arange(2049, dtype=torch.float32)
    assert torch.equal(up_to.half().float(), up_to)
    assert torch.tensor(2049.0).half().item() == 2048.0
    # torch.arange straight in bfloat16 repeats positions too
    positions = torch.arange(300, dtype=torch.bfloat16)
    assert positions.unique().numel() < 300


@claim("embedding-index-out-of-range-raises")
def test_embedding_raises_for_an_index_past_its_table():
    """nn.Embedding(n, d) raises IndexError ("index out of range in self") for an index >= n
    (CPU); it never extrapolates."""
    table = torch.nn.Embedding(8, 4)
    assert table(torch.tensor([7])).shape == (1, 4)
    with pytest.raises(IndexError, match="index out of range"):
        table(torch.tensor([8]))


@claim("tensor-view-as-complex-pairs")
def test_view_as_complex_reads_the_last_axis_as_pairs():
    """torch.view_as_complex reads a float tensor of shape (..., 2) as complex numbers
    x[..., 0] + j x[..., 1], without copying; a last axis of another size, or with a stride
    other than 1, raises RuntimeError."""
    x = torch.randn(3, 4, 2)
    z = torch.view_as_complex(x)
    assert z.shape == (3, 4) and z.dtype == torch.complex64
    assert torch.equal(z.real, x[..., 0]) and torch.equal(z.imag, x[..., 1])
    assert z.data_ptr() == x.data_ptr()  # a view
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        torch.view_as_complex(torch.randn(3, 4))
    with pytest.raises(RuntimeError, match="stride 1"):
        torch.view_as_complex(torch.randn(2, 3).t())
    assert torch.view_as_complex(torch.randn(2, 3).t().contiguous()).shape == (3,)
