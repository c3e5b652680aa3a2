"""Claims about context parallelism in torch 2.13.0 (torch.distributed.tensor.experimental).

Nothing here starts a process group: the claims are about the API, its documented behaviour and
its defaults, which can be read without several devices.
"""

import inspect

import pytest
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
        with pytest.raises(NotImplementedError, match="does not support using ring"):
            _attention.set_rotate_method("ring")
    finally:
        options.rotate_method = before
