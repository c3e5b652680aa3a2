"""Claims cited by the decoding entries: KV cache, PagedAttention, sliding-window attention,
FlashAttention (torch 2.13.0, CPU)."""

import inspect
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

from tests.claims import claim


class _Ops(TorchDispatchMode):
    """The aten operators a call dispatches to, in order."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _shares_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@claim("tensor-cat-copies")
def test_cat_returns_new_storage_and_slicing_a_view():
    cache = torch.randn(1, 2, 5, 4)  # (B, H_kv, T, d_k)
    new = torch.randn(1, 2, 1, 4)
    grown = torch.cat([cache, new], dim=-2)
    assert grown.shape == (1, 2, 6, 4)
    assert not _shares_storage(grown, cache) and not _shares_storage(grown, new)
    cache[0, 0, 0, 0] = 100.0  # the old cache and the grown one are independent copies
    assert grown[0, 0, 0, 0] != 100.0
    assert _shares_storage(grown[..., :5, :], grown)  # a slice is a view: no copy


@claim("tensor-index-tensor-copies")
def test_indexing_with_an_index_tensor_copies():
    pool = torch.randn(8, 4, 2, 3)  # (blocks, block size, H_kv, d_k)
    table = torch.tensor([0, 1, 3])
    gathered = pool[table]
    assert gathered.shape == (3, 4, 2, 3)
    assert not _shares_storage(gathered, pool)
    pool[1] = 0.0
    assert gathered[1].abs().sum() > 0  # the gathered blocks are a copy
    assert _shares_storage(pool[1:3], pool)  # a slice of the pool is a view


@claim("sdpa-cpu-flash-kernel")
def test_cpu_default_and_flash_backend_run_the_cpu_flash_kernel():
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 64, 16, generator=gen).unbind(0)  # (B, h, T, d_k)
    flash_op = "aten._scaled_dot_product_flash_attention_for_cpu.default"
    with _Ops() as default:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with _Ops() as flash, sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out_flash = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with _Ops() as math, sdpa_kernel(SDPBackend.MATH):
        out_math = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert flash_op in default.ops and flash_op in flash.ops
    assert flash_op not in math.ops
    # Same attention, different rounding: close, not bit for bit.
    assert torch.equal(out, out_flash)
    assert torch.allclose(out, out_math, atol=1e-5) and not torch.equal(out, out_math)
    # The conditions the page names hold here, and the kernel runs in every
    # floating dtype and with a boolean or a float mask that needs no gradient,
    # 2-D or 4-D: (L, S), (1, S), (B, 1, L, S), (B, h, L, S), (1, h, 1, S).
    assert q.dim() == 4 and v.size(-1) == q.size(-1)
    assert q.stride(-1) == k.stride(-1) == v.stride(-1) == 1
    for dtype in (torch.float64, torch.float16, torch.bfloat16):
        with _Ops() as ops:
            F.scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype))
        assert flash_op in ops.ops
    masks = [torch.rand(64, 64, generator=gen) < 0.5, torch.randn(64, 64, generator=gen),
             torch.randn(1, 64, generator=gen), torch.randn(2, 1, 64, 64, generator=gen),
             torch.rand(2, 4, 64, 64, generator=gen) < 0.5, torch.randn(1, 4, 1, 64, generator=gen)]
    for mask in masks:
        with _Ops() as ops:
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert flash_op in ops.ops, tuple(mask.shape)
        with _Ops() as ops, sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert flash_op in ops.ops, tuple(mask.shape)
    # Outside the conditions (d_v != d_k, dropout_p > 0, a non-contiguous last axis, a float
    # mask that requires grad, a 3-D mask (h, L, S) or (1, L, S) with 4-D inputs) and for 3-D
    # inputs, the default path runs the math backend: no flash op, an explicit softmax over
    # the whole score matrix instead; and sdpa_kernel(FLASH_ATTENTION) raises "No available
    # kernel" for each of them.
    q, k, v = torch.randn(3, 2, 2, 8, 16, generator=gen).unbind(0)  # (B, h, T, d_k)
    math_op = "aten._safe_softmax.default"  # math decomposes into plain ops
    cases = {
        "d_v != d_k": ((q, k, torch.randn(2, 2, 8, 32, generator=gen)), {}),
        "dropout": ((q, k, v), {"dropout_p": 0.1}),
        "last axis not contiguous": (
            (torch.randn(2, 2, 16, 8, generator=gen).transpose(-2, -1), k, v), {}),
        "float mask requires grad": (
            (q, k, v), {"attn_mask": torch.randn(8, 8, generator=gen, requires_grad=True)}),
        "3-D mask (h, L, S)": ((q, k, v), {"attn_mask": torch.randn(2, 8, 8, generator=gen)}),
        "3-D boolean mask (1, L, S)": (
            (q, k, v), {"attn_mask": torch.rand(1, 8, 8, generator=gen) < 0.5}),
        "3-D": ((q[0], k[0], v[0]), {}),
    }
    for name, (args, kwargs) in cases.items():
        with _Ops() as ops:
            F.scaled_dot_product_attention(*args, **kwargs)
        assert flash_op not in ops.ops and math_op in ops.ops, name
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the reasons, as UserWarnings
            with pytest.raises(RuntimeError, match="No available kernel"):
                F.scaled_dot_product_attention(*args, **kwargs)


@claim("flex-sliding-window-mask-mod")
def test_flex_attention_with_a_sliding_window_mask_mod_equals_sdpa():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def sliding_window(window):
        def mask_mod(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx - kv_idx < window)
        return mask_mod

    gen = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 1, 2, 16, 8, generator=gen).unbind(0)
    block_mask = create_block_mask(sliding_window(3), None, None, 16, 16, device="cpu")
    with warnings.catch_warnings():
        # Eager flex_attention on the CPU warns that it is not compiled.
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        out = flex_attention(q, k, v, block_mask=block_mask)
    pos = torch.arange(16)
    attend = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < 3)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    assert torch.allclose(out, ref, atol=1e-5)


@claim("flex-paged-attention-experimental")
def test_an_experimental_paged_attention_class_ships_with_flex_attention():
    from torch.nn.attention.experimental import _paged_attention

    params = list(inspect.signature(_paged_attention.PagedAttention.__init__).parameters)
    assert params == ["self", "n_pages", "page_size", "max_batch_size", "device"]
    assert "flex attention" in _paged_attention.PagedAttention.__doc__
