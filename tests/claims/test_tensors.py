"""Claims about tensor views and reshapes (torch 2.13.0, CPU)."""

import pytest
import torch

from tests.claims import claim

B, T, h, d_k = 2, 5, 4, 3


@claim("tensor-view-after-transpose-raises")
def test_view_after_transpose():
    heads = torch.randn(B, h, T, d_k)
    swapped = heads.transpose(1, 2)
    assert not swapped.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        swapped.view(B, T, h * d_k)
    assert torch.equal(swapped.reshape(B, T, h * d_k), swapped.contiguous().view(B, T, h * d_k))


@claim("tensor-view-heads-without-transpose")
def test_split_heads_needs_the_transpose():
    x = torch.randn(B, T, h * d_k)  # head i = features i*d_k .. (i+1)*d_k - 1
    right = x.view(B, T, h, d_k).transpose(1, 2)
    wrong = x.view(B, h, T, d_k)  # runs, right shape
    assert right.shape == wrong.shape == (B, h, T, d_k)
    for i in range(h):
        assert torch.equal(right[:, i], x[:, :, i * d_k:(i + 1) * d_k])
    assert not torch.equal(wrong[:, 0], x[:, :, :d_k])


@claim("tensor-chunk-views")
def test_chunk_returns_views_that_write_through():
    packed = torch.zeros(6, 2)
    first, second, third = packed.chunk(3, dim=0)
    second.copy_(torch.ones(2, 2))
    assert torch.equal(packed[2:4], torch.ones(2, 2)) and packed[:2].eq(0).all()


@claim("tensor-view-shares-memory")
def test_view_reinterprets_the_same_memory():
    x = torch.arange(24.0).reshape(2, 3, 4)
    heads = x.view(2, 3, 2, 2)
    assert heads.data_ptr() == x.data_ptr()
    heads[0, 0, 0, 0] = -1.0
    assert x[0, 0, 0] == -1.0


@claim("solve-triangular-no-half-cpu")
def test_solve_triangular_has_no_half_precision_kernel_on_the_cpu():
    """torch.linalg.solve_triangular raises NotImplementedError for float16 and bfloat16 on the
    CPU, and runs in float32."""
    a = torch.eye(3) + torch.ones(3, 3).tril(-1)
    b = torch.ones(3, 2)
    for dtype in (torch.float16, torch.bfloat16):
        with pytest.raises(NotImplementedError):
            torch.linalg.solve_triangular(a.to(dtype), b.to(dtype), upper=False)
    assert torch.linalg.solve_triangular(a, b, upper=False).dtype == torch.float32
