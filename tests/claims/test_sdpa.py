"""Claims about torch.nn.functional.scaled_dot_product_attention (torch 2.13.0, CPU)."""

import contextlib
import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right
from torch.utils._python_dispatch import TorchDispatchMode

from tests.claims import claim


def qkv(batch=2, heads=2, length=3, source=4, d_k=8, kv_heads=None, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, length, d_k, generator=gen)
    k = torch.randn(batch, kv_heads or heads, source, d_k, generator=gen)
    v = torch.randn(batch, kv_heads or heads, source, d_k, generator=gen)
    return q, k, v


def reference(q, k, v, mask=None, scale=None):
    """softmax(q k^T * scale + mask) v, written out in float64."""
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) * (scale or 1 / math.sqrt(q.size(-1)))
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v


def close(a, b):
    return torch.allclose(a.double(), b.double(), atol=1e-5)


@claim("sdpa-bool-mask-true-attends")
def test_boolean_mask_true_takes_part():
    q, k, v = qkv()
    attend = torch.tensor([True, True, False, False]).expand(3, 4)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    assert close(out, F.scaled_dot_product_attention(q, k[..., :2, :], v[..., :2, :]))


@claim("mha-sdpa-mask-swap-silent")
def test_a_padding_mask_passed_as_is_is_silently_inverted():
    q, k, v = qkv(batch=1)
    padding = torch.tensor([[False, False, False, True]])  # key_padding_mask style: True = pad
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=padding[:, None, None, :])
    # SDPA attended to the padded key ONLY.
    assert close(out, v[..., 3:, :].expand_as(out))


@claim("sdpa-mask-broadcasts")
def test_mask_broadcasts_from_two_dims_up():
    N, Hh, L, S = 2, 2, 3, 4
    q, k, v = qkv(N, Hh, L, S)
    gen = torch.Generator().manual_seed(1)
    full = torch.rand(N, Hh, L, S, generator=gen) < 0.7
    full[..., 0] = True
    for shape in [(L, S), (1, S), (N, 1, 1, S), (N, 1, L, S), (Hh, L, S), (1, Hh, 1, S)]:
        # a block of `full` with this shape: e.g. (1, S) is full[0, 0, :1, :]
        mask = full[(0,) * (4 - len(shape)) + tuple(slice(0, n) for n in shape)]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert close(out, reference(q, k, v, mask.expand(N, Hh, L, S)))
    # A 1-D (S,) mask broadcasts too, but the default CPU path for 4-D inputs refuses it;
    # the math backend takes it.
    mask = full[0, 0, 0]
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert close(out, reference(q, k, v, mask.expand(N, Hh, L, S)))


@claim("sdpa-is-causal-upper-left")
def test_is_causal_is_the_upper_left_triangle():
    for length, source in [(4, 4), (2, 5), (5, 3)]:
        q, k, v = qkv(length=length, source=source)
        upper_left = torch.ones(length, source, dtype=torch.bool).tril()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=upper_left))
    # A decode step, one query over 5 keys: the query sees key 0 only, so it gets value 0.
    q, k, v = qkv(length=1, source=5)
    assert close(F.scaled_dot_product_attention(q, k, v, is_causal=True), v[..., :1, :])



@claim("sdpa-causal-lower-right")
def test_causal_lower_right_is_the_lower_right_triangle():
    for length, source in [(4, 4), (2, 5)]:
        q, k, v = qkv(length=length, source=source)
        lower_right = torch.ones(length, source, dtype=torch.bool).tril(diagonal=source - length)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(length, source))
        assert close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=lower_right))
    # It is a bias object, not a boolean tensor: it does not combine with a padding mask.
    with pytest.raises(NotImplementedError):
        causal_lower_right(2, 5) & torch.ones(2, 5, dtype=torch.bool)



@claim("sdpa-mask-and-is-causal-backend")
def test_mask_and_is_causal_depends_on_the_backend():
    q, k, v = qkv(length=4, source=4)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[:, 1] = False  # drop key 1
    with sdpa_kernel(SDPBackend.MATH):
        with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    # The default CPU path for 4-D inputs of any float dtype and a 2-D or 4-D mask: no error,
    # and both masks apply.
    both = mask & torch.ones(4, 4, dtype=torch.bool).tril()
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        q, k, v = (t.to(dtype) for t in qkv(length=4, source=4))
        for shaped in (mask, mask[None, None], mask.expand(2, 2, 4, 4)):
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=shaped, is_causal=True)
            assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, attn_mask=both), atol=1e-6)
    # A 3-D mask, (h, L, S), sends the same call to the math backend, which raises.
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask.expand(2, 4, 4), is_causal=True)


def fully_masked_query():
    """Query 0 may attend no key."""
    attend = torch.ones(3, 4, dtype=torch.bool)
    attend[0] = False
    return attend


@claim("sdpa-fully-masked-row-zeros")
def test_fully_masked_row_gives_zeros():
    q, k, v = qkv()
    attend = fully_masked_query()
    minus_inf = torch.zeros(3, 4).masked_fill(~attend, float("-inf"))
    for mask in (attend, minus_inf):
        for backend in (None, SDPBackend.MATH):
            if backend is None:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            else:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            assert (out[..., 0, :] == 0).all()
            assert close(out[..., 1:, :], reference(q, k, v, attend)[..., 1:, :])


@claim("sdpa-finfo-min-row-uniform")
def test_finfo_min_mask_gives_the_uniform_average():
    q, k, v = qkv()
    attend = fully_masked_query()
    mask = torch.zeros(3, 4).masked_fill(~attend, torch.finfo(torch.float32).min)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert close(out[..., 0, :], v.mean(dim=-2))


@claim("sdpa-default-scale")
def test_default_scale_is_one_over_sqrt_d_k():
    q, k, v = qkv(d_k=16)
    out = F.scaled_dot_product_attention(q, k, v)
    assert close(out, reference(q, k, v, scale=1 / math.sqrt(16)))
    assert close(out, F.scaled_dot_product_attention(q, k, v, scale=0.25))
    assert not close(out, reference(q, k, v, scale=1.0))
    # The width of q, not of v: d_v = 4 or 32 with d_k = 16 still scales by 1/4, on the
    # default path (the math backend here, since d_v != d_k) and on the math backend.
    for d_v in (4, 32):
        v_other = torch.randn(2, 2, 4, d_v, generator=torch.Generator().manual_seed(d_v))
        for backend in (None, SDPBackend.MATH):
            with sdpa_kernel(backend) if backend else contextlib.nullcontext():
                out = F.scaled_dot_product_attention(q, k, v_other)
            assert close(out, reference(q, k, v_other, scale=1 / math.sqrt(16)))
            assert not close(out, reference(q, k, v_other, scale=1 / math.sqrt(d_v)))


@claim("sdpa-dropout-in-eval")
def test_dropout_p_applies_in_eval():
    class Attention(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    q, k, v = qkv()
    model = Attention().eval()
    torch.manual_seed(0)
    assert not torch.equal(model(q, k, v), model(q, k, v))
    assert not close(model(q, k, v), F.scaled_dot_product_attention(q, k, v))
    assert torch.equal(  # dropout_p=0.0: deterministic
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.0), F.scaled_dot_product_attention(q, k, v)
    )


@claim("sdpa-enable-gqa")
def test_enable_gqa_is_repeat_interleave():
    q, k, v = qkv(heads=6, kv_heads=2)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    interleaved = F.scaled_dot_product_attention(
        q, k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)
    )
    tiled = F.scaled_dot_product_attention(q, k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1))
    assert close(out, interleaved) and not close(out, tiled)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, k, v)


@claim("sdpa-enable-gqa-experimental")
def test_the_docstring_calls_enable_gqa_experimental_on_cuda_flash_and_math_only():
    """What PyTorch itself says of enable_gqa on the pinned version (the GPU side is untested
    here): an experimental feature, working only with the Flash and math kernels on CUDA."""
    doc = " ".join(F.scaled_dot_product_attention.__doc__.split())
    assert "Grouped Query Attention (GQA) is an experimental feature." in doc
    assert "It currently works only for Flash_attention and math kernel on CUDA tensor" in doc


class _Ops(TorchDispatchMode):
    """The aten operators a call dispatches to, with the shape of each result."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else None
        self.ops.append((str(func), shape))
        return out


@claim("sdpa-enable-gqa-no-copy-cpu")
def test_enable_gqa_reads_the_kv_heads_without_copying_on_the_cpu_default_path():
    """CPU, default path, (B, h, L, d_k) queries against G = h/3 cached key/value heads, at
    prefill and at one decoding step with a boolean mask: the only aten operator that touches
    K and V is the CPU flash kernel, which takes the (B, G, S, d_k) tensors as they are: no
    expand-and-clone, repeat or repeat_interleave, nothing allocated of K's size times h/G. The
    result equals repeat_interleave. Under sdpa_kernel(MATH) the same call expands each K/V
    head and clones it: two (B, G, h/G, S, d_k) copies, h/G times the cache."""
    q, k, v = qkv(heads=6, kv_heads=2, length=5, source=5)
    flash_op = "aten._scaled_dot_product_flash_attention_for_cpu.default"
    copies = ("aten.clone", "aten.repeat", "aten.repeat_interleave", "aten.index",
              "aten.cat", "aten.copy_", "aten._to_copy", "aten.contiguous")
    expected = reference(q, k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1))
    attend = torch.tensor([[True, True, True, False, True]])  # (1, S)
    for query, mask in ((q, None), (q[..., -1:, :], attend)):
        with _Ops() as ops:
            out = F.scaled_dot_product_attention(query, k, v, attn_mask=mask, enable_gqa=True)
        names = [name for name, _ in ops.ops]
        assert names[-1] == flash_op and names.count(flash_op) == 1
        assert not [n for n in names if n.startswith(copies)], names
        assert all(shape is None or math.prod(shape) < 3 * k.numel() for _, shape in ops.ops)
        ref = expected[..., -query.size(-2):, :] if mask is None else reference(
            query, k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1), attend)
        assert close(out, ref)
    with _Ops() as ops, sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    clones = [shape for name, shape in ops.ops if name == "aten.clone.default"]
    assert clones == [(2, 2, 3, 5, 8), (2, 2, 3, 5, 8)]  # (B, G, h/G, S, d_k), K then V
    assert flash_op not in [name for name, _ in ops.ops]
    assert close(out, expected)
    enable_gqa_allocates_nothing_of_the_caches_size_inside_the_flash_kernel()


def _allocations_inside(op_name, call):
    """Bytes of every CPU allocation made while `op_name` runs, from torch.profiler with
    profile_memory=True: its "[memory]" events come from the allocator itself, so they also
    see buffers a fused kernel allocates internally, which no dispatch mode can."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        call()
    events = prof.profiler.kineto_results.events()
    spans = [(e.start_ns(), e.end_ns()) for e in events if e.name() == op_name]
    assert spans, f"{op_name} did not run"
    return [e.nbytes() for e in events if e.name() == "[memory]" and e.nbytes() > 0
            and any(start <= e.start_ns() <= end for start, end in spans)]


def enable_gqa_allocates_nothing_of_the_caches_size_inside_the_flash_kernel():
    """The same claim, seen by the allocator: decoding 1 and prefilling 4 queries over a cache
    of S = 512 keys in G = 2 heads for h = 6 query heads, nothing allocated inside the CPU
    flash kernel reaches the size of K (a copy of the kv heads for all query heads would be
    3 K). The probe does see copies: under sdpa_kernel(MATH), which expands and clones K and V,
    the largest allocation inside scaled_dot_product_attention is 3 K."""
    q, k, v = qkv(batch=1, heads=6, kv_heads=2, length=4, source=512, d_k=64)
    k_bytes = k.numel() * k.element_size()
    flash_op = "aten::_scaled_dot_product_flash_attention_for_cpu"
    for query in (q[..., -1:, :], q):
        sizes = _allocations_inside(flash_op, lambda: F.scaled_dot_product_attention(
            query, k, v, enable_gqa=True))
        assert sizes and max(sizes) < k_bytes, (max(sizes), k_bytes)

    def math_call():
        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    sizes = _allocations_inside("aten::scaled_dot_product_attention", math_call)
    assert max(sizes) >= 3 * k_bytes


@claim("sdpa-backends")
def test_backends_enum():
    assert list(SDPBackend.__members__) == [
        "ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE",
    ]


@claim("sdpa-float-mask-other-dtype")
def test_float32_mask_with_half_inputs():
    q, k, v = qkv()
    mask = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    for dtype in (torch.float16, torch.bfloat16):
        low = [t.to(dtype) for t in (q, k, v)]
        out = F.scaled_dot_product_attention(*low, attn_mask=mask)  # float32 mask
        assert out.dtype == dtype
        same = F.scaled_dot_product_attention(*low, attn_mask=mask.to(dtype))
        assert torch.allclose(out.float(), same.float(), atol=2e-2)
        assert torch.allclose(out.float(), reference(q, k, v, mask).float(), atol=2e-2)


@claim("sdpa-no-projection")
def test_sdpa_uses_q_k_v_as_given():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 2, 5, 4).unbind(0)  # (B, h, L, d_k)
    out = F.scaled_dot_product_attention(q, k, v)
    by_hand = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v
    assert torch.allclose(out, by_hand, atol=1e-6)
    assert out.shape == (2, 2, 5, 4)


@claim("sdpa-returns-output-only")
def test_sdpa_returns_one_tensor_never_the_weights():
    q = torch.randn(1, 1, 3, 4)
    out = F.scaled_dot_product_attention(q, q, q)
    assert isinstance(out, torch.Tensor) and out.shape == (1, 1, 3, 4)


@claim("sdpa-identity-values-weights")
def test_identity_values_return_the_weights():
    """With v = I (S x S), SDPA's output is its weights A, on the default CPU path and on the
    math backend, with and without a boolean mask."""
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(2, 3, 5, 8, generator=gen)
    k = torch.randn(2, 3, 6, 8, generator=gen)
    eye = torch.eye(6).expand(2, 3, 6, 6)
    attend = torch.rand(5, 6, generator=gen) > 0.5
    attend[:, 0] = True
    for mask in (None, attend):
        expected = reference(q, k, eye, mask).float()
        by_hand = (q @ k.transpose(-2, -1) / math.sqrt(8))
        if mask is not None:
            by_hand = by_hand.masked_fill(~mask, float("-inf"))
        assert torch.allclose(expected, by_hand.softmax(-1), atol=1e-6)
        assert torch.allclose(F.scaled_dot_product_attention(q, k, eye, attn_mask=mask), expected, atol=1e-6)
        with sdpa_kernel(SDPBackend.MATH):
            assert torch.allclose(F.scaled_dot_product_attention(q, k, eye, attn_mask=mask), expected, atol=1e-6)


@claim("sdpa-kernel-cpu-choice")
def test_sdpa_kernel_on_the_cpu():
    """On the CPU (2.13), sdpa_kernel(MATH) and sdpa_kernel(FLASH_ATTENTION) run and agree to
    rounding; EFFICIENT_ATTENTION or CUDNN_ATTENTION alone raise; a list falls back to the
    backends it also names."""
    q, k, v = qkv(d_k=8)
    outs = {}
    for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
        with sdpa_kernel(backend):
            outs[backend] = F.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(outs[SDPBackend.MATH], outs[SDPBackend.FLASH_ATTENTION], atol=1e-6)
    assert not torch.equal(q, k)  # a real comparison, not a trivial one
    for backend in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        with sdpa_kernel(backend), pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        assert torch.allclose(F.scaled_dot_product_attention(q, k, v), outs[SDPBackend.MATH], atol=1e-6)


@claim("flash-attention-impls-registry")
def test_flash_attention_impl_registry():
    """torch.nn.attention (2.13) lists FA3 and FA4 as flash attention implementations, none
    active by default; activating one imports its package, which a CPU install lacks."""
    import importlib.util

    import torch.nn.attention as attention

    assert attention.list_flash_attention_impls() == ["FA3", "FA4"]
    assert attention.current_flash_attention_impl() is None
    assert importlib.util.find_spec("flash_attn") is None
    with pytest.raises(ModuleNotFoundError, match="flash_attn"):
        attention.activate_flash_attention_impl("FA4")
    with pytest.raises(ModuleNotFoundError, match="flash_attn_interface"):
        attention.activate_flash_attention_impl("FA3")
    with pytest.raises(ValueError, match="Unknown flash attention impl"):
        attention.activate_flash_attention_impl("FA2")
    assert attention.current_flash_attention_impl() is None


@claim("flash-attention-fa4-activation")
def test_fa4_activation_registers_cuda_kernels_only(monkeypatch):
    """torch 2.13: FA4 loads its kernels from flash_attn.cute.interface (FA3 from
    flash_attn_interface) and registers them for CUDA only. With a stand-in module exposing
    the two kernel functions, FA4 becomes the active implementation and SDPA on the CPU gives
    bit for bit the same result and never calls them; a module without them is refused."""
    import inspect
    import sys
    import types

    import torch.nn.attention as attention
    from torch.nn.attention import _fa3, _fa4

    assert inspect.signature(_fa4.register_flash_attention_fa4).parameters[
        "module_path"].default == "flash_attn.cute.interface"
    assert inspect.signature(_fa3.register_flash_attention_fa3).parameters[
        "module_path"].default == "flash_attn_interface"

    calls = []

    def kernel(*args, **kwargs):
        calls.append(args)
        raise AssertionError("an FA4 kernel ran on the CPU")

    interface = types.ModuleType("flash_attn.cute.interface")
    interface._flash_attn_fwd = interface._flash_attn_bwd = kernel
    monkeypatch.setitem(sys.modules, "flash_attn", types.ModuleType("flash_attn"))
    monkeypatch.setitem(sys.modules, "flash_attn.cute", types.ModuleType("flash_attn.cute"))
    monkeypatch.setitem(sys.modules, "flash_attn.cute.interface", interface)
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 8, 16, generator=gen).unbind(0)
    before = {b: None for b in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION)}
    for backend in before:
        with sdpa_kernel(backend):
            before[backend] = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    try:
        attention.activate_flash_attention_impl("FA4")
        assert attention.current_flash_attention_impl() == "FA4"
        for backend, out in before.items():
            with sdpa_kernel(backend):
                again = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            assert torch.equal(again, out)
        assert calls == []
    finally:
        attention.restore_flash_attention_impl()
        _fa4._fa4_import_module.cache_clear()
    assert attention.current_flash_attention_impl() is None
    empty = types.ModuleType("flash_attn.cute.interface")
    monkeypatch.setitem(sys.modules, "flash_attn.cute.interface", empty)
    try:
        with pytest.raises(RuntimeError, match="does not expose FA4 kernels"):
            attention.activate_flash_attention_impl("FA4")
    finally:
        _fa4._fa4_import_module.cache_clear()
    assert attention.current_flash_attention_impl() is None


@claim("masked-nan-leaks")
def test_a_masked_key_with_nan_or_inf_still_reaches_the_output():
    """Masking zeroes a key's weight, not its value: 0 * NaN is NaN and 0 * inf is NaN."""
    q, k, v = qkv(source=5)
    attend = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    attend[1, ..., 3:] = False  # the second sequence is padded after 3 keys
    finite = v.clone()
    finite[1, :, 3:] = 1e4  # any finite number: no effect
    assert close(F.scaled_dot_product_attention(q, k, finite, attn_mask=attend),
                 F.scaled_dot_product_attention(q, k, v, attn_mask=attend))
    for bad in (float("nan"), float("inf")):
        poisoned = v.clone()
        poisoned[1, :, 3:] = bad
        for backend in (None, SDPBackend.MATH):
            with sdpa_kernel(backend) if backend else contextlib.nullcontext():
                out = F.scaled_dot_product_attention(q, k, poisoned, attn_mask=attend)
            assert out[0].isfinite().all() and out[1].isnan().all()
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    padded = torch.zeros(2, 5, dtype=torch.bool)
    padded[1, 3:] = True  # nn.MultiheadAttention: True = ignore
    memory[1, 3:] = float("nan")
    for need_weights in (False, True):
        out, _ = mha(x, memory, memory, key_padding_mask=padded, need_weights=need_weights)
        assert out[0].isfinite().all() and out[1].isnan().all()


@claim("sdpa-doc-float-mask-same-dtype")
def test_the_documentation_asks_for_a_float_mask_of_the_querys_dtype():
    # What the pages say PyTorch documents for CUDA; the CPU accepts float32 with half
    # precision anyway (claim sdpa-float32-mask-bfloat16-precision).
    doc = " ".join(F.scaled_dot_product_attention.__doc__.split())
    assert "A float mask of the same type as query, key, value that is added to the attention score." in doc
