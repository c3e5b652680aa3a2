"""snippets/positional_encoding.py: the formula, the shift matrices, the
learned table, and permutation equivariance checked with PyTorch's MHA."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.positional_encoding as mod
from snippets.positional_encoding import (
    LearnedPositionEmbedding,
    sinusoidal_positional_encoding,
    sinusoidal_shift_matrix,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "PE shape: (50, 16)",
        "PE[0, :4]: 0.0000 1.0000 0.0000 1.0000",
        "PE[1, :4]: 0.8415 0.5403 0.3110 0.9504",
        "PE[pos + 3] == PE[pos] @ M_3 for all pos: True",
        "M_3 is a rotation (orthogonal): True",
        "learned: output shape: (1, 5, 16)",
        "learned: same token, different positions differ: True",
        "learned: refused: positions 4..8 asked for, but only 0..7 are learned",
    ],
    "permutation": [
        "no positions: output follows the shuffle: True",
        "with positions: output follows the shuffle: False",
        "causal, no positions: output follows the shuffle: False",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def paper_formula(num_positions, d_model, base=10000.0):
    """Section 3.5 of arXiv 1706.03762, one number at a time."""
    table = [[0.0] * d_model for _ in range(num_positions)]
    for pos in range(num_positions):
        for i in range(d_model // 2):
            angle = pos / base ** (2 * i / d_model)
            table[pos][2 * i] = math.sin(angle)
            table[pos][2 * i + 1] = math.cos(angle)
    return torch.tensor(table, dtype=F64)


@pytest.mark.parametrize("num_positions,d_model", [(1, 2), (7, 4), (64, 16),
                                                   (513, 10)])
def test_formula_against_a_hand_written_loop(num_positions, d_model):
    pe = sinusoidal_positional_encoding(num_positions, d_model, dtype=F64)
    assert pe.shape == (num_positions, d_model) and pe.dtype == F64
    sb.assert_close(pe, paper_formula(num_positions, d_model))


def test_position_zero_and_value_range():
    pe = sinusoidal_positional_encoding(300, 12, dtype=F64)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 6, dtype=F64))
    assert pe.abs().max() <= 1.0
    # each (sin, cos) pair is a point on the unit circle
    pairs = pe.view(300, 6, 2)
    sb.assert_close(pairs.pow(2).sum(-1), torch.ones(300, 6, dtype=F64))


def test_wavelengths_are_a_geometric_progression_from_2pi():
    d_model = 8
    pe = sinusoidal_positional_encoding(2, d_model, dtype=F64)
    frequency = torch.atan2(pe[1, 0::2], pe[1, 1::2])  # angle at pos 1
    wavelength = 2 * math.pi / frequency
    sb.assert_close(wavelength[0], torch.tensor(2 * math.pi, dtype=F64))
    ratios = wavelength[1:] / wavelength[:-1]
    sb.assert_close(ratios, torch.full((3,), 10000.0 ** (2 / d_model),
                                       dtype=F64))


@PROPERTY_SETTINGS
@given(k=st.integers(-40, 40), half=st.integers(1, 12),
       base=st.sampled_from([10000.0, 500.0, 1e6]))
def test_property_shift_is_one_fixed_matrix_for_all_positions(k, half, base):
    d_model, n = 2 * half, 120
    pe = sinusoidal_positional_encoding(n, d_model, base=base, dtype=F64)
    m_k = sinusoidal_shift_matrix(k, d_model, base=base)
    assert m_k.shape == (d_model, d_model)
    lo, hi = max(0, -k), min(n, n - k)
    sb.assert_close(pe[lo:hi] @ m_k, pe[lo + k:hi + k])
    # block diagonal: nothing mixes two different frequencies
    blocks = torch.block_diag(*torch.ones(half, 2, 2, dtype=F64))
    assert (m_k[blocks == 0] == 0).all()
    # a rotation, undone by its transpose, which is M_{-k}
    eye = torch.eye(d_model, dtype=F64)
    sb.assert_close(m_k @ m_k.T, eye)
    sb.assert_close(m_k.T, sinusoidal_shift_matrix(-k, d_model, base=base))


def test_shift_matrices_compose_and_start_at_identity():
    d_model = 16
    eye = torch.eye(d_model, dtype=F64)
    sb.assert_close(sinusoidal_shift_matrix(0, d_model), eye)
    m2, m5 = (sinusoidal_shift_matrix(k, d_model) for k in (2, 5))
    sb.assert_close(m2 @ m5, sinusoidal_shift_matrix(7, d_model))


def test_shift_matrix_is_found_by_least_squares_too():
    """Independent of the closed form: solve PE[k:] = PE[:-k] @ M for M."""
    d_model, k = 8, 4
    pe = sinusoidal_positional_encoding(200, d_model, dtype=F64)
    solved = torch.linalg.lstsq(pe[:-k], pe[k:]).solution
    sb.assert_close(solved, sinusoidal_shift_matrix(k, d_model))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16,
                                   torch.bfloat16])
def test_low_precision_tables_round_the_float64_values(dtype):
    pe = sinusoidal_positional_encoding(2048, 32, dtype=dtype)
    assert pe.dtype == dtype
    exact = sinusoidal_positional_encoding(2048, 32, dtype=F64)
    if dtype == torch.float32:
        # float32 angles near 2048 rad are off by up to half an ulp (6e-5)
        torch.testing.assert_close(pe.double(), exact, atol=2e-4, rtol=0)
    else:  # float32 angles, then one rounding to the half type
        sb.assert_close(pe.double(), exact, dtype=dtype)


def test_angles_in_half_precision_would_be_wrong():
    """Why the table is computed in float32: bfloat16 cannot even count."""
    positions = torch.arange(2048, dtype=torch.bfloat16)
    assert positions[257].item() == 256.0  # 257 rounds to 256
    frequency = 10000.0 ** (-torch.arange(0, 32, 2) / 32)
    bad = positions.float()[:, None] * frequency
    exact = sinusoidal_positional_encoding(2048, 32, dtype=F64)
    wrong = torch.stack((bad.sin(), bad.cos()), -1).flatten(-2)
    assert (wrong.double() - exact).abs().max() > 0.5


def test_odd_width_is_refused():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_positional_encoding(4, 7)


def test_learned_embedding_adds_the_rows_of_two_tables():
    torch.manual_seed(0)
    embed = LearnedPositionEmbedding(20, 10, 6)
    ids = torch.tensor([[1, 4, 4], [0, 19, 2]])
    out = embed(ids)
    expected = embed.tokens.weight[ids] + embed.positions.weight[:3]
    assert out.shape == (2, 3, 6)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    shifted = embed(ids, offset=7)  # the last 3 positions
    torch.testing.assert_close(
        shifted, embed.tokens.weight[ids] + embed.positions.weight[7:],
        rtol=0, atol=0)


def test_learned_positions_are_trained_and_bounded():
    embed = LearnedPositionEmbedding(5, 4, 3)
    embed(torch.tensor([[1, 2]])).sum().backward()
    grad = embed.positions.weight.grad
    assert (grad[:2] != 0).all() and (grad[2:] == 0).all()
    for offset in (-1, 3):
        with pytest.raises(ValueError, match="are learned"):
            embed(torch.tensor([[1, 2]]), offset=offset)


def torch_self_attention(mha, x, attn_mask=None):
    out, _ = mha(x, x, x, attn_mask=attn_mask, need_weights=False)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equivariance_with_pytorch_multihead_attention(seed):
    """nn.MultiheadAttention, unmasked: permuting tokens permutes outputs;
    adding positions or a causal mask breaks it."""
    torch.manual_seed(seed)
    T, d = 7, 16
    mha = nn.MultiheadAttention(d, 4, batch_first=True).double().eval()
    x = torch.randn(2, T, d, dtype=F64)
    perm = torch.randperm(T)
    while torch.equal(perm, torch.arange(T)):
        perm = torch.randperm(T)
    plain = torch_self_attention(mha, x)
    sb.assert_close(torch_self_attention(mha, x[:, perm]), plain[:, perm])

    pe = sinusoidal_positional_encoding(T, d, dtype=F64)
    with_pe = torch_self_attention(mha, x + pe)
    shuffled = torch_self_attention(mha, x[:, perm] + pe)
    assert not torch.allclose(shuffled, with_pe[:, perm], atol=1e-6)

    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = masked
    causal = torch_self_attention(mha, x, future)
    shuffled = torch_self_attention(mha, x[:, perm], future)
    assert not torch.allclose(shuffled, causal[:, perm], atol=1e-6)


def test_the_tables_follow_the_requested_device():
    assert sinusoidal_shift_matrix(3, 8, device="meta").device.type == "meta"
    assert sinusoidal_positional_encoding(5, 8, device="meta").device.type == "meta"
