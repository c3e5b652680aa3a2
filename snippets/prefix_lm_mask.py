"""Prefix LM mask: bidirectional over the prefix, causal after it.

The prefix (a prompt, a source sentence) is given in full, so its tokens
may see each other in both directions; the tokens after it are generated
one at a time and see the whole prefix plus the tokens before them.
T5 calls this mask "causal with prefix"; UniLM uses it for its
sequence-to-sequence objective.
"""

BLOCKS = {
    "demo": [
        "snippets/prefix_lm_mask.py:code",
        "snippets/prefix_lm_mask.py:demo",
    ],
}

# --8<-- [start:code]
import torch


def prefix_lm_mask(prefix_lengths, length):
    """(B,) prefix lengths -> (B, T, T) boolean, True = may attend: query i
    sees key j if j < prefix length (every position sees the whole prefix)
    or j <= i (causal). Prefix length 0 gives the causal mask, T the full
    bidirectional one."""
    prefix = torch.as_tensor(prefix_lengths)  # a tensor keeps its device
    if (prefix < 0).any() or (prefix > length).any():
        raise ValueError("need 0 <= prefix length <= length")
    q_idx = torch.arange(length, device=prefix.device)[:, None]
    kv_idx = torch.arange(length, device=prefix.device)[None, :]
    return (kv_idx <= q_idx) | (kv_idx < prefix[:, None, None])


def prefix_lm_mask_mod(prefix_lengths):
    """The same rule as a FlexAttention mask_mod over a (B,) tensor of
    prefix lengths: (b, h, q_idx, kv_idx) -> bool, True = may attend.
    For L == S, as prefix_lm_mask: q_idx is the query's position."""

    def mask_mod(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) | (kv_idx < prefix_lengths[b])

    return mask_mod
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    # UniLM's example: source "[SOS] t1 t2 [EOS]", target "t3 t4 t5 [EOS]".
    tokens = ["[SOS]", "t1", "t2", "[EOS]", "t3", "t4", "t5", "[EOS]"]
    mask = prefix_lm_mask(torch.tensor([4]), len(tokens))[0]
    print("prefix of 4 in 8 tokens (1 = may attend):")
    print(mask.int())
    seen = mask.sum(-1).tolist()
    print("keys per query:", seen)
    print("t1 and t2 see the first 4 tokens, t4 the first 6:",
          seen[1] == seen[2] == 4 and seen[5] == 6)

    by_hand = torch.zeros(8, 8, dtype=torch.bool)
    for i in range(8):
        for j in range(8):
            by_hand[i, j] = j < 4 or j <= i
    print("equals the mask built by hand:", torch.equal(mask, by_hand))

    # A batch with its own prefix length per example.
    torch.manual_seed(0)
    prefix = torch.tensor([4, 2])
    attend = prefix_lm_mask(prefix, 8)[:, None]  # (B, 1, T, T): all heads
    q, k, v = torch.randn(3, 2, 2, 8, 16).unbind(0)  # (B, H, T, d_k)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    k2, v2 = k.clone(), v.clone()
    k2[0, :, 4:], v2[0, :, 4:] = 0.0, 0.0  # change example 0's target
    out2 = F.scaled_dot_product_attention(q, k2, v2, attn_mask=attend)
    print("the prefix ignores the target:",
          torch.allclose(out[0, :, :4], out2[0, :, :4], atol=1e-6))
    k3 = k.clone()
    k3[0, :, 3] += 1.0  # change the last prefix token's keys
    out3 = F.scaled_dot_product_attention(q, k3, v, attn_mask=attend)
    print("position 0 sees prefix position 3 (bidirectional):",
          not torch.allclose(out[0, :, 0], out3[0, :, 0], atol=1e-6))
    mask_mod = prefix_lm_mask_mod(prefix)
    idx = torch.arange(8)
    same = all(torch.equal(mask_mod(b, 0, idx[:, None], idx[None, :]),
                           attend[b, 0]) for b in range(2))
    print("mask_mod gives the same masks:", same)
# --8<-- [end:demo]
