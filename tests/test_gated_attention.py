"""snippets/gated_attention.py: against a hand-written softmax einsum with the gate, against
Qwen3-Next's own lines (transformers' modeling_qwen3_next.py) for the [q_i | g_i] layout, and
against torch.nn.MultiheadAttention when the gate is held at 1."""

import copy

import pytest
import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.gated_attention as mod
from snippets.gated_attention import GatedAttention, split_query_gate
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "head 0: query = columns 0..7, gate = columns 8..15",
        "head 1: query = columns 16..23, gate = columns 24..31",
        "equals the softmax einsum reference: True",
        "gate = 1 equals nn.MultiheadAttention: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "gated_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def layer_and_input(seed, batch, length, heads, d_k, bias=True):
    torch.manual_seed(seed)
    layer = GatedAttention(heads * d_k, heads, bias=bias).to(F64)
    x = torch.randn(batch, length, heads * d_k, dtype=F64)
    return layer, x


def einsum_reference(layer, x, causal):
    """Softmax attention written out with explicit loops over nothing but einsum, then the gate;
    the query and gate of head i are read at their column offsets, not with view/chunk."""
    B, T, _ = x.shape
    h, d = layer.h, layer.d_k
    qg = layer.q_proj(x)
    q = torch.stack([qg[..., 2 * d * i: 2 * d * i + d] for i in range(h)], dim=2)
    g = torch.stack([qg[..., 2 * d * i + d: 2 * d * (i + 1)] for i in range(h)], dim=2)
    k = layer.k_proj(x).view(B, T, h, d)
    v = layer.v_proj(x).view(B, T, h, d)
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / d**0.5
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    weights = scores.exp() / scores.exp().sum(-1, keepdim=True)
    heads = torch.einsum("bhij,bjhd->bihd", weights, v) * (1 / (1 + torch.exp(-g)))
    return layer.o_proj(heads.reshape(B, T, h * d))


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    length=st.integers(1, 7),
    heads=st.integers(1, 4),
    d_k=st.integers(1, 6),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_equals_the_softmax_einsum_reference(batch, length, heads, d_k, causal, seed):
    layer, x = layer_and_input(seed, batch, length, heads, d_k)
    sb.assert_close(layer(x, is_causal=causal), einsum_reference(layer, x, causal))


def qwen3_next_layout(layer, x):
    """The layout of Qwen3NextAttention.forward (transformers, modeling_qwen3_next.py at commit
    7515843), restated: q_proj's output is viewed per head with width 2 * d_k, the first half of
    each head is its query and the second its gate; the gate is flattened back to (B, T, h * d_k)
    and multiplies the attention output flattened the same way, before o_proj."""
    B, T, _ = x.shape
    per_head = layer.q_proj(x).unflatten(-1, (layer.h, 2 * layer.d_k))  # (B, T, h, 2 d_k)
    query, gate = per_head[..., : layer.d_k], per_head[..., layer.d_k:]
    key = layer.k_proj(x).unflatten(-1, (layer.h, layer.d_k))
    value = layer.v_proj(x).unflatten(-1, (layer.h, layer.d_k))
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    heads = nn.functional.scaled_dot_product_attention(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), attn_mask=causal)
    flat = heads.transpose(1, 2).flatten(2)  # (B, T, h * d_k)
    return layer.o_proj(flat * torch.sigmoid(gate.flatten(2)))


@pytest.mark.parametrize("heads,d_k", [(1, 4), (3, 2), (4, 8)])
def test_layout_is_qwen3_nexts(heads, d_k):
    layer, x = layer_and_input(heads * d_k, 2, 6, heads, d_k)
    sb.assert_close(layer(x), qwen3_next_layout(layer, x))


def test_split_interleaves_query_and_gate_head_by_head():
    cols = torch.arange(2 * 3 * 4).view(1, 1, -1)  # h = 3, d_k = 4
    q, gate = split_query_gate(cols, 3)
    assert q.shape == gate.shape == (1, 1, 3, 4)
    assert q[0, 0].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11], [16, 17, 18, 19]]
    assert gate[0, 0].tolist() == [[4, 5, 6, 7], [12, 13, 14, 15], [20, 21, 22, 23]]


def test_reading_the_projection_as_all_queries_then_all_gates_is_a_different_layer():
    """[q_1 ... q_h | g_1 ... g_h] is not the model's layout: with the same weights, it gives
    another output (for h > 1), so a checkpoint must be split the way it was trained."""
    layer, x = layer_and_input(3, 1, 5, 4, 3)
    B, T, _ = x.shape
    q, gate = layer.q_proj(x).chunk(2, dim=-1)  # the wrong reading
    k, v = layer.k_proj(x), layer.v_proj(x)
    split = lambda t: t.view(B, T, 4, 3).transpose(1, 2)  # noqa: E731
    out = nn.functional.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    wrong = layer.o_proj((out.transpose(1, 2).reshape(B, T, -1)) * gate.sigmoid())
    assert not torch.allclose(wrong, layer(x), atol=1e-3)


def open_gates(layer):
    """Gate weights 0 and bias +inf: sigmoid is exactly 1 and the layer is ungated."""
    _, gates = split_query_gate(torch.arange(2 * layer.h * layer.d_k).view(1, 1, -1), layer.h)
    rows = gates.flatten()
    with torch.no_grad():
        layer.q_proj.weight[rows] = 0.0
        layer.q_proj.bias[rows] = float("inf")


@pytest.mark.parametrize("causal", [True, False])
def test_gate_of_one_is_torch_multihead_attention(causal):
    layer, x = layer_and_input(5, 2, 6, 4, 3)
    q_rows = split_query_gate(torch.arange(2 * 12).view(1, 1, -1), 4)[0].flatten()
    mha = nn.MultiheadAttention(12, 4, batch_first=True, dtype=F64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.q_proj.weight[q_rows], layer.k_proj.weight, layer.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([layer.q_proj.bias[q_rows], layer.k_proj.bias, layer.v_proj.bias]))
        mha.out_proj.load_state_dict(layer.o_proj.state_dict())
    open_gates(layer)
    mask = nn.Transformer.generate_square_subsequent_mask(6, dtype=F64) if causal else None
    expected, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
    sb.assert_close(layer(x, is_causal=causal), expected)


def test_a_closed_gate_silences_its_head_and_only_it():
    """Gate bias -inf on head 1: the output is what o_proj makes of the other heads alone, for
    every token, whatever the attention weights of head 1 were."""
    layer, x = layer_and_input(7, 2, 5, 3, 4)
    _, gates = split_query_gate(torch.arange(24).view(1, 1, -1), 3)
    with torch.no_grad():
        layer.q_proj.weight[gates[0, 0, 1]] = 0.0
        layer.q_proj.bias[gates[0, 0, 1]] = float("-inf")
    ref = einsum_reference(layer, x, causal=True)
    sb.assert_close(layer(x), ref)
    with torch.no_grad():  # zeroing head 1's rows of W^O changes nothing
        layer.o_proj.weight[:, 4:8] = 0.0
    sb.assert_close(layer(x), ref)


def test_all_gates_closed_leave_the_output_bias():
    layer, x = layer_and_input(8, 1, 4, 2, 3)
    _, gates = split_query_gate(torch.arange(12).view(1, 1, -1), 2)
    with torch.no_grad():
        layer.q_proj.weight[gates.flatten()] = 0.0
        layer.q_proj.bias[gates.flatten()] = float("-inf")
    sb.assert_close(layer(x), layer.o_proj.bias.expand(1, 4, 6))


def test_gradcheck_float64():
    layer, x = layer_and_input(9, 1, 4, 2, 2)
    x.requires_grad_()
    assert torch.autograd.gradcheck(lambda x: layer(x), (x,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_close(dtype):
    layer, x = layer_and_input(10, 2, 6, 2, 8)
    expected = layer(x)
    low = copy.deepcopy(layer).to(dtype)(x.to(dtype))
    assert low.dtype == dtype and low.isfinite().all()
    sb.assert_close(low.double(), expected, dtype=dtype)
