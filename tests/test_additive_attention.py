"""snippets/additive_attention.py: against a hand-computed example (plain Python
math, no torch) and a loop over (query, key) pairs. PyTorch has no additive
attention of its own to compare with."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.additive_attention as mod
from snippets.additive_attention import AdditiveAttention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "scores:  ['1.3673', '0.5019', '0.9866']",
        "weights: ['0.4752', '0.2000', '0.3248']",
        "context: 1.8496",
        "weights sum to 1: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "additive_attention.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


# The demo's example, worked out by hand. Row vectors: q W_q + k W_k.
W_Q = [[1.0, 0.0], [0.0, 1.0]]
W_K = [[0.5, -0.5], [1.0, 0.5]]
V = [1.0, -1.0]
Q = [1.0, 0.0]
KEYS = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
VALUES = [1.0, 2.0, 3.0]


def row_times(x, w):
    return [sum(x[i] * w[i][j] for i in range(len(x))) for j in range(len(w[0]))]


def hand_scores():
    qw = row_times(Q, W_Q)  # [1, 0]
    scores = []
    for key in KEYS:
        kw = row_times(key, W_K)  # [0.5, -0.5], [1.0, 0.5], [1.5, 0.0]
        hidden = [math.tanh(a + b) for a, b in zip(qw, kw)]
        scores.append(sum(h * v for h, v in zip(hidden, V)))
    return scores


def test_hand_computed_example():
    scores = hand_scores()
    # hidden pre-activations q W_q + k W_k: [1.5, -0.5], [2.0, 0.5], [2.5, 0.0]
    assert scores == pytest.approx([
        math.tanh(1.5) + math.tanh(0.5), math.tanh(2.0) - math.tanh(0.5), math.tanh(2.5)
    ])
    exps = [math.exp(s) for s in scores]
    weights = [e / sum(exps) for e in exps]
    context = sum(w * v for w, v in zip(weights, VALUES))

    attn = AdditiveAttention(2, 2, 2).double()
    with torch.no_grad():
        attn.w_q.weight.copy_(torch.tensor(W_Q, dtype=F64).T)  # nn.Linear keeps W^T
        attn.w_k.weight.copy_(torch.tensor(W_K, dtype=F64).T)
        attn.v.weight.copy_(torch.tensor([V], dtype=F64))
    q = torch.tensor([[Q]], dtype=F64)
    k = torch.tensor([KEYS], dtype=F64)
    value = torch.tensor([[[x] for x in VALUES]], dtype=F64)
    out, w = attn(q, k, value)
    assert attn.scores(q, k)[0, 0].tolist() == pytest.approx(scores, abs=1e-12)
    assert w[0, 0].tolist() == pytest.approx(weights, abs=1e-12)
    assert out.item() == pytest.approx(context, abs=1e-12)
    assert [f"{s:.4f}" for s in scores] == ["1.3673", "0.5019", "0.9866"]


def loop_scores(attn, q, k):
    """e_ij = v . tanh(q_i W_q + k_j W_k), one pair at a time."""
    W_q, W_k, v = attn.w_q.weight.T, attn.w_k.weight.T, attn.v.weight[0]
    B, L, S = q.size(0), q.size(1), k.size(1)
    out = torch.empty(B, L, S, dtype=q.dtype)
    for b in range(B):
        for i in range(L):
            for j in range(S):
                out[b, i, j] = torch.tanh(q[b, i] @ W_q + k[b, j] @ W_k) @ v
    return out


@PROPERTY_SETTINGS
@given(
    batch=st.integers(1, 2),
    length=st.integers(1, 4),
    source=st.integers(1, 5),
    d_q=st.integers(1, 4),
    d_k=st.integers(1, 4),
    d_attn=st.integers(1, 4),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_matches_a_loop_over_pairs(batch, length, source, d_q, d_k, d_attn, masked, seed):
    torch.manual_seed(seed)
    attn = AdditiveAttention(d_q, d_k, d_attn).double()
    q = torch.randn(batch, length, d_q, dtype=F64)
    k = torch.randn(batch, source, d_k, dtype=F64)
    value = torch.randn(batch, source, 3, dtype=F64)
    scores = loop_scores(attn, q, k)
    attend = None
    if masked:
        attend = torch.rand(batch, length, source) < 0.5
        attend[..., 0] = True  # every query keeps a key
        scores = scores.masked_fill(~attend, float("-inf"))
    out, weights = attn(q, k, value, attend=attend)
    sb.assert_close(weights, torch.softmax(scores, -1))
    sb.assert_close(out, torch.softmax(scores, -1) @ value)
    if masked:
        assert (weights[~attend] == 0).all()


def test_query_with_no_key_gets_zeros_not_nan():
    torch.manual_seed(3)
    attn = AdditiveAttention(2, 2, 3).double()
    q, k = torch.randn(1, 3, 2, dtype=F64), torch.randn(1, 4, 2, dtype=F64)
    attend = torch.ones(3, 4, dtype=torch.bool)
    attend[1] = False
    out, weights = attn(q, k, torch.randn(1, 4, 2, dtype=F64), attend=attend)
    assert (out[:, 1] == 0).all() and (weights[:, 1] == 0).all() and not out.isnan().any()


def test_scores_are_bounded_by_the_norm_of_v():
    """|v . tanh(...)| <= sum |v_i|: additive scores cannot grow without bound."""
    torch.manual_seed(1)
    attn = AdditiveAttention(4, 4, 8).double()
    q, k = (1e4 * torch.randn(2, 1, 5, 4, dtype=F64)).unbind(0)
    assert attn.scores(q, k).abs().max() <= attn.v.weight.abs().sum() + 1e-12  # tanh = +-1 here


def test_gradcheck_float64():
    torch.manual_seed(2)
    attn = AdditiveAttention(3, 2, 4).double()
    q = torch.randn(1, 2, 3, dtype=F64, requires_grad=True)
    k = torch.randn(1, 4, 2, dtype=F64, requires_grad=True)
    value = torch.randn(1, 4, 2, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda q, k, v: attn(q, k, v)[0], (q, k, value))
