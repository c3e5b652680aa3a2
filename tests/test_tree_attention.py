"""snippets/tree_attention.py: the tree mask in SDPA over a prefix and a tree
against running every root-to-leaf path alone, causally, with the same prefix
(one and two layers, random trees); positions that follow depth, and that
positions in node order break it; a chain is plain causal attention; the
greedy acceptance against a brute force over every path."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.tree_attention as mod
from snippets.tree_attention import (
    accept_longest,
    rope_attention,
    tree_depths,
    tree_mask,
    verify_inputs,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "positions: [4, 5, 5, 6, 6, 6, 7, 7]",
        "path [1, 4] alone equals one pass: True",
        "path [0, 2, 5] alone equals one pass: True",
        "path [0, 3, 6] alone equals one pass: True",
    ],
    "accept": [
        "accepted nodes: [0, 2]",
        "new tokens: ['sat', 'on', 'a']",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@st.composite
def trees(draw, max_nodes=8):
    """parents of a random forest below the prefix: each node's parent is -1
    or an earlier node."""
    n = draw(st.integers(1, max_nodes))
    return [draw(st.integers(-1, i - 1)) for i in range(n)]


def path_to(parents, node):
    path = [node]
    while parents[path[0]] >= 0:
        path.insert(0, parents[path[0]])
    return path


def weights(gen, d_model, d_k, layers=1):
    return [torch.randn(3, d_model, d_k, generator=gen, dtype=F64).unbind(0)
            for _ in range(layers)]


def tree_pass(prefix, drafted, parents, layers):
    """Every layer: the cached part's own causal pass (all of the prefix
    but its last token), then the root and the tree in one pass with the
    tree mask and positions that follow depth. -> (1 + N, d), the root first."""
    positions, attend = verify_inputs(parents, len(prefix))
    cached, new = prefix[:-1], torch.cat((prefix[-1:], drafted))
    pre = torch.arange(len(cached))
    all_pos = torch.cat((pre, positions))
    for w in layers:
        out = rope_attention(cached, pre, cached, pre, *w) if len(cached) else cached
        new = rope_attention(new, positions, torch.cat((cached, new)), all_pos, *w, attend)
        cached = out
    return new


def path_alone(prefix, drafted, path, layers, root=False):
    """The prefix and one branch, causally; -> the branch's rows (with
    root=True, from the root's row on)."""
    seq = torch.cat((prefix, drafted[path]))
    pos = torch.arange(len(seq))
    for w in layers:
        seq = rope_attention(seq, pos, seq, pos, *w)
    return seq[len(prefix) - 1 if root else len(prefix):]


def test_mask_rows_are_the_node_and_its_ancestors():
    parents = [-1, -1, 0, 0, 1, 2, 3, 5]
    mask = tree_mask(parents)
    for n in range(len(parents)):
        assert mask[n].nonzero().flatten().tolist() == sorted(path_to(parents, n))


@PROPERTY_SETTINGS
@given(parents=trees(), prefix_len=st.integers(1, 4), layers=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_property_one_pass_equals_every_path_alone(parents, prefix_len, layers,
                                                    seed):
    gen = torch.Generator().manual_seed(seed)
    d = 8  # d_model = d_k, so that layers chain
    ws = weights(gen, d, d, layers)
    prefix = torch.randn(prefix_len, d, generator=gen, dtype=F64)
    drafted = torch.randn(len(parents), d, generator=gen, dtype=F64)
    one_pass = tree_pass(prefix, drafted, parents, ws)
    sb.assert_close(one_pass[0], path_alone(prefix, drafted, [], ws, root=True)[-1])
    for node in range(len(parents)):  # every node, on its own path
        path = path_to(parents, node)
        alone = path_alone(prefix, drafted, path, ws)
        sb.assert_close(one_pass[node + 1], alone[-1])


def test_positions_follow_depth():
    parents = [-1, -1, 0, 0, 1, 2, 3]
    positions, attend = verify_inputs(parents, prefix_len=5)
    assert tree_depths(parents).tolist() == [1, 1, 2, 2, 2, 3, 3]
    assert positions.tolist() == [4, 5, 5, 6, 6, 6, 7, 7]  # the root at P - 1
    for n in range(len(parents)):  # position = P - 1 + length of its path
        assert positions[n + 1].item() == 5 - 1 + len(path_to(parents, n))
    assert attend.shape == (8, 12) and attend[:, :5].all()
    assert not attend[0, 5:].any()  # the root sees the prefix only


def test_positions_in_node_order_break_the_equality():
    """The mask alone is not enough: with RoPE, node 4 (depth 2) placed at
    position P + 4 sees its parent at the wrong distance."""
    gen = torch.Generator().manual_seed(3)
    parents, prefix_len, d = [-1, -1, 0, 0, 1], 4, 8
    (w,) = weights(gen, d, d)
    prefix = torch.randn(prefix_len, d, generator=gen, dtype=F64)
    drafted = torch.randn(len(parents), d, generator=gen, dtype=F64)
    right, attend = verify_inputs(parents, prefix_len)
    everything = torch.cat((prefix, drafted))
    for positions in (right, prefix_len - 1 + torch.arange(1 + len(parents))):
        all_pos = torch.cat((torch.arange(prefix_len - 1), positions))
        out = rope_attention(everything[prefix_len - 1:], positions, everything,
                             all_pos, *w, attend)
        alone = path_alone(prefix, drafted, [1, 4], [w])
        assert torch.allclose(out[5], alone[-1]) == (positions is right)


def test_a_chain_is_plain_causal_attention():
    gen = torch.Generator().manual_seed(4)
    parents, prefix_len, d = [-1, 0, 1, 2], 3, 8
    positions, attend = verify_inputs(parents, prefix_len)
    assert torch.equal(attend, torch.ones(5, 7, dtype=torch.bool).tril(2))
    assert positions.tolist() == [2, 3, 4, 5, 6]
    (w,) = weights(gen, d, d)
    seq = torch.randn(prefix_len + 4, d, generator=gen, dtype=F64)
    pos = torch.arange(len(seq))
    one_pass = rope_attention(seq[prefix_len - 1:], positions, seq, pos, *w, attend)
    sb.assert_close(one_pass, rope_attention(seq, pos, seq, pos, *w)[prefix_len - 1:])


def brute_force_accept(parents, drafted, predicted):
    """The longest root-to-node path whose every token is the model's choice
    at its parent; ties go to the first such path in node order."""
    best = []
    for node in range(len(parents)):
        path = path_to(parents, node)
        wanted = [predicted[0]] + [predicted[m + 1] for m in path[:-1]]
        if all(drafted[m] == t for m, t in zip(path, wanted)) \
                and len(path) > len(best):
            best = path
    return best


@PROPERTY_SETTINGS
@given(parents=trees(10), data=st.data())
def test_property_acceptance_is_the_longest_matching_path(parents, data):
    vocab = st.integers(0, 2)  # a tiny vocabulary: many matches
    drafted = data.draw(st.lists(vocab, min_size=len(parents),
                                 max_size=len(parents)))
    predicted = data.draw(st.lists(vocab, min_size=len(parents) + 1,
                                   max_size=len(parents) + 1))
    nodes, bonus = accept_longest(parents, drafted, predicted)
    assert nodes == brute_force_accept(parents, drafted, predicted)
    assert bonus == predicted[nodes[-1] + 1 if nodes else 0]


@pytest.mark.parametrize("parents", [[0], [-1, 1], [-1, -2], [-1, 0, 3]])
def test_a_parent_must_come_first(parents):
    with pytest.raises(ValueError, match="parent"):
        tree_mask(parents)
