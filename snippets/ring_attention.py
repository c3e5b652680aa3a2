"""Ring attention and DeepSpeed-Ulysses, simulated in one process.

N simulated devices each hold one contiguous shard of the sequence. Ring
attention keeps every device's queries in place and passes the key/value
shards around the ring, N steps, merging each partial result by its
log-sum-exp (attend_part and merge: snippets/online_softmax.py). Ulysses
instead swaps sequence shards for head groups with an all-to-all, runs
ordinary attention, and swaps back. Both equal full causal attention.
"""

import math  # used by the code section; a page shows it with online_softmax

import torch

from snippets.online_softmax import attend_part, merge

BLOCKS = {
    "demo": [
        "snippets/online_softmax.py:code",
        "snippets/ring_attention.py:code",
        "snippets/ring_attention.py:demo",
    ],
    "memory": [
        "snippets/online_softmax.py:code",
        "snippets/ring_attention.py:code",
        "snippets/ring_attention.py:memory",
    ],
}

# --8<-- [start:code]
import torch.nn.functional as F


def ring_attention(q, k, v, *, devices, causal=True):
    """Causal (or full) attention over q, k, v (B, H, T, d), computed as
    `devices` devices in a ring would. Device r holds the positions of
    shard r; at each step it attends its queries to the key/value shard
    it holds, merges the result into its own, then passes that shard to
    device r + 1. -> (B, H, T, d_v), and the most keys a device holds at
    once (the shard it computes on and the one it receives). Outputs and
    log-sum-exps are kept in float32 even for half inputs."""
    if not 1 <= devices <= q.size(-2):
        raise ValueError("need 1 <= devices <= sequence length")
    pos = torch.arange(q.size(-2), device=q.device).tensor_split(devices)
    qs = q.tensor_split(devices, dim=-2)
    held = list(zip(k.tensor_split(devices, dim=-2),
                    v.tensor_split(devices, dim=-2), pos))
    work = torch.promote_types(q.dtype, torch.float32)  # for statistics
    outs = [q.new_zeros(*q_r.shape[:-1], v.size(-1), dtype=work)
            for q_r in qs]
    lses = [q.new_full(q_r.shape[:-1], -math.inf, dtype=work) for q_r in qs]
    peak = 0
    for step in range(devices):
        for r in range(devices):
            k_j, v_j, pos_j = held[r]  # the shard device r holds now
            allowed = pos_j[None, :] <= pos[r][:, None] if causal else None
            out, lse = attend_part(qs[r], k_j, v_j, allowed)
            outs[r], lses[r] = merge(torch.stack([outs[r], out]),
                                     torch.stack([lses[r], lse]))
            # While it computes, the next shard arrives (not after the last).
            arriving = held[(r - 1) % devices][0].size(-2)
            peak = max(peak, k_j.size(-2) + arriving * (step < devices - 1))
        held = [held[(r - 1) % devices] for r in range(devices)]  # send
    return torch.cat(outs, dim=-2).to(q.dtype), peak


def all_to_all(shards, *, split_dim, cat_dim):
    """What an all-to-all does among N devices: device r cuts its tensor
    in N pieces along split_dim and sends piece s to device s; device s
    concatenates what it receives along cat_dim."""
    n = len(shards)
    pieces = [t.tensor_split(n, dim=split_dim) for t in shards]
    return [torch.cat([pieces[r][s] for r in range(n)], dim=cat_dim)
            for s in range(n)]


def ulysses_attention(q, k, v, *, devices, causal=True):
    """The same attention, DeepSpeed-Ulysses style: sequence shards of all
    heads -> (all-to-all) all positions of H / devices heads -> ordinary
    attention per device -> (all-to-all) back to sequence shards."""
    to_heads = dict(split_dim=1, cat_dim=2)  # (B, H, T, d) layout
    parts = [all_to_all(t.tensor_split(devices, dim=2), **to_heads)
             for t in (q, k, v)]
    outs = [F.scaled_dot_product_attention(q_r, k_r, v_r, is_causal=causal)
            for q_r, k_r, v_r in zip(*parts)]  # each: (B, H/N, T, d_v)
    return torch.cat(all_to_all(outs, split_dim=2, cat_dim=1), dim=2)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 22, 16).unbind(0)  # (B, H, T, d_k)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for devices in (1, 2, 4, 5):  # 5 does not divide 22: uneven shards
        ring, _ = ring_attention(q, k, v, devices=devices)
        print(f"ring of {devices}: equals full causal attention:",
              torch.allclose(ring, full, atol=1e-5))
    ulysses = ulysses_attention(q, k, v, devices=4)  # needs H % 4 == 0
    print("Ulysses over 4 devices equals it too:",
          torch.allclose(ulysses, full, atol=1e-5))
# --8<-- [end:demo]


# --8<-- [start:memory]
if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 64, 8).unbind(0)  # T = 64 positions
    for devices in (1, 2, 4, 8, 16):
        _, peak = ring_attention(q, k, v, devices=devices)
        print(f"{devices:2d} devices: at most {peak:2d} of 64 keys and values"
              f" per device ({peak / 64:.1%})")
# --8<-- [end:memory]
