"""Chunked (local) attention, as in Llama 4's RoPE layers: the sequence is
cut into fixed chunks of `attention_chunk_size` tokens, and each query sees
only the keys of its own chunk up to itself. The same rule as a boolean
mask for SDPA, as a FlexAttention mask_mod, and as a loop over chunks."""

BLOCKS = {
    "demo": [
        "snippets/chunked_attention.py:code",
        "snippets/chunked_attention.py:demo",
    ],
    "reach": [
        "snippets/chunked_attention.py:code",
        "snippets/chunked_attention.py:reach",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


def chunked_mask(num_queries, num_keys=None, *, chunk_size, device=None):
    """(L, S) boolean, True = may attend: the query at position i sees the
    key at position j if and only if j <= i and i // C == j // C.

    Positions count from 0, so the chunks are 0 .. C-1, C .. 2C-1, and so
    on. The L queries are the last L of the S positions (as when decoding
    after a cache). chunk_size >= S gives the causal mask.
    """
    num_keys = num_queries if num_keys is None else num_keys
    if chunk_size < 1 or num_queries > num_keys:
        raise ValueError("need chunk_size >= 1 and num_queries <= num_keys")
    i = torch.arange(num_keys - num_queries, num_keys, device=device)
    j = torch.arange(num_keys, device=device)
    same_chunk = i[:, None] // chunk_size == j[None, :] // chunk_size
    return same_chunk & (j[None, :] <= i[:, None])


def chunked_mask_mod(chunk_size):
    """The same rule as a FlexAttention mask_mod: (b, h, q_idx, kv_idx) ->
    True where the query may attend."""
    def mask_mod(b, h, q_idx, kv_idx):
        same_chunk = q_idx // chunk_size == kv_idx // chunk_size
        return same_chunk & (kv_idx <= q_idx)
    return mask_mod


def chunked_attention_by_loop(q, k, v, *, chunk_size):
    """q, k (B, H, T, d_k), v (B, H, T, d_v) -> (B, H, T, d_v): causal
    attention inside each chunk on its own; chunks never see each other."""
    outputs = []
    for start in range(0, q.size(-2), chunk_size):
        part = slice(start, start + chunk_size)
        outputs.append(F.scaled_dot_product_attention(
            q[..., part, :], k[..., part, :], v[..., part, :],
            is_causal=True))
    return torch.cat(outputs, dim=-2)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    T, C = 8, 3
    mask = chunked_mask(T, chunk_size=C)
    print("chunked mask, T = 8, C = 3:")
    for row in mask.int().tolist():
        print("  ", row)
    pos = torch.arange(T)
    window = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < C)
    print("keys per query, chunks of 3:  ", mask.sum(-1).tolist())
    print("keys per query, window of 3:  ", window.sum(-1).tolist())

    q, k, v = torch.randn(3, 1, 2, T, 4, dtype=torch.float64)
    by_mask = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    by_loop = chunked_attention_by_loop(q, k, v, chunk_size=C)
    print("SDPA with the mask equals the loop over chunks:",
          torch.allclose(by_mask, by_loop))
    mask_mod = chunked_mask_mod(C)
    print("mask_mod gives the same mask:",
          torch.equal(mask_mod(0, 0, pos[:, None], pos[None, :]), mask))
# --8<-- [end:demo]


# --8<-- [start:reach]
if __name__ == "__main__":
    T, C = 12, 4
    chunks = chunked_mask(T, chunk_size=C).int()
    pos = torch.arange(T)
    window = ((pos[None, :] <= pos[:, None])
              & (pos[:, None] - pos[None, :] < C)).int()
    # What the last token depends on after n stacked layers: the
    # nonzero entries of the last row of the n-th power of the mask.
    for n in (1, 2, 3):
        reach_c = torch.linalg.matrix_power(chunks, n)[-1].nonzero()
        reach_w = torch.linalg.matrix_power(window, n)[-1].nonzero()
        print(f"{n} layer(s): chunks reach back to position",
              reach_c.min().item(), "| window to", reach_w.min().item())
    # Decoding: a chunked layer keeps the keys of the current chunk only.
    print("keys a chunked layer needs at decoding steps 0..11:",
          [t % C + 1 for t in range(T)])
# --8<-- [end:reach]
