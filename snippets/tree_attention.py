"""Tree attention: verifying a tree of drafted tokens in one forward pass.

Speculative decoding drafts several continuations that share their first
tokens, a token tree (SpecInfer, Medusa, EAGLE). The model scores every
node in one pass, with the tree's root, the last token chosen, which is
not cached yet: a node attends to the prefix and to its ancestors only
(the tree mask), at the position of its depth; the longest branch the
model agrees with is accepted.
"""

from snippets.rotary_position_embedding import apply_rope

BLOCKS = {
    "demo": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/tree_attention.py:code",
        "snippets/tree_attention.py:demo",
    ],
    "accept": [
        "snippets/tree_attention.py:accept",
        "snippets/tree_attention.py:accept_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


def tree_mask(parents):
    """parents[n] is node n's parent (an earlier node), or -1 for a node
    that follows the prefix directly -> (N, N) bool, True where node i may
    attend to node j: j is i itself or one of its ancestors."""
    attend = torch.eye(len(parents), dtype=torch.bool)
    for n, p in enumerate(parents):
        if not -1 <= p < n:
            raise ValueError(f"node {n}: parent {p} must be -1 or < {n}")
        if p >= 0:
            attend[n] |= attend[p]  # the parent's row is already complete
    return attend


def tree_depths(parents):
    """(N,) depth of each node: 1 right after the prefix, 2 below, ..."""
    depth = []
    for p in parents:
        depth.append(1 if p < 0 else depth[p] + 1)
    return torch.tensor(depth)


def verify_inputs(parents, prefix_len):
    """-> positions (1 + N,), 0-based as in code, and the mask (1 + N, P + N).
    Row 0 is the root: the prefix's last token, which the previous step
    chose and whose key and value are not cached yet; it sees the prefix.
    Row n + 1 is node n: the whole prefix, then its own branch."""
    num = len(parents)
    depths = torch.cat((torch.zeros(1, dtype=torch.long),
                        tree_depths(parents)))  # the root: depth 0
    seen = torch.ones(num + 1, prefix_len, dtype=torch.bool)
    tree = torch.zeros(num + 1, num, dtype=torch.bool)
    tree[1:] = tree_mask(parents)
    return prefix_len - 1 + depths, torch.cat((seen, tree), dim=-1)


def rope_attention(x_q, pos_q, x_kv, pos_kv, w_q, w_k, w_v, attend=None):
    """One head with RoPE: x_q (L, d_model) at positions pos_q (L,),
    x_kv (S, d_model) at pos_kv (S,), attend (L, S) bool -> (L, d_k)."""
    q = apply_rope(x_q @ w_q, pos_q, layout="half")
    k = apply_rope(x_kv @ w_k, pos_kv, layout="half")
    causal = attend is None
    return F.scaled_dot_product_attention(
        q, k, x_kv @ w_v, attn_mask=attend, is_causal=causal
    )
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, d_k, prefix_len = 16, 8, 5
    w_q, w_k, w_v = torch.randn(3, d_model, d_k).unbind(0)
    # P - 1 cached tokens, then the root: the token the last step chose.
    prefix = torch.randn(prefix_len, d_model)  # (P, d_model)
    # Two candidates for the token after the root (nodes 0, 1).
    parents = [-1, -1, 0, 0, 1, 2, 3]
    drafted = torch.randn(len(parents), d_model)  # (N, d_model)
    positions, attend = verify_inputs(parents, prefix_len)
    print("positions:", positions.tolist())
    everything = torch.cat((prefix, drafted))  # (P + N, d_model)
    all_pos = torch.cat((torch.arange(prefix_len - 1), positions))
    queries = everything[prefix_len - 1:]  # the root and the N nodes
    one_pass = rope_attention(queries, positions, everything, all_pos,
                              w_q, w_k, w_v, attend)  # (1 + N, d_k)
    for leaf in (4, 5, 6):  # every root-to-leaf path, alone and causal
        path = [leaf]
        while parents[path[0]] >= 0:
            path.insert(0, parents[path[0]])
        seq = torch.cat((prefix, drafted[path]))  # (P + depth, d_model)
        pos = torch.arange(len(seq))
        alone = rope_attention(seq, pos, seq, pos, w_q, w_k, w_v)
        rows = [0] + [n + 1 for n in path]  # the root, then the path
        same = torch.allclose(alone[prefix_len - 1:], one_pass[rows],
                              atol=1e-6)
        print("path", path, "alone equals one pass:", same)
# --8<-- [end:demo]


# --8<-- [start:accept]
def accept_longest(parents, drafted, predicted):
    """Greedy verification. drafted[n]: node n's token; predicted[0]: the
    model's choice after the root (row 0), predicted[n + 1]: after node n.
    -> (the accepted nodes, root first; the model's next token after
    them, which is kept too)."""
    best, paths = [], {}
    for n, p in enumerate(parents):
        wanted = predicted[0] if p < 0 else predicted[p + 1]
        if drafted[n] == wanted and (p < 0 or p in paths):
            paths[n] = (paths[p] if p >= 0 else []) + [n]
            if len(paths[n]) > len(best):
                best = paths[n]
    return best, predicted[best[-1] + 1 if best else 0]
# --8<-- [end:accept]


# --8<-- [start:accept_demo]
if __name__ == "__main__":
    parents = [-1, -1, 0, 0, 1, 2, 3]
    drafted = ["sat", "is", "on", "down", "on", "the", "on"]
    # The model's greedy choice after the prefix and after each node:
    predicted = ["sat", "on", "here", "a", "on", "mat", "on", "."]
    nodes, bonus = accept_longest(parents, drafted, predicted)
    print("accepted nodes:", nodes)
    print("new tokens:", [drafted[n] for n in nodes] + [bonus])
# --8<-- [end:accept_demo]
