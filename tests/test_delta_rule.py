"""snippets/delta_rule.py: the chunked form equals the token-by-token recurrence for every chunk
size (also sizes that do not divide the length) and every kind of decay, and both equal the
recurrence written with explicit d_k x d_k transition matrices; with orthonormal keys and beta = 1
the delta rule is plain causal linear attention."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.delta_rule as mod
from snippets.delta_rule import delta_rule_chunked, delta_rule_recurrent
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "DeltaNet: chunks of 1, 3, 4, 10 = recurrence: True",
        "Gated DeltaNet: chunks of 1, 3, 4, 10 = recurrence: True",
        "Kimi (per channel): chunks of 1, 3, 4, 10 = recurrence: True",
        "beta = 1: last key reads back its value: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "delta_rule.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def inputs(seed, batch, heads, length, d_k, d_v, decay, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    q = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen, dtype=dtype), dim=-1)
    k = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen, dtype=dtype), dim=-1)
    v = torch.randn(batch, heads, length, d_v, generator=gen, dtype=dtype)
    beta = torch.rand(batch, heads, length, generator=gen, dtype=dtype)
    width = {"none": 1, "head": 1, "channel": d_k}[decay]
    g = -torch.rand(batch, heads, length, width, generator=gen, dtype=dtype)
    if decay == "none":
        g = torch.zeros_like(g)
    return q, k, v, beta, g


def transition_matrices(q, k, v, beta, g):
    """The recurrence as the papers write it, with matrices:
    S_t = (I - beta_t k_t^T k_t) diag(a_t) S_{t-1} + beta_t k_t^T v_t, o_t = q_t S_t."""
    B, h, T, d_k = k.shape
    eye = torch.eye(d_k, dtype=k.dtype)
    S = torch.zeros(B, h, d_k, v.size(-1), dtype=k.dtype)
    out = []
    for t in range(T):
        kt = k[:, :, t, None, :]  # (B, h, 1, d_k), a row
        a = torch.diag_embed(g[:, :, t].exp().expand(B, h, d_k))
        b = beta[:, :, t, None, None]
        S = (eye - b * kt.transpose(-2, -1) @ kt) @ a @ S + b * kt.transpose(-2, -1) @ v[:, :, t, None, :]
        out.append((q[:, :, t, None, :] @ S).squeeze(-2))
    return torch.stack(out, dim=2), S


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    heads=st.integers(1, 2),
    length=st.integers(1, 13),
    d_k=st.integers(1, 5),
    d_v=st.integers(1, 4),
    chunk=st.integers(1, 15),
    decay=st.sampled_from(["none", "head", "channel"]),
    seed=st.integers(0, 2**16),
)
def test_property_chunked_equals_the_recurrence(batch, heads, length, d_k, d_v, chunk, decay, seed):
    q, k, v, beta, g = inputs(seed, batch, heads, length, d_k, d_v, decay)
    o, S = delta_rule_recurrent(q, k, v, beta, g)
    oc, Sc = delta_rule_chunked(q, k, v, beta, g, chunk)
    sb.assert_close(oc, o)
    sb.assert_close(Sc, S)
    om, Sm = transition_matrices(q, k, v, beta, g)
    sb.assert_close(o, om)
    sb.assert_close(S, Sm)


@pytest.mark.parametrize("length,chunk", [(7, 2), (7, 3), (10, 4), (9, 9), (5, 8)])
def test_chunk_sizes_that_do_not_divide_the_length(length, chunk):
    q, k, v, beta, g = inputs(length * chunk, 2, 3, length, 4, 3, "channel")
    o, S = delta_rule_recurrent(q, k, v, beta, g)
    oc, Sc = delta_rule_chunked(q, k, v, beta, g, chunk)
    sb.assert_close(oc, o)
    sb.assert_close(Sc, S)


def test_orthonormal_keys_and_beta_one_give_plain_causal_linear_attention():
    """No key sees another (k_t S_{t-1} = 0), so each step adds k_t^T v_t: o = tril(Q K^T) V."""
    T, d_k = 5, 6
    basis = torch.linalg.qr(torch.randn(d_k, d_k, dtype=F64, generator=torch.Generator().manual_seed(1)))[0]
    k = basis[:T].expand(1, 2, T, d_k)
    q = torch.randn(1, 2, T, d_k, dtype=F64)
    v = torch.randn(1, 2, T, 3, dtype=F64)
    beta = torch.ones(1, 2, T, dtype=F64)
    o, _ = delta_rule_recurrent(q, k, v, beta, torch.zeros(1, 2, T, 1, dtype=F64))
    sb.assert_close(o, (q @ k.transpose(-2, -1)).tril() @ v)


def test_the_state_does_not_grow_with_the_length():
    for T in (1, 8, 32):
        q, k, v, beta, g = inputs(T, 1, 2, T, 4, 3, "head")
        _, S = delta_rule_chunked(q, k, v, beta, g, 8)
        assert S.shape == (1, 2, 4, 3)


def test_unit_key_with_beta_one_overwrites_its_slot():
    """After a step with beta = 1 and a unit key, reading the state with that key gives exactly
    the value just written, whatever was there: the delta rule replaces, linear attention adds."""
    q, k, v, _, g = inputs(3, 1, 1, 6, 4, 2, "none")
    k[:, :, 5] = k[:, :, 0]  # the same key written twice
    beta = torch.ones(1, 1, 6, dtype=F64)
    _, S = delta_rule_recurrent(q, k, v, beta, g)
    sb.assert_close(k[:, :, 5:] @ S, v[:, :, 5:])


def test_gradcheck_chunked():
    q, k, v, beta, g = (t.requires_grad_() for t in inputs(4, 1, 1, 5, 3, 2, "channel"))
    assert torch.autograd.gradcheck(lambda *a: delta_rule_chunked(*a, 2)[0], (q, k, v, beta, g))


def test_float32_chunked_is_close_to_float64():
    q, k, v, beta, g = inputs(5, 2, 2, 33, 8, 8, "head")
    expected, _ = delta_rule_recurrent(q, k, v, beta, g)
    low, _ = delta_rule_chunked(*(t.float() for t in (q, k, v, beta, g)), 8)
    sb.assert_close(low, expected.float())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_inputs_are_computed_in_float32(dtype):
    """Half-precision inputs: both functions run (the chunked one needs solve_triangular, which
    has no half kernel on the CPU), return the input's dtype, and over 256 tokens stay within one
    epsilon of that dtype (relative, and absolute at the output's scale) of the float64 result on
    the same inputs; the state is float32."""
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(5)
    B, h, T, d_k, d_v = 1, 2, 256, 16, 8
    q, k = F.normalize(torch.randn(2, B, h, T, d_k, generator=gen, dtype=torch.float64), dim=-1).unbind(0)
    v = torch.randn(B, h, T, d_v, generator=gen, dtype=torch.float64)
    beta = torch.rand(B, h, T, generator=gen, dtype=torch.float64)
    g = -0.05 * torch.rand(B, h, T, 1, generator=gen, dtype=torch.float64)
    half = [x.to(dtype) for x in (q, k, v, beta, g)]
    exact, _ = delta_rule_recurrent(*[x.double() for x in half])  # the same inputs, in float64
    eps = torch.finfo(dtype).eps
    for o, S in (delta_rule_recurrent(*half), delta_rule_chunked(*half, chunk=64)):
        assert o.dtype == dtype and S.dtype == torch.float32
        torch.testing.assert_close(o.double(), exact, rtol=eps, atol=eps * exact.abs().max().item())
