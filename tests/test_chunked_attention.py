"""snippets/chunked_attention.py against SDPA, FlexAttention (a block mask built once, tiny
shapes: flex_attention runs eagerly on the CPU), a loop over chunks, Meta's Llama 4 mask and
Hugging Face's chunked_overlay written as they are, and a decoding step with a chunk-sized cache."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import snippets.chunked_attention as mod
from snippets.chunked_attention import chunked_attention_by_loop, chunked_mask, chunked_mask_mod
from snippets.sliding_window_attention import sliding_window_mask
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "chunked mask, T = 8, C = 3:",
        "   [1, 0, 0, 0, 0, 0, 0, 0]",
        "   [1, 1, 0, 0, 0, 0, 0, 0]",
        "   [1, 1, 1, 0, 0, 0, 0, 0]",
        "   [0, 0, 0, 1, 0, 0, 0, 0]",
        "   [0, 0, 0, 1, 1, 0, 0, 0]",
        "   [0, 0, 0, 1, 1, 1, 0, 0]",
        "   [0, 0, 0, 0, 0, 0, 1, 0]",
        "   [0, 0, 0, 0, 0, 0, 1, 1]",
        "keys per query, chunks of 3:   [1, 2, 3, 1, 2, 3, 1, 2]",
        "keys per query, window of 3:   [1, 2, 3, 3, 3, 3, 3, 3]",
        "SDPA with the mask equals the loop over chunks: True",
        "mask_mod gives the same mask: True",
    ],
    "reach": [
        "1 layer(s): chunks reach back to position 8 | window to 8",
        "2 layer(s): chunks reach back to position 8 | window to 5",
        "3 layer(s): chunks reach back to position 8 | window to 2",
        "keys a chunked layer needs at decoding steps 0..11: "
        "[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]",
    ],
}
F64 = torch.float64
FLEX_WARNING = "flex_attention called without torch.compile"

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def random(*shape, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


def meta_chunked_mask(seq_len, attention_chunk_size):
    """create_chunked_attention_mask of meta-llama/llama-models, models/llama4/model.py."""
    block_pos = torch.abs(
        (torch.arange(seq_len).unsqueeze(0) // attention_chunk_size)
        - (torch.arange(seq_len).unsqueeze(1) // attention_chunk_size)
    )
    token_pos = torch.arange(seq_len).unsqueeze(0) - torch.arange(seq_len).unsqueeze(1)
    return (block_pos == 0) & (token_pos <= 0)


def hf_chunked_causal(chunk_size, left_padding):
    """chunked_overlay and causal_mask_function of Hugging Face's masking_utils.py, and'ed."""
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        same = (kv_idx - left_padding[batch_idx]) // chunk_size == (
            q_idx - left_padding[batch_idx]) // chunk_size
        return same & (kv_idx <= q_idx)
    return inner_mask


@pytest.mark.parametrize("T,C", [(1, 1), (8, 3), (16, 4), (13, 5), (6, 8), (20, 1)])
def test_mask_is_metas_and_hugging_faces(T, C):
    mask = chunked_mask(T, chunk_size=C)
    assert torch.equal(mask, meta_chunked_mask(T, C))
    pos = torch.arange(T)
    hf = hf_chunked_causal(C, torch.zeros(1, dtype=torch.long))(0, 0, pos[:, None], pos[None, :])
    assert torch.equal(mask, hf)
    assert torch.equal(chunked_mask_mod(C)(0, 0, pos[:, None], pos[None, :]), mask)


@pytest.mark.parametrize("pad", [1, 2, 4])
def test_with_left_padding_chunks_start_at_the_first_real_token(pad):
    """Hugging Face's offset: with `pad` padding tokens in front, the chunks count from the
    first real token, so the real tokens' block of the mask is `chunked_mask` of the unpadded
    row (what the padding sees is the padding mask's business)."""
    T, C = 9, 3
    pos = torch.arange(pad + T)
    hf = hf_chunked_causal(C, torch.tensor([pad]))(0, 0, pos[:, None], pos[None, :])
    assert torch.equal(hf[pad:, pad:], chunked_mask(T, chunk_size=C))
    assert not torch.equal(hf[pad:, pad:], chunked_mask(pad + T, chunk_size=C)[pad:, pad:])


def test_mask_written_out_by_hand():
    expected = torch.tensor([[1, 0, 0, 0, 0],
                             [1, 1, 0, 0, 0],
                             [0, 0, 1, 0, 0],
                             [0, 0, 1, 1, 0],
                             [0, 0, 0, 0, 1]], dtype=torch.bool)
    assert torch.equal(chunked_mask(5, chunk_size=2), expected)


def test_limits_causal_and_diagonal_and_window_relation():
    causal = torch.ones(9, 9, dtype=torch.bool).tril()
    assert torch.equal(chunked_mask(9, chunk_size=9), causal)
    assert torch.equal(chunked_mask(9, chunk_size=100), causal)
    assert torch.equal(chunked_mask(9, chunk_size=1), torch.eye(9, dtype=torch.bool))
    # every chunked key is inside the window of the same size; never the other way round
    for C in (2, 3, 4):
        chunks, window = chunked_mask(12, chunk_size=C), sliding_window_mask(12, window=C)
        assert not (chunks & ~window).any() and (window & ~chunks).any()
        # the first query of each chunk sees itself only; the window sees C keys there
        firsts = torch.arange(C, 12, C)
        assert (chunks[firsts].sum(-1) == 1).all() and (window[firsts].sum(-1) == C).all()


@pytest.mark.parametrize("T,C", [(8, 3), (16, 4), (13, 5), (7, 7)])
@pytest.mark.parametrize("dtype", [F64, torch.float32])
def test_sdpa_with_the_mask_equals_the_loop_and_attention_by_hand(T, C, dtype):
    q, k, v = random(3, 2, 3, T, 8, seed=T + C, dtype=dtype)
    mask = chunked_mask(T, chunk_size=C)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    sb.assert_close(out, chunked_attention_by_loop(q, k, v, chunk_size=C))
    scores = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(~mask, float("-inf"))
    sb.assert_close(out, torch.softmax(scores, dim=-1) @ v)


@pytest.fixture(scope="module")
def flex_case():
    """T = 16, chunks of 4, blocks of 8: one block mask, built once for the module."""
    from torch.nn.attention.flex_attention import create_block_mask
    blocks = create_block_mask(chunked_mask_mod(4), None, None, 16, 16, device="cpu",
                               BLOCK_SIZE=8)
    return blocks


def test_flex_attention_with_the_mask_mod_equals_sdpa_and_the_loop(flex_case):
    from torch.nn.attention.flex_attention import flex_attention
    q, k, v = random(3, 1, 2, 16, 8, seed=30, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=FLEX_WARNING)
        out = flex_attention(q, k, v, block_mask=flex_case)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=chunked_mask(16, chunk_size=4))
    sb.assert_close(out, sdpa)
    sb.assert_close(out, chunked_attention_by_loop(q, k, v, chunk_size=4))
    # the block table: of the 2 x 2 blocks of 8 x 8, both off the diagonal are empty; a causal
    # mask would also compute the lower-left one
    dense = flex_case.to_dense()[0, 0]
    assert dense.tolist() == [[1, 0], [0, 1]]


def test_decoding_needs_only_the_current_chunk():
    """A decoding step at position t with the keys of its own chunk only, from
    C * (t // C) to t, equals row t of the full chunked pass."""
    T, C = 11, 4
    q, k, v = random(3, 1, 2, T, 8, seed=40)
    full = F.scaled_dot_product_attention(q, k, v, attn_mask=chunked_mask(T, chunk_size=C))
    for t in range(T):
        start = C * (t // C)
        step = F.scaled_dot_product_attention(q[..., t:t + 1, :], k[..., start:t + 1, :],
                                              v[..., start:t + 1, :])
        sb.assert_close(step, full[..., t:t + 1, :])
        lower_right = chunked_mask(1, t + 1, chunk_size=C)
        assert lower_right.sum().item() == t - start + 1
        assert torch.equal(lower_right[0], chunked_mask(t + 1, chunk_size=C)[-1])


def test_stacked_chunked_layers_never_reach_the_previous_chunk():
    for T, C in [(12, 4), (20, 5)]:
        chunks = chunked_mask(T, chunk_size=C).int()
        for n in range(1, 6):
            reach = torch.linalg.matrix_power(chunks, n)
            assert torch.equal(reach > 0, chunks > 0)  # block-diagonal, whatever n


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_matches_float64(dtype):
    q, k, v = random(3, 2, 2, 24, 16, seed=50)
    mask = chunked_mask(24, chunk_size=8)
    exact = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    low = F.scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), attn_mask=mask)
    loop = chunked_attention_by_loop(q.to(dtype), k.to(dtype), v.to(dtype), chunk_size=8)
    assert low.dtype == loop.dtype == dtype
    sb.assert_close(low.double(), exact, dtype=dtype)
    sb.assert_close(loop.double(), exact, dtype=dtype)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="chunk_size"):
        chunked_mask(4, chunk_size=0)
    with pytest.raises(ValueError, match="num_queries"):
        chunked_mask(5, 4, chunk_size=2)


@pytest.mark.parametrize("length,chunk", [(40, 8), (33, 8), (8192 * 3 + 5, 8192)])
def test_a_chunked_layer_never_sees_a_distance_of_chunk_size_or_more(length, chunk):
    """The page: in a chunked RoPE layer every query is less than C positions from the keys it
    sees (at most C - 1, 8191 for Llama 4), whatever the length; a causal mask reaches length - 1."""
    allowed = chunked_mask(length, chunk_size=chunk) if length < 1000 else None
    if allowed is not None:
        q_idx, k_idx = allowed.nonzero(as_tuple=True)
        assert (q_idx - k_idx).max().item() == chunk - 1
    else:  # too big to build: the same rule through the mask_mod, on the last chunk's queries
        q_idx = torch.arange(length - 10, length)[:, None]
        k_idx = torch.arange(length)[None, :]
        seen = chunked_mask_mod(chunk)(0, 0, q_idx, k_idx)
        assert ((q_idx - k_idx)[seen]).max().item() <= chunk - 1
        assert ((q_idx - k_idx)[seen]).min().item() >= 0
