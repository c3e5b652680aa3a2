"""snippets/sparse_attention.py: block-sparse attention against SDPA with the same
boolean mask, FlopCounterMode proving only the non-empty tiles are computed,
and the layouts and the strided mask against their definitions."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

import snippets.sparse_attention as mod
from snippets.sparse_attention import (
    bigbird_layout,
    block_sparse_attention,
    fixed_mask,
    layout_to_mask,
    strided_mask,
    tile_layout,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "block layout (1 = tile computed):",
        "11111111",
        "11100001",
        "11110001",
        "10111001",
        "10111100",
        "10001111",
        "11000111",
        "10001011",
        "matches SDPA with the boolean mask: True",
        "tiles computed: 41 of 64 (64.1%)",
        "T =   1024 in blocks of 64: 34.8% of the scores computed",
        "T =   4096 in blocks of 64: 9.2% of the scores computed",
        "T =  16384 in blocks of 64: 2.3% of the scores computed",
    ],
    "strided": [
        "strided            fixed    (1 = may attend)",
        "1000000000000000   1000000000000000",
        "1100000000000000   1100000000000000",
        "1110000000000000   1110000000000000",
        "1111000000000000   1111000000000000",
        "1111100000000000   0001100000000000",
        "0111110000000000   0001110000000000",
        "0011111000000000   0001111000000000",
        "0001111100000000   0001111100000000",
        "1000111110000000   0001000110000000",
        "0100011111000000   0001000111000000",
        "0010001111100000   0001000111100000",
        "0001000111110000   0001000111110000",
        "1000100011111000   0001000100011000",
        "0100010001111100   0001000100011100",
        "0010001000111110   0001000100011110",
        "0001000100011111   0001000100011111",
        "strided: matches SDPA True, scores allowed 82 of 256, tiles 10 of 16",
        "fixed: matches SDPA True, scores allowed 64 of 256, tiles 10 of 16",
        "tiles a causal mask needs: 10",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "sparse_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def qkv(seed, batch, heads, T, S, d, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, heads, T, d, generator=gen, dtype=dtype),
            torch.randn(batch, heads, S, d, generator=gen, dtype=dtype),
            torch.randn(batch, heads, S, d + 1, generator=gen, dtype=dtype))


@PROPERTY_SETTINGS
@given(
    num_blocks=st.integers(1, 8),
    block=st.integers(1, 4),
    window=st.integers(0, 2),
    num_global=st.integers(0, 2),
    num_random=st.integers(0, 2),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_sdpa_with_the_same_mask(num_blocks, block, window, num_global, num_random, causal, seed):
    layout = bigbird_layout(num_blocks, window=window, num_global=num_global, num_random=num_random, seed=seed)
    attend = layout_to_mask(layout, block)
    T = num_blocks * block
    if causal:  # partially masked tiles on the diagonal
        attend = attend & torch.ones(T, T, dtype=torch.bool).tril()
    q, k, v = qkv(seed, 2, 2, T, T, 3)
    ours = block_sparse_attention(q, k, v, attend=attend, block=block)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))


@PROPERTY_SETTINGS
@given(
    tq=st.integers(1, 5),
    ts=st.integers(1, 5),
    block=st.integers(1, 3),
    density=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_property_any_mask_including_empty_rows(tq, ts, block, density, seed):
    T, S = tq * block, ts * block
    attend = torch.rand(T, S, generator=torch.Generator().manual_seed(seed)) < density
    q, k, v = qkv(seed, 1, 2, T, S, 4)
    ours = block_sparse_attention(q, k, v, attend=attend, block=block)
    sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))
    assert (ours[..., ~attend.any(-1), :] == 0).all()


@pytest.mark.parametrize("num_random", [0, 1, 3])
def test_only_the_non_empty_tiles_are_computed(num_random):
    """FlopCounterMode counts 2 FLOPs per multiply-add of each matmul."""
    block, num_blocks, d_k, B, h = 4, 10, 8, 2, 3
    layout = bigbird_layout(num_blocks, window=1, num_global=1, num_random=num_random, seed=7)
    attend = layout_to_mask(layout, block)
    q, k, v = qkv(1, B, h, block * num_blocks, block * num_blocks, d_k, torch.float32)
    with FlopCounterMode(display=False) as counter:
        block_sparse_attention(q, k, v, attend=attend, block=block)
    scores = int(layout.sum()) * block * block  # per batch element and head
    assert counter.get_total_flops() == 2 * B * h * scores * (d_k + (d_k + 1))


def test_bigbird_layout_follows_its_definition():
    layout = bigbird_layout(12, window=2, num_global=2, num_random=3, seed=5)
    assert layout[:2].all() and layout[:, :2].all()
    i, j = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
    assert layout[(i - j).abs() <= 2].all()
    for row in range(2, 12):  # local + global + exactly num_random more (enough are free)
        base = ((torch.arange(12) - row).abs() <= 2) | (torch.arange(12) < 2)
        assert int(layout[row].sum()) == int(base.sum()) + 3
    assert torch.equal(layout, bigbird_layout(12, window=2, num_global=2, num_random=3, seed=5))
    assert not torch.equal(layout, bigbird_layout(12, window=2, num_global=2, num_random=3, seed=6))


def test_layout_to_mask_expands_each_tile():
    layout = torch.tensor([[True, False], [False, True]])
    mask = layout_to_mask(layout, 3)
    assert mask.shape == (6, 6)
    assert mask[:3, :3].all() and not mask[:3, 3:].any() and mask[3:, 3:].all()
    assert torch.equal(tile_layout(mask, 3), layout)


def test_strided_mask_follows_the_reference_definition():
    """openai/sparse_attention: 'local' keeps k <= q < k + stride, 'strided' keeps
    q >= k with (q - k) % stride == 0; the snippet joins the two."""
    T, stride = 13, 3
    mask = strided_mask(T, stride)
    for q in range(T):
        for k in range(T):
            expected = k <= q and (q - k < stride or (q - k) % stride == 0)
            assert bool(mask[q, k]) == expected


@pytest.mark.parametrize("T,stride,c", [(13, 3, 1), (16, 4, 2), (9, 9, 3)])
def test_fixed_mask_follows_the_papers_definition(T, stride, c):
    """Child et al. 2019, fixed pattern: A(1) = {j : floor(j / l) = floor(i / l)},
    A(2) = {j : j mod l in {l - c, ..., l - 1}}, here with the causal mask."""
    mask = fixed_mask(T, stride, c)
    for q in range(T):
        for k in range(T):
            expected = k <= q and (k // stride == q // stride or k % stride in range(stride - c, stride))
            assert bool(mask[q, k]) == expected


@pytest.mark.parametrize("pattern", ["strided", "fixed"])
def test_child_patterns_match_sdpa(pattern):
    T = 24
    attend = strided_mask(T, 4) if pattern == "strided" else fixed_mask(T, 4, c=2)
    q, k, v = qkv(5, 2, 2, T, T, 3)
    for block in (2, 4, 8):
        ours = block_sparse_attention(q, k, v, attend=attend, block=block)
        sb.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=attend))


def test_invalid_shapes_raise():
    q, k, v = qkv(2, 1, 1, 6, 6, 2)
    with pytest.raises(ValueError, match="multiples"):
        block_sparse_attention(q, k, v, attend=torch.ones(6, 6, dtype=torch.bool), block=4)
    with pytest.raises(ValueError, match="shape"):
        block_sparse_attention(q, k, v, attend=torch.ones(6, 3, dtype=torch.bool), block=3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_finite_and_close(dtype):
    layout = bigbird_layout(6, window=1, num_global=1, num_random=1, seed=0)
    attend = layout_to_mask(layout, 4)
    q, k, v = qkv(3, 1, 2, 24, 24, 16, torch.float32)
    low = block_sparse_attention(q.to(dtype), k.to(dtype), v.to(dtype), attend=attend, block=4)
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.float(), F.scaled_dot_product_attention(q, k, v, attn_mask=attend), dtype=dtype)


def test_float16_scores_past_its_range_stay_finite_as_in_sdpa():
    """The page: q = k = 100 with d_k = 64 gives scaled scores of 80,000, past float16's 65,504;
    computed in float16 they are inf and the rows NaN, so the code computes them in float32, as
    SDPA does on the CPU, and returns float16."""
    attend = layout_to_mask(bigbird_layout(2, window=1, num_global=0, num_random=0, seed=0), 4)
    q = k = torch.full((1, 1, 8, 64), 100.0, dtype=torch.float16)
    v = torch.randn(1, 1, 8, 64).half()
    scaled_half = (q * 64 ** -0.5) @ k.transpose(-2, -1)
    assert scaled_half.isinf().all()  # what a float16 product gives
    out = block_sparse_attention(q, k, v, attend=attend, block=4)
    assert out.dtype == torch.float16 and out.isfinite().all()
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    assert sdpa.isfinite().all()
    sb.assert_close(out.float(), sdpa.float(), dtype=torch.float16)


def test_gradcheck_float64():
    attend = layout_to_mask(bigbird_layout(3, window=0, num_global=1, num_random=1, seed=1), 2)
    q, k, v = (t.requires_grad_() for t in qkv(4, 1, 1, 6, 6, 2))
    assert torch.autograd.gradcheck(lambda q, k, v: block_sparse_attention(q, k, v, attend=attend, block=2), (q, k, v))


def test_every_tensor_follows_the_inputs_device():
    q, k, v = qkv(61, 1, 2, 8, 8, 4, dtype=torch.float32)
    attend = fixed_mask(8, 4)
    expected = block_sparse_attention(q, k, v, attend=attend, block=2)
    with sb.stray_tensors_on_meta():
        out = block_sparse_attention(q, k, v, attend=attend, block=2)
    sb.assert_same_device_and_values(out, expected)
    for mask in (strided_mask(8, 3, device="meta"),
                 fixed_mask(8, 4, device="meta"),
                 bigbird_layout(6, num_random=1, device="meta")):
        assert mask.device.type == "meta"
    assert torch.equal(bigbird_layout(6, num_random=1, device="cpu"),
                       bigbird_layout(6, num_random=1))
