"""snippets/paged_attention.py: a block table equals a contiguous cache."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.paged_attention as mod
from snippets.paged_attention import BlockPool, PagedSequence, paged_attention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "sequence A: block table [0, 1, 3], filled [4, 4, 1]",
        "sequence B: block table [2, 4], filled [4, 1]",
        "sequence C: block table [2, 4], filled [4, 2]",
        "free blocks: [5, 6, 7]",
        "gathered K/V equal the contiguous ones: True",
        "paged attention equals SDPA on the contiguous K/V: True",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)
F64 = torch.float64


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def check_pool_invariants(pool, seqs):
    size = pool.block_size
    owned = [b for s in seqs for b in s.block_table]
    assert len(owned) == len(set(owned))  # no block has two owners
    assert sorted(owned + pool.free) == list(range(pool.k.size(0)))
    for s in seqs:
        assert len(s.block_table) == -(-s.length // size)  # ceil: on demand
        assert len(s.block_table) * size - s.length < size  # waste < B
        assert sum(s.filled()) == s.length


@PROPERTY_SETTINGS
@given(
    block_size=st.integers(1, 5),
    kv_heads=st.integers(1, 2),
    group=st.integers(1, 2),
    num_seqs=st.integers(1, 4),
    ops=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=1,
        max_size=12,
    ),
    seed=st.integers(0, 2**16),
)
def test_property_interleaved_sequences_equal_contiguous_caches(
    block_size, kv_heads, group, num_seqs, ops, seed
):
    gen = torch.Generator().manual_seed(seed)
    pool = BlockPool(40, block_size, kv_heads, 3, dtype=F64)
    seqs = [PagedSequence(pool) for _ in range(num_seqs)]
    plain = [torch.zeros(2, 0, kv_heads, 3, dtype=F64) for _ in seqs]
    for which, tokens in ops:  # appends in interleaved order
        which %= num_seqs
        kv = torch.randn(2, tokens, kv_heads, 3, generator=gen, dtype=F64)
        seqs[which].append(kv[0], kv[1])
        plain[which] = torch.cat([plain[which], kv], dim=1)
        check_pool_invariants(pool, seqs)
    for seq, kv in zip(seqs, plain):
        k, v = seq.gather()
        assert torch.equal(k, kv[0]) and torch.equal(v, kv[1])  # copies
        if seq.length == 0:
            continue
        new = int(torch.randint(1, seq.length + 1, (), generator=gen))
        q = torch.randn(kv_heads * group, new, 3, generator=gen, dtype=F64)
        attend = torch.ones(new, seq.length, dtype=torch.bool)
        ref = F.scaled_dot_product_attention(
            q, kv[0].transpose(0, 1), kv[1].transpose(0, 1),
            attn_mask=attend.tril(seq.length - new), enable_gqa=True,
        )
        sb.assert_close(paged_attention(q, seq), ref)


def test_the_papers_block_table_example():
    # vLLM paper, Fig. 6: a 7-token prompt in blocks of 4, then decoding.
    pool = BlockPool(8, 4, 1, 2)
    seq = PagedSequence(pool)
    seq.append(torch.zeros(7, 1, 2), torch.zeros(7, 1, 2))
    assert seq.filled() == [4, 3]
    seq.append(torch.zeros(1, 1, 2), torch.zeros(1, 1, 2))
    assert seq.filled() == [4, 4]  # the free slot of block 1 is used
    seq.append(torch.zeros(1, 1, 2), torch.zeros(1, 1, 2))
    assert seq.filled() == [4, 4, 1] and len(seq.block_table) == 3


def test_freed_blocks_are_reused_without_stale_values():
    pool = BlockPool(3, 2, 1, 1, dtype=F64)
    a, b = PagedSequence(pool), PagedSequence(pool)
    a.append(torch.ones(4, 1, 1, dtype=F64), torch.ones(4, 1, 1, dtype=F64))
    b.append(torch.full((1, 1, 1), 2.0, dtype=F64),
             torch.full((1, 1, 1), 2.0, dtype=F64))
    assert a.block_table == [0, 1] and b.block_table == [2] and not pool.free
    a.free()
    assert pool.free == [0, 1] and a.length == 0 and a.gather()[0].numel() == 0
    c = PagedSequence(pool)
    c.append(torch.full((1, 1, 1), 3.0, dtype=F64),
             torch.full((1, 1, 1), 3.0, dtype=F64))
    assert c.block_table == [0]
    k, _ = c.gather()  # slot 1 of block 0 still holds A's 1.0: never read
    assert k.flatten().tolist() == [3.0] and pool.k[0, 1].item() == 1.0
    assert b.gather()[0].flatten().tolist() == [2.0]


def test_running_out_of_blocks_changes_nothing():
    pool = BlockPool(2, 2, 1, 1)
    seq = PagedSequence(pool)
    seq.append(torch.zeros(3, 1, 1), torch.zeros(3, 1, 1))
    with pytest.raises(RuntimeError, match="KV blocks"):
        seq.append(torch.zeros(2, 1, 1), torch.zeros(2, 1, 1))
    assert seq.length == 3 and seq.block_table == [0, 1] and pool.free == []


def test_arguments_are_validated():
    pool = BlockPool(2, 2, 2, 3)
    seq = PagedSequence(pool)
    with pytest.raises(ValueError):
        seq.append(torch.zeros(1, 2, 3), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError):
        seq.append(torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))  # 1 KV head
    with pytest.raises(ValueError):
        BlockPool(0, 4, 1, 1)
    with pytest.raises(TypeError):
        BlockPool(1, 1, 1, 1, F64)  # dtype is keyword-only


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_pool(dtype):
    gen = torch.Generator().manual_seed(3)
    pool = BlockPool(4, 3, 2, 8, dtype=dtype)
    seq = PagedSequence(pool)
    k, v = torch.randn(2, 7, 2, 8, generator=gen).unbind(0)
    seq.append(k.to(dtype), v.to(dtype))
    q = torch.randn(4, 2, 8, generator=gen)
    out = paged_attention(q.to(dtype), seq)
    attend = torch.ones(2, 7, dtype=torch.bool).tril(5)
    ref = F.scaled_dot_product_attention(
        q, k.transpose(0, 1), v.transpose(0, 1), attn_mask=attend,
        enable_gqa=True,
    )
    assert out.dtype == dtype and out.isfinite().all()
    sb.assert_close(out.float(), ref, dtype=dtype)


def test_every_tensor_follows_the_pools_device():
    """The pool is built on an explicit device; appending, gathering and
    attending make nothing on the default device (here 'meta')."""
    gen = torch.Generator().manual_seed(41)
    k, v = torch.randn(2, 7, 2, 4, generator=gen).unbind(0)
    q = torch.randn(4, 2, 4, generator=gen)
    results = []
    for stray in (False, True):
        with sb.stray_tensors_on_meta() if stray else torch.device("cpu"):
            pool = BlockPool(5, 3, 2, 4, device="cpu")
            seq = PagedSequence(pool)
            seq.append(k[:5], v[:5])
            seq.append(k[5:], v[5:])
            results.append(paged_attention(q, seq))
    sb.assert_same_device_and_values(results[1], results[0])
    assert BlockPool(2, 2, 1, 1, device="meta").k.device.type == "meta"


def test_releasing_a_block_twice_is_refused():
    pool = BlockPool(4, 2, 1, 1)
    seq = PagedSequence(pool)
    seq.append(torch.zeros(3, 1, 1), torch.zeros(3, 1, 1))
    table = list(seq.block_table)
    seq.free()
    with pytest.raises(ValueError, match="not all allocated"):
        pool.release(table)  # already back in the pool
    with pytest.raises(ValueError, match="not all allocated"):
        pool.release([7])  # not a block of this pool
    taken = pool.allocate(2)
    with pytest.raises(ValueError, match="not all allocated"):
        pool.release([taken[0], taken[0]])
    assert pool.free == [2, 3]  # nothing changed by the refused calls
