"""Claims cited by the entries on score functions and their variants (additive, multiplicative,
sparse and differential attention), torch 2.13.0, CPU."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from tests.claims import claim


@claim("sdpa-math-mask-no-savings")
def test_a_sparse_boolean_mask_saves_no_flops_on_the_math_backend():
    """The math backend computes every score and masks afterwards: a mask that keeps one key in
    eight costs exactly what no mask costs, 2 * 2 * L * S * d_k FLOPs per batch element and head
    (q k^T and weights @ v, two FLOPs per multiply-add)."""
    B, h, T, d = 1, 2, 64, 16
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, B, h, T, d, generator=gen).unbind(0)
    sparse = torch.zeros(T, T, dtype=torch.bool)
    sparse[:, ::8] = True  # one key in eight
    counts = {}
    for name, mask in (("none", None), ("sparse", sparse)):
        with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        counts[name] = counter.get_total_flops()
    assert counts["none"] == counts["sparse"] == 2 * 2 * B * h * T * T * d


@claim("sdpa-cpu-masked-scores-computed")
def test_both_cpu_backends_compute_the_scores_a_boolean_mask_hides():
    """On the CPU (2.13), the math backend and the CPU flash kernel both compute the scores of the
    keys a boolean mask hides: a NaN planted in the hidden keys, here the first 1024 of 2048 (many
    tiles of the flash kernel, hidden from every query), reaches every output. A kernel that
    skipped hidden keys or tiles would return finite rows equal to the run without the NaN."""
    B, h, L, S, d = 1, 2, 64, 2048, 16
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(B, h, L, d, generator=gen)
    k, v = torch.randn(2, B, h, S, d, generator=gen).unbind(0)
    mask = torch.zeros(L, S, dtype=torch.bool)
    mask[:, S // 2 :] = True  # every query sees the second half only
    poisoned = k.clone()
    poisoned[:, :, : S // 2] = float("nan")
    for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
        with sdpa_kernel(backend):
            clean = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            out = F.scaled_dot_product_attention(q, poisoned, v, attn_mask=mask)
        assert torch.isfinite(clean).all(), backend
        assert torch.isnan(out).all(), backend
    # The 2-D mask sends the default path to the CPU flash kernel.
    with torch.profiler.profile() as prof:
        F.scaled_dot_product_attention(q, poisoned, v, attn_mask=mask)
    names = {event.key for event in prof.key_averages()}
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in names


@claim("rmsnorm-formula")
def test_rmsnorm_is_x_over_root_mean_square_times_weight():
    """nn.RMSNorm(d, eps) computes x / sqrt(mean(x^2, last axis) + eps) * weight, weight starting
    at ones: no mean is subtracted and there is no bias."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 8, generator=gen, dtype=torch.float64) + 5.0  # a mean far from 0
    norm = nn.RMSNorm(8, eps=1e-5).double()
    assert torch.equal(norm.weight, torch.ones(8, dtype=torch.float64))
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5, generator=gen)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * norm.weight
    assert torch.allclose(norm(x), expected, rtol=0, atol=1e-12)
    assert not any(name == "bias" for name, _ in norm.named_parameters())
