"""Claims about context parallelism in torch 2.13.0 (torch.distributed.tensor.experimental).

Nothing here starts a process group: the claims are about the API, its documented behaviour and
its defaults, which can be read without several devices.
"""

import inspect

import pytest
import torch
import torch.distributed.tensor.experimental as experimental
from torch.distributed.tensor.experimental import _attention

from tests.claims import claim


@claim("context-parallel-api")
def test_context_parallel_is_an_experimental_context_manager_that_patches_sdpa():
    cp = experimental.context_parallel
    params = inspect.signature(cp).parameters
    assert list(params) == ["mesh", "buffers", "buffer_seq_dims", "no_restore_buffers"]
    assert all(params[name].kind is inspect.Parameter.KEYWORD_ONLY
               for name in ("buffers", "buffer_seq_dims", "no_restore_buffers"))
    doc = " ".join(cp.__doc__.split())
    assert "is an experimental API to enable context parallelism (CP)" in doc
    assert "patch the SDPA (``torch.nn.functional.scaled_dot_product_attention``)" in doc
    assert "shard ``buffers`` along the sequence dimension" in doc
    assert inspect.isgeneratorfunction(inspect.unwrap(cp))  # a @contextmanager


@claim("context-parallel-rotate-methods")
def test_kv_shards_are_all_gathered_by_default_or_rotated_all_to_all():
    options = _attention._cp_options
    before = options.rotate_method
    try:
        assert before == _attention._RotateMethod.ALL_GATHER  # the default
        assert options.enable_load_balance is True
        _attention.set_rotate_method("alltoall")
        assert options.rotate_method == _attention._RotateMethod.ALL_TO_ALL
        _attention.set_rotate_method("allgather")  # accepted: back to the default
        assert options.rotate_method == _attention._RotateMethod.ALL_GATHER
        for name in ("ring", "all_to_all", "AllGather", "no-such-method"):
            with pytest.raises(NotImplementedError, match=f"does not support using {name}"):
                _attention.set_rotate_method(name)
            assert options.rotate_method == _attention._RotateMethod.ALL_GATHER
    finally:
        options.rotate_method = before


@claim("context-parallel-allgather-keeps-all")
def test_the_all_gather_rotater_gathers_every_shard_once_and_keeps_them_all():
    """The default rotater's code path, on a fake process group of 4 ranks (no devices): one
    all-gather for the whole ring, and the gathered keys of all 4 shards held to the last step."""
    from torch.distributed.tensor.experimental._context_parallel import _attention as cp
    from torch.testing._internal.distributed.fake_pg import FakeStore

    assert not torch.distributed.is_initialized()
    torch.distributed.init_process_group("fake", store=FakeStore(), rank=1, world_size=4)
    try:
        group = torch.distributed.group.WORLD
        rotater = cp._create_rotater(group, seq_dim=2)
        assert isinstance(rotater, cp._AllGatherRotater)  # the default rotate method
        calls = []
        gather = cp.ft_c.all_gather_single

        def counted(tensor, *args, **kwargs):
            calls.append(tuple(tensor.shape))
            return gather(tensor, *args, **kwargs)

        cp.ft_c.all_gather_single = counted
        try:
            shard = torch.randn(2, 3, 5, 8)  # (B, heads, T/N, d_k)
            for _ in range(3):  # the ring's N - 1 = 3 exchanges
                rotater.exchange_buffers(shard)
                assert rotater.next_buffer().shape == shard.shape
        finally:
            cp.ft_c.all_gather_single = gather
        assert calls == [(2, 3, 5, 8)]  # one collective for the whole ring
        held = cp._maybe_wait(rotater._aggregated_buffer)
        assert held.shape == (4 * 2, 3, 5, 8)  # all 4 shards, kept after the last step
    finally:
        torch.distributed.destroy_process_group()


@claim("context-parallel-head-tail-float32")
def test_causal_load_balance_pairs_head_and_tail_chunks_and_merges_in_float32():
    """By default a sequence of a multiple of 2N positions is cut into 2N chunks and device r
    gets chunk r and chunk 2N - 1 - r; the ring's partial results are merged in float32 by
    their log-sum-exp, then cast back."""
    from torch.distributed.tensor.experimental._context_parallel import _attention as cp
    from torch.distributed.tensor.experimental._context_parallel import _load_balancer as lb

    balancer = lb._create_default_load_balancer(8, 2, "cpu")
    assert isinstance(balancer, lb._HeadTailLoadBalancer)
    assert balancer._generate_indices().tolist() == [[0, 1, 6, 7, 2, 3, 4, 5]]
    three = lb._create_default_load_balancer(12, 3, "cpu")._generate_indices()
    assert three.view(3, 4).tolist() == [[0, 1, 10, 11], [2, 3, 8, 9], [4, 5, 6, 7]]
    assert lb._create_default_load_balancer(10, 4, "cpu") is None  # 10 is not a multiple of 8

    gen = torch.Generator().manual_seed(0)
    outs = torch.randn(2, 1, 2, 5, 4, generator=gen).half()  # two partial outputs
    lses = torch.randn(2, 1, 2, 5, generator=gen).half()
    assert cp._cp_options.convert_to_f32 is True  # the default the ring's merger is built with
    merger = cp._SDPAMerger(cp._cp_options.convert_to_f32, seq_dim=2)
    for out, lse in zip(outs, lses):
        merger.step(out, lse, partial=False)
    assert merger._out.dtype == torch.float32 and merger._lse.dtype == torch.float32
    out, lse = merger.results()
    assert out.dtype == torch.float16 and lse.dtype == torch.float16
    total = torch.logsumexp(lses.double(), dim=0)
    expected = (torch.exp(lses.double() - total)[..., None] * outs.double()).sum(0)
    assert torch.allclose(out.double(), expected, atol=2e-3)
    assert torch.allclose(lse.double(), total, atol=2e-3)
