"""Claims about torch.nn.attention.flex_attention (torch 2.13.0, CPU).

Everything here runs the path a CPU gets without torch.compile: Dynamo's
eager backend around the unfused reference implementation. Shapes are
fixed (T = 16, blocks of 8) so that it compiles only a few times.
(flex-score-mod-scaled-score, which the flex-attention entry cites too, is
asserted in test_variants.py.)
"""

import inspect
import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import flex_attention as flex_module
from torch.nn.attention.flex_attention import (
    AuxRequest,
    BlockMask,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    or_masks,
)

from tests.claims import claim

T, TILE = 16, 8
WARNING = "flex_attention called without torch.compile"
pytestmark = pytest.mark.filterwarnings(f"ignore:{WARNING}")


def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def qkv(seed=0, batch=1, heads=2, d_k=8, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(3, batch, heads, T, d_k, generator=gen,
                       dtype=dtype).unbind(0)


@pytest.fixture(scope="module")
def causal_blocks():
    return create_block_mask(causal, None, None, T, T, device="cpu",
                             BLOCK_SIZE=TILE)


def close(a, b):
    return torch.allclose(a.double(), b.double(), atol=1e-5)


@claim("flex-mask-mod-true-attends")
def test_mask_mod_true_means_may_attend(causal_blocks):
    q, k, v = qkv()
    dense = create_mask(causal, 1, 1, T, T, device="cpu")
    assert dense.dtype == torch.bool
    assert torch.equal(dense[0, 0], torch.ones(T, T, dtype=torch.bool).tril())
    out = flex_attention(q, k, v, block_mask=causal_blocks)
    assert close(out, F.scaled_dot_product_attention(q, k, v,
                                                     attn_mask=dense))


@claim("flex-fully-masked-row-zeros")
def test_a_query_with_no_key_gets_zeros():
    def none_for_query_0(b, h, q_idx, kv_idx):
        return (q_idx > 0) & (kv_idx <= q_idx)

    blocks = create_block_mask(none_for_query_0, None, None, T, T,
                               device="cpu", BLOCK_SIZE=TILE)
    q, k, v = qkv()
    out, aux = flex_attention(q, k, v, block_mask=blocks,
                              return_aux=AuxRequest(lse=True))
    assert not out.isnan().any()
    assert (out[..., 0, :] == 0).all()
    assert torch.isneginf(aux.lse[..., 0]).all()  # log of an empty sum
    assert aux.lse[..., 1:].isfinite().all()


@claim("flex-eager-warns")
def test_without_compile_it_warns_once_that_it_is_unfused():
    q, k, v = qkv()
    # The warning is shown once per process; forget that it was shown.
    flex_module._WARNINGS_SHOWN.discard("flex_attention_performance")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flex_attention(q, k, v)
        flex_attention(q, k, v)
    shown = [w for w in caught if str(w.message).startswith(WARNING)]
    assert len(shown) == 1 and shown[0].category is UserWarning
    assert "unfused implementation that materializes the full scores " \
           "matrix" in str(shown[0].message)


@claim("flex-cpu-no-backward")
def test_inputs_that_require_grad_are_refused_on_cpu():
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match="backward on CPU"):
        flex_attention(q.requires_grad_(), k, v)


@claim("flex-eager-ignores-block-table")
def test_eager_path_applies_mask_mod_to_every_entry():
    q, k, v = qkv()
    rows = T // TILE
    # A block table that marks every block empty, with a causal mask_mod:
    # the eager path still computes every entry and masks it by mask_mod.
    empty = BlockMask.from_kv_blocks(
        torch.zeros(1, 1, rows, dtype=torch.int32),
        torch.zeros(1, 1, rows, rows, dtype=torch.int32),
        BLOCK_SIZE=TILE, mask_mod=causal)
    assert empty.sparsity() == 100.0
    out = flex_attention(q, k, v, block_mask=empty)
    assert close(out, F.scaled_dot_product_attention(q, k, v,
                                                     is_causal=True))


@claim("flex-default-block-size")
def test_default_blocks_are_128_by_128():
    default = inspect.signature(create_block_mask).parameters["BLOCK_SIZE"]
    assert default.default == 128
    blocks = create_block_mask(causal, None, None, 256, 256, device="cpu")
    assert blocks.BLOCK_SIZE == (128, 128)


@claim("flex-full-blocks-kept-apart")
def test_full_blocks_are_stored_apart_from_partial_ones(causal_blocks):
    # Causal, 16 x 16 in blocks of 8: the two diagonal blocks are partial,
    # the one below them is full, the one above is empty.
    assert causal_blocks.kv_num_blocks.tolist() == [[[1, 1]]]
    assert causal_blocks.kv_indices[0, 0, :, 0].tolist() == [0, 1]
    assert causal_blocks.full_kv_num_blocks.tolist() == [[[0, 1]]]
    assert causal_blocks.full_kv_indices[0, 0, 1, 0].item() == 0
    merged = create_block_mask(causal, None, None, T, T, device="cpu",
                               BLOCK_SIZE=TILE, separate_full_blocks=False)
    assert merged.full_kv_num_blocks is None
    assert merged.kv_num_blocks.tolist() == [[[1, 2]]]


@claim("flex-sparsity-percent")
def test_sparsity_is_the_percentage_of_blocks_skipped():
    blocks = create_block_mask(causal, None, None, 32, 32, device="cpu",
                               BLOCK_SIZE=TILE)  # 6 of 4 x 4 blocks empty
    assert blocks.sparsity() == pytest.approx(100 * 6 / 16)


@claim("flex-block-mask-size-must-match")
def test_a_block_mask_for_other_lengths_raises(causal_blocks):
    for length in (2 * T, T // 2):  # longer and shorter than it was built for
        q, k, v = (torch.randn(1, 2, length, 8) for _ in range(3))
        with pytest.raises(ValueError, match="block_mask was created for"):
            flex_attention(q, k, v, block_mask=causal_blocks)


@claim("flex-none-broadcasts")
def test_none_for_batch_and_heads_serves_them_all(causal_blocks):
    assert causal_blocks.shape == (1, 1, T, T)
    q, k, v = qkv(batch=3, heads=4)
    out = flex_attention(q, k, v, block_mask=causal_blocks)
    assert close(out, F.scaled_dot_product_attention(q, k, v,
                                                     is_causal=True))


@claim("flex-and-or-masks")
def test_and_masks_and_or_masks_combine_elementwise():
    def window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < 4

    def prefix(b, h, q_idx, kv_idx):
        return kv_idx < 5

    dense = {name: create_mask(fn, 1, 1, T, T, device="cpu")
             for name, fn in [("causal", causal), ("window", window),
                              ("prefix", prefix)]}
    both = create_mask(and_masks(causal, window), 1, 1, T, T, device="cpu")
    either = create_mask(or_masks(causal, prefix), 1, 1, T, T, device="cpu")
    assert torch.equal(both, dense["causal"] & dense["window"])
    assert torch.equal(either, dense["causal"] | dense["prefix"])


@claim("flex-eager-half-scores-float32")
def test_half_inputs_get_float32_scores(causal_blocks):
    # q.k = 64 * 100 * 100 = 640000, and even the scaled score, 640000 / 8 =
    # 80000, is past float16's 65504: scores computed in float16 would be inf
    # whether q is scaled first or not (and the output NaN).
    q = torch.full((1, 1, T, 64), 100.0)
    v = torch.randn(1, 1, T, 64, generator=torch.Generator().manual_seed(0))
    half = q.half()
    assert (half @ half.transpose(-2, -1)).isinf().all()
    assert ((half * 64**-0.5) @ half.transpose(-2, -1)).isinf().all()
    ref = F.scaled_dot_product_attention(q, q, v, is_causal=True)
    for dtype in (torch.float16, torch.bfloat16):
        out = flex_attention(q.to(dtype), q.to(dtype), v.to(dtype),
                             block_mask=causal_blocks)
        assert out.dtype == dtype and out.isfinite().all()
        assert torch.allclose(out.float(), ref, atol=2e-2, rtol=2e-2)
    for seed in (0, 1, 2):
        bfloat16_scores_are_float32_by_precision(causal_blocks, seed)


def bfloat16_scores_are_float32_by_precision(causal_blocks, seed):
    """bfloat16 cannot overflow at these sizes, so its half of the claim is
    tested by precision: with random q, k (times 4) in bfloat16, the eager
    output is far closer to attention with float32 scores than to the same
    attention with the scores rounded to bfloat16 (measured: 3 to 8 times)."""
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, T, 64, generator=gen) * s
               for s in (4.0, 4.0, 1.0))
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    out = flex_attention(q, k, v, block_mask=causal_blocks).float()
    allowed = torch.ones(T, T, dtype=torch.bool).tril()

    def attention(scores):  # softmax in float32, output rounded as flex's
        weights = scores.masked_fill(~allowed, -math.inf).softmax(-1)
        return (weights @ v.float()).bfloat16().float()

    float32_scores = (q.float() @ k.float().transpose(-2, -1)) / 8
    bfloat16_scores = ((q @ k.transpose(-2, -1)) / 8).float()
    near = (out - attention(float32_scores)).abs().mean()
    far = (out - attention(bfloat16_scores)).abs().mean()
    assert near < far / 2


@claim("flex-prototype")
def test_the_docstring_still_calls_it_a_prototype():
    assert "is a prototype feature in PyTorch" in flex_attention.__doc__


@claim("flex-doc-full-blocks-skip-mask-mod")
def test_the_blockmask_documentation_says_full_blocks_skip_mask_mod():
    # What the compiled kernels do, as 2.13's documentation states it (the
    # eager path that this suite runs applies mask_mod everywhere).
    doc = " ".join(BlockMask.__doc__.split())
    assert "(full_kv_num_blocks, full_kv_indices)" in doc
    assert "we can skip applying mask_mod to these blocks" in doc


@claim("flex-mask-mod-no-python-if")
def test_a_mask_mod_with_a_python_if_on_the_indices_is_refused():
    """The indices reach a mask_mod (under vmap) and a score_mod (traced by Dynamo, even without
    torch.compile) as tensors: a Python `if` on them raises, where the same rule written with
    tensor operators builds the mask."""
    def with_if(b, h, q_idx, kv_idx):
        if q_idx >= kv_idx:
            return True
        return False

    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        create_block_mask(with_if, None, None, T, T, device="cpu", BLOCK_SIZE=8)
    assert create_block_mask(causal, None, None, T, T, device="cpu", BLOCK_SIZE=8) is not None

    def score_with_if(score, b, h, q_idx, kv_idx):
        if q_idx >= kv_idx:
            return score
        return score - 1.0

    q = torch.randn(1, 1, T, 8)
    with pytest.raises(RuntimeError, match="(?i)data-dependent"):
        flex_attention(q, q, q, score_mod=score_with_if)
