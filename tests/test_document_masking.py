"""snippets/document_masking.py: a packed row equals its documents alone."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.document_masking as mod
from snippets.document_masking import (
    document_ids,
    document_mask,
    document_mask_mod,
    document_positions,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "document ids: [0, 0, 0, 1, 1, 2, 2, 2, 2, -1, -1, -1]",
        "positions:    [0, 1, 2, 0, 1, 0, 1, 2, 3, 0, 1, 2]",
        "mask (1 = may attend):",
        "tensor([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],",
        "        [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],",
        "        [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],",
        "        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],",
        "        [0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0],",
        "        [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],",
        "        [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],",
        "        [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0],",
        "        [0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0],",
        "        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0],",
        "        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0],",
        "        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]], dtype=torch.int32)",
        "each document equals running it alone: True",
        "with positions 0..11 instead: False",
        "with a plain causal mask instead: False",
        "mask_mod gives the same mask: True",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

lengths_strategy = st.lists(st.integers(1, 5), min_size=1, max_size=4)


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def block_diagonal(lengths, total, causal=True):
    """The mask built another way: one block per document and the pad."""
    blocks = [torch.ones(n, n, dtype=torch.bool) for n in lengths]
    if total > sum(lengths):
        blocks.append(torch.ones(total - sum(lengths), total - sum(lengths),
                                 dtype=torch.bool))
    if causal:
        blocks = [b.tril() for b in blocks]
    return torch.block_diag(*blocks)


def test_ids_and_positions():
    ids = document_ids([2, 1, 3], total_length=8)
    assert ids.tolist() == [0, 0, 1, 2, 2, 2, -1, -1]
    assert document_positions(ids).tolist() == [0, 1, 0, 0, 1, 2, 0, 1]
    assert document_ids([4], total_length=4).tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError):
        document_ids([3, 2], total_length=4)  # does not fit
    with pytest.raises(ValueError):
        document_ids([2, 0], total_length=4)  # an empty document
    with pytest.raises(TypeError):
        document_mask(ids, False)  # causal is keyword-only


@PROPERTY_SETTINGS
@given(lengths=lengths_strategy, pad=st.integers(0, 3), causal=st.booleans())
def test_property_mask_is_block_diagonal(lengths, pad, causal):
    total = sum(lengths) + pad
    ids = document_ids(lengths, total)
    mask = document_mask(ids, causal=causal)
    assert torch.equal(mask, block_diagonal(lengths, total, causal))
    assert mask.any(dim=-1).all()  # no query without a key, padding too
    expected = [i for n in lengths for i in range(n)] + list(range(pad))
    assert document_positions(ids).tolist() == expected


def test_batch_of_rows_packed_differently():
    rows = [([3, 2], 6), ([1, 1, 4], 6), ([6], 6)]
    ids = torch.stack([document_ids(lengths, t) for lengths, t in rows])
    mask = document_mask(ids)  # (B, T, T)
    positions = document_positions(ids)  # (B, T)
    for b, (lengths, total) in enumerate(rows):
        assert torch.equal(mask[b], block_diagonal(lengths, total))
        assert torch.equal(positions[b], document_positions(ids[b]))


@pytest.mark.parametrize("causal", [True, False])
def test_mask_mod_elementwise_and_under_vmap(causal):
    ids = torch.stack([document_ids([2, 3], 7), document_ids([1, 4, 2], 7)])
    mask = document_mask(ids, causal=causal)
    mask_mod = document_mask_mod(ids, causal=causal)
    for b in range(2):
        for q in range(7):
            for kv in range(7):
                expected = bool(mask[b, q, kv])
                assert bool(mask_mod(b, 0, q, kv)) == expected
    fn = mask_mod  # vmapped over (b, h, q_idx, kv_idx) like create_mask
    for dims in [(None, None, None, 0), (None, None, 0, None),
                 (None, 0, None, None), (0, None, None, None)]:
        fn = torch.vmap(fn, in_dims=dims)
    idx = torch.arange
    dense = fn(idx(2), idx(1), idx(7), idx(7))
    assert torch.equal(dense, mask[:, None])


class PositionalLayer(torch.nn.Module):
    """Multi-head self-attention on x plus learned absolute positions."""

    def __init__(self, d, heads, max_len):
        super().__init__()
        self.heads = heads
        self.positions = torch.nn.Embedding(max_len, d)
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x, positions, attend):  # x: (B, T, d)
        b, t, d = x.shape
        qkv = self.qkv(x + self.positions(positions))
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                   for z in qkv.chunk(3, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v,
                                             attn_mask=attend[:, None])
        return out.transpose(1, 2).reshape(b, t, d)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    rows=st.lists(st.tuples(lengths_strategy, st.integers(0, 3)),
                  min_size=1, max_size=3),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_packed_rows_equal_each_document_alone(rows, causal, seed):
    total = max(sum(lengths) + pad for lengths, pad in rows)
    ids = torch.stack([document_ids(lengths, total) for lengths, _ in rows])
    torch.manual_seed(seed)
    layer = PositionalLayer(4, 2, total).double()
    x = torch.randn(len(rows), total, 4, dtype=F64)
    packed = layer(x, document_positions(ids), document_mask(ids,
                                                             causal=causal))
    assert packed.isfinite().all()  # the padding tail too
    for b, (lengths, _) in enumerate(rows):
        start = 0
        for n in lengths:
            attend = torch.ones(1, n, n, dtype=torch.bool)
            alone = layer(x[b : b + 1, start : start + n],
                          torch.arange(n)[None],
                          attend.tril() if causal else attend)
            sb.assert_close(packed[b, start : start + n], alone[0])
            start += n


def test_restarting_positions_and_the_mask_are_both_needed():
    torch.manual_seed(1)
    ids = document_ids([3, 3], 6)[None]
    layer = PositionalLayer(4, 1, 6).double()
    x = torch.randn(1, 6, 4, dtype=F64)
    causal = torch.ones(1, 6, 6, dtype=torch.bool).tril()
    second = layer(x[:, 3:], torch.arange(3)[None], causal[:, :3, :3])
    right = layer(x, document_positions(ids), document_mask(ids))
    sb.assert_close(right[:, 3:], second)
    plain_positions = layer(x, torch.arange(6)[None], document_mask(ids))
    plain_mask = layer(x, document_positions(ids), causal)
    assert not torch.allclose(plain_positions[:, 3:], second)
    assert not torch.allclose(plain_mask[:, 3:], second)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_with_the_mask(dtype):
    gen = torch.Generator().manual_seed(2)
    ids = document_ids([4, 5], 12)
    q, k, v = torch.randn(3, 1, 2, 12, 8, generator=gen).unbind(0)
    attend = document_mask(ids)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    low = F.scaled_dot_product_attention(q.to(dtype), k.to(dtype),
                                         v.to(dtype), attn_mask=attend)
    assert low.isfinite().all()
    sb.assert_close(low.float(), ref, dtype=dtype)


def test_every_tensor_follows_the_inputs_device():
    lengths = torch.tensor([3, 1, 4])
    expected = document_ids(lengths, 10)
    with sb.stray_tensors_on_meta():
        ids = document_ids(lengths, 10)
        positions = document_positions(ids)
        mask = document_mask(ids[None])
    assert ids.device == lengths.device and torch.equal(ids, expected)
    assert torch.equal(positions, document_positions(expected))
    assert torch.equal(mask, document_mask(expected[None]))
