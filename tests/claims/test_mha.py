"""Claims about torch.nn.MultiheadAttention (torch 2.13.0, CPU)."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.claims import claim

E, H = 8, 2


def make(seed=0, **options):
    torch.manual_seed(seed)
    return nn.MultiheadAttention(E, H, **options)


def tokens(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def allclose(a, b):
    return torch.allclose(a, b, atol=1e-6)


@claim("mha-batch-first-default")
def test_batch_first_defaults_to_false():
    mha = make()
    assert mha.batch_first is False
    # A (B, T, E) tensor is read as (L, N, E): dim 0 is the sequence. It runs without any
    # complaint, and equals batch_first=True on the transposed input.
    x = tokens(2, 5, E)  # meant as batch 2, 5 tokens
    out, _ = mha(x, x, x, need_weights=False)
    assert out.shape == (2, 5, E)
    mha.batch_first = True
    as_lne, _ = mha(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), need_weights=False)
    assert allclose(out, as_lne.transpose(0, 1))  # 5 sequences of 2 tokens, not 2 of 5
    right, _ = mha(x, x, x, need_weights=False)
    assert not allclose(out, right)


@claim("mha-packed-in-proj")
def test_packed_in_proj_and_separate_weights():
    mha = make(batch_first=True)
    assert mha.in_proj_weight.shape == (3 * E, E) and mha.in_proj_bias.shape == (3 * E,)
    assert mha.q_proj_weight is None
    x = tokens(2, 4, E)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)  # rows: q, k, v
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    q, k, v = F.linear(x, w_q, b_q), F.linear(x, w_k, b_k), F.linear(x, w_v, b_v)
    split = lambda t: t.view(2, 4, H, E // H).transpose(1, 2)  # noqa: E731
    heads = F.scaled_dot_product_attention(split(q), split(k), split(v))
    manual = mha.out_proj(heads.transpose(1, 2).reshape(2, 4, E))
    expected, _ = mha(x, x, x, need_weights=False)
    assert allclose(manual, expected)
    separate = make(kdim=5, vdim=7)
    assert separate.in_proj_weight is None
    assert separate.q_proj_weight.shape == (E, E)
    assert separate.k_proj_weight.shape == (E, 5)
    assert separate.v_proj_weight.shape == (E, 7)
    assert separate.in_proj_bias.shape == (3 * E,)


@claim("mha-packed-in-proj-one-product")
def test_packed_in_proj_is_one_product_for_self_attention_only():
    """With the packed in_proj_weight, self-attention (one tensor as query, key and value)
    projects with one matrix product; cross-attention splits the weight: two products when key
    and value are one tensor, three when all three differ. Counted at the aten level, with
    need_weights=True so that the products are all projections (no SDPA kernel)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.count += str(func).split(".")[1] in {"addmm", "mm"}  # a Linear's product (attention: bmm)
            return func(*args, **(kwargs or {}))

    mha = make()  # (L, N, E): the function's own layout, so the tensors passed are the caller's
    x, memory, other = tokens(4, 2, E), tokens(5, 2, E), tokens(5, 2, E)

    def products(q, k, v):
        with torch.no_grad(), Products() as mode:
            F.multi_head_attention_forward(
                q, k, v, E, H, mha.in_proj_weight, mha.in_proj_bias, None, None, False, 0.0,
                mha.out_proj.weight, mha.out_proj.bias, training=False, need_weights=True)
        return mode.count - 1  # the output projection is one more

    assert products(x, x, x) == 1
    assert products(x, memory, memory) == 2
    assert products(x, memory, other) == 3


@claim("mha-key-padding-true-ignores")
def test_key_padding_mask_true_ignores():
    mha = make(batch_first=True)
    x = tokens(1, 3, E)
    memory = tokens(1, 5, E, seed=2)
    padding = torch.tensor([[False, False, False, True, True]])
    out, _ = mha(x, memory, memory, key_padding_mask=padding, need_weights=False)
    dropped, _ = mha(x, memory[:, :3], memory[:, :3], need_weights=False)
    assert allclose(out, dropped)


@claim("mha-bool-attn-mask-true-ignores")
def test_boolean_attn_mask_true_ignores():
    mha = make(batch_first=True)
    x, memory = tokens(1, 3, E), tokens(1, 5, E, seed=2)
    ignore = torch.zeros(3, 5, dtype=torch.bool)
    ignore[:, 3:] = True  # the last two keys, for every query
    for need_weights in (True, False):
        out, _ = mha(x, memory, memory, attn_mask=ignore, need_weights=need_weights)
        dropped, _ = mha(x, memory[:, :3], memory[:, :3], need_weights=False)
        assert allclose(out, dropped)


@claim("mha-attn-mask-shapes")
def test_attn_mask_shapes():
    N, L, S = 2, 3, 4
    mha = make(batch_first=True)
    x, memory = tokens(N, L, E), tokens(N, S, E, seed=2)
    per_head = torch.rand(N * H, L, S, generator=torch.Generator().manual_seed(3)) < 0.5
    per_head[..., 0] = False  # every query keeps key 0
    out, _ = mha(x, memory, memory, attn_mask=per_head, need_weights=False)
    # index b * H + h: batch-major. Row b*H + h of the mask is head h of sequence b.
    for b in range(N):
        alone, _ = mha(x[b:b + 1], memory[b:b + 1], memory[b:b + 1],
                       attn_mask=per_head[b * H:(b + 1) * H], need_weights=False)
        assert allclose(out[b:b + 1], alone)
    mha(x, memory, memory, attn_mask=per_head[0, :, :], need_weights=False)  # (L, S) works
    for shape in [(N, L, S), (1, L, S), (N, H, L, S), (1, S), (L, 1)]:
        with pytest.raises((RuntimeError, AssertionError)):
            mha(x, memory, memory, attn_mask=torch.zeros(shape, dtype=torch.bool))


@claim("mha-need-weights-averaged")
def test_need_weights_shapes():
    N, L, S = 2, 3, 4
    mha = make(batch_first=True).eval()
    x, memory = tokens(N, L, E), tokens(N, S, E, seed=2)
    _, averaged = mha(x, memory, memory)  # need_weights=True is the default
    _, per_head = mha(x, memory, memory, average_attn_weights=False)
    _, none = mha(x, memory, memory, need_weights=False)
    assert averaged.shape == (N, L, S) and per_head.shape == (N, H, L, S) and none is None
    assert allclose(averaged, per_head.mean(dim=1))


@claim("mha-weights-after-dropout")
def test_returned_weights_are_after_dropout():
    mha = make(dropout=0.5, batch_first=True)
    x = tokens(2, 6, E)
    _, weights = mha(x, x, x)  # training mode (the default after construction)
    assert not torch.allclose(weights.sum(-1), torch.ones(2, 6))
    _, weights = mha.eval()(x, x, x)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 6))


@claim("mha-is-causal-needs-mask")
def test_is_causal_without_mask_raises():
    mha = make(batch_first=True)
    x = tokens(1, 3, E)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    # The inference fast path (eval mode, no grad, batch-first self-attention) neither raises
    # nor masks: the hint alone gives the unmasked result.
    causal = torch.ones(3, 3, dtype=torch.bool).triu(1)  # True = ignore
    mha.eval()
    with torch.no_grad():
        hinted, _ = mha(x, x, x, is_causal=True, need_weights=False)
        unmasked, _ = mha(x, x, x, need_weights=False)
        masked, _ = mha(x, x, x, attn_mask=causal, need_weights=False)
    assert allclose(hinted, unmasked) and not allclose(hinted, masked)


@claim("mha-is-causal-hint-trusted")
def test_is_causal_hint_replaces_the_mask_off_the_fast_path():
    T = 4
    mha = make(batch_first=True)
    x = tokens(2, T, E)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = ignore
    other = torch.zeros(T, T, dtype=torch.bool)
    other[:, 0] = True  # a non-causal mask: ignore key 0
    with_causal, _ = mha(x, x, x, attn_mask=causal, need_weights=False)
    with_other, _ = mha(x, x, x, attn_mask=other, need_weights=False)
    hinted, _ = mha(x, x, x, attn_mask=other, is_causal=True, need_weights=False)
    assert allclose(hinted, with_causal) and not allclose(hinted, with_other)
    # With need_weights=True the mask is used.
    hinted, _ = mha(x, x, x, attn_mask=other, is_causal=True, need_weights=True)
    assert allclose(hinted, with_other)
    # Eval mode alone, with autograd on, still takes the Python path and trusts the hint.
    mha.eval()
    hinted, _ = mha(x, x, x, attn_mask=other, is_causal=True, need_weights=False)
    assert allclose(hinted, with_causal)
    # The inference fast path (eval mode, no grad, batch-first self-attention) runs
    # aten::_native_multi_head_attention, which ignores the hint and uses the mask passed.
    with torch.no_grad():
        with torch.profiler.profile() as prof:
            hinted, _ = mha(x, x, x, attn_mask=other, is_causal=True, need_weights=False)
    ops = {event.key for event in prof.key_averages()}
    assert "aten::_native_multi_head_attention" in ops
    assert allclose(hinted, with_other) and not allclose(hinted, with_causal)


def fully_padded():
    """A batch whose second sequence is nothing but padding."""
    x = tokens(2, 3, E)
    padding = torch.tensor([[False, False, False], [True, True, True]])
    return x, padding


@claim("mha-fully-masked-nan-need-weights")
def test_fully_padded_sequence_is_nan_with_need_weights():
    mha = make(batch_first=True)
    x, padding = fully_padded()
    out, weights = mha(x, x, x, key_padding_mask=padding)  # need_weights=True by default
    assert out[1].isnan().all() and weights[1].isnan().all()
    assert out[0].isfinite().all()


@claim("mha-fast-path-nan")
def test_fast_path_is_nan_even_without_weights():
    mha = make(batch_first=True).eval()
    x, padding = fully_padded()
    with torch.no_grad():  # eval + no grad + batch_first self-attention: the fast path
        out, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)
    assert out[1].isnan().all() and out[0].isfinite().all()


@claim("mha-grad-path-zeros")
def test_grad_path_without_weights_gives_zero_attention():
    mha = make(batch_first=True)
    x, padding = fully_padded()
    out, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)  # SDPA inside
    # Attention gives zeros, so the output is out_proj(0) = out_proj.bias, which
    # nn.MultiheadAttention initialises to zeros.
    assert torch.equal(out[1], mha.out_proj.bias.expand(3, E))
    assert (out[1] == 0).all()
    with torch.no_grad():
        mha.out_proj.bias.fill_(0.5)
    out, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)
    assert (out[1] == 0.5).all()
    # Other ways off the fast path, without gradients: training mode, or keys and values that
    # are not the queries' tensor (no self-attention). The same: attention 0, output the bias.
    with torch.no_grad():
        training, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)
        mha.eval()
        other, _ = mha(x, x.clone(), x.clone(), key_padding_mask=padding, need_weights=False)
    assert (training[1] == 0.5).all() and (other[1] == 0.5).all()





@claim("mha-calls-sdpa")
def test_without_weights_every_path_but_the_fast_path_calls_sdpa(monkeypatch):
    calls = []
    original = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    mha = make(batch_first=True)
    x, other = tokens(2, 3, E), tokens(2, 3, E, seed=2)
    mha(x, x, x, need_weights=False)  # training mode
    assert len(calls) == 1
    mha(x, x, x)  # need_weights=True: its own bmm/softmax
    assert len(calls) == 1
    with torch.no_grad():
        mha.eval()(x, x, x, need_weights=False)  # the fast path: a fused native kernel
    assert len(calls) == 1
    # Every other call with need_weights=False goes through SDPA: evaluation mode with
    # gradients on, without gradients but with another tensor as key and value, or
    # with batch_first=False (each one condition of the fast path short).
    mha(x, x, x, need_weights=False)
    assert len(calls) == 2
    with torch.no_grad():
        mha(x, other, other, need_weights=False)
        assert len(calls) == 3
        make(batch_first=False).eval()(x, x, x, need_weights=False)
        assert len(calls) == 4




@claim("mha-heads-divide-embed-dim")
def test_embed_dim_must_be_divisible_by_num_heads():
    import pytest

    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        torch.nn.MultiheadAttention(10, 4)
    assert torch.nn.MultiheadAttention(12, 4).head_dim == 3


@claim("mha-need-weights-explicit")
def test_need_weights_true_does_not_call_sdpa(monkeypatch):
    calls = []
    real = torch.nn.functional.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).train()
    x = torch.randn(2, 3, 8)
    mha(x, x, x, need_weights=True)
    assert calls == []
    mha(x, x, x, need_weights=False)
    assert calls == [1]


@claim("mha-out-proj-separate")
def test_out_proj_is_its_own_linear():
    mha = torch.nn.MultiheadAttention(8, 2)
    assert isinstance(mha.out_proj, torch.nn.Linear)
    assert mha.out_proj.weight.shape == (8, 8) and mha.out_proj.bias.shape == (8,)
    packed = {name for name, _ in mha.named_parameters()}
    assert packed == {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}


@claim("mha-sdpa-float-mask-added")
def test_a_float_mask_is_added_to_the_scaled_scores_in_both_apis():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 1, 4, 8).unbind(0)  # (B, h, L, d)
    mask = torch.randn(4, 4)
    scores = q @ k.transpose(-2, -1) / 8 ** 0.5 + mask
    expected = torch.softmax(scores, dim=-1) @ v
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.allclose(sdpa, expected, atol=1e-6)
    mha = torch.nn.MultiheadAttention(8, 1, batch_first=True, bias=False)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(8).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(8))
    out, _ = mha(q[0], k[0], v[0], attn_mask=mask, need_weights=False)
    assert torch.allclose(out, expected[0], atol=1e-5)
