"""Sliding-window (local) causal attention and its rolling-buffer KV cache.

Each query sees only the `window` most recent positions, itself included:
query i, key j with i - window < j <= i. A decoder then needs to keep only
the last `window` keys and values, in a buffer of fixed size.
"""

BLOCKS = {
    "demo": [
        "snippets/sliding_window_attention.py:code",
        "snippets/sliding_window_attention.py:demo",
    ],
    "rolling_cache": [
        "snippets/sliding_window_attention.py:code",
        "snippets/sliding_window_attention.py:rolling",
        "snippets/sliding_window_attention.py:rolling_demo",
    ],
    "receptive_field": [
        "snippets/sliding_window_attention.py:code",
        "snippets/sliding_window_attention.py:receptive_field",
    ],
}

# --8<-- [start:code]
import torch


def sliding_window_mask(num_queries, num_keys=None, *, window, device=None):
    """(L, S) boolean, True = may attend: the query at position i sees the
    key at position j if and only if i - window < j <= i.

    That is `window` positions, the query's own included (the convention of
    Hugging Face's sliding_window_overlay). The L queries are the last L of
    the S positions (lower right, as when decoding after a cache); with
    L == S query i is at position i. window >= S gives the causal mask.
    """
    num_keys = num_queries if num_keys is None else num_keys
    if window < 1 or num_queries > num_keys:
        raise ValueError("need window >= 1 and num_queries <= num_keys")
    first = num_keys - num_queries  # position of the first query
    q_pos = torch.arange(first, num_keys, device=device)[:, None]
    k_pos = torch.arange(num_keys, device=device)[None, :]
    return (k_pos <= q_pos) & (k_pos > q_pos - window)


def sliding_window_mask_mod(window, *, offset=0):
    """The same rule as a FlexAttention mask_mod: (b, h, q_idx, kv_idx) ->
    bool, True = may attend; it works on ints and on index tensors.
    q_idx counts from 0 in the queries, so query q_idx is at position
    q_idx + offset: offset = S - L for L queries that are the last L of S
    positions (decoding after a cache), 0 when L == S."""
    if window < 1 or offset < 0:
        raise ValueError("need window >= 1 and offset >= 0")

    def mask_mod(b, h, q_idx, kv_idx):
        q_pos = q_idx + offset
        return (kv_idx <= q_pos) & (q_pos - kv_idx < window)

    return mask_mod
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    mask = sliding_window_mask(6, window=3)
    print("window 3 over 6 tokens (1 = may attend):")
    print(mask.int())
    print("keys per query:", mask.sum(-1).tolist())
    mask_mod = sliding_window_mask_mod(3)
    pos = torch.arange(6)
    same = torch.equal(mask_mod(0, 0, pos[:, None], pos[None, :]), mask)
    print("mask_mod gives the same mask:", same)

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 6, 8).unbind(0)  # (B, H, T, d_k)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    alone = torch.cat([  # query i attends to keys max(0, i - 2) .. i only
        F.scaled_dot_product_attention(
            q[..., i : i + 1, :], k[..., max(0, i - 2) : i + 1, :],
            v[..., max(0, i - 2) : i + 1, :],
        )
        for i in range(6)
    ], dim=-2)
    print("equals attention over each window alone:",
          torch.allclose(out, alone, atol=1e-6))

    # Mistral's reference code builds its prefill mask with triu(-W):
    # i - W <= j <= i, W + 1 keys. That is our window of W + 1.
    mistral = torch.ones(6, 6).tril().triu(diagonal=-3).bool()
    print("Mistral's triu(diagonal=-3) mask is our window 4:",
          torch.equal(mistral, sliding_window_mask(6, window=4)))
# --8<-- [end:demo]


# --8<-- [start:rolling]
import torch.nn.functional as F


class RollingKVCache:
    """Keys and values of the last `window` tokens in a buffer of fixed
    size: position i goes to slot i % window, overwriting position
    i - window, which no later query may see.

    k, v: (B, H_kv, window, d_k); pos: (window,) the position each slot
    holds, -1 while a slot is still empty.
    """

    def __init__(self, batch, num_kv_heads, window, d_k, *,
                 dtype=torch.float32, device=None):
        if window < 1:
            raise ValueError("need window >= 1")
        shape = (batch, num_kv_heads, window, d_k)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.pos = torch.full((window,), -1, device=device)
        self.window = window
        self.next = 0  # position of the next token

    def append(self, k, v):
        """k, v: (B, H_kv, 1, d_k) of the token at position self.next ->
        the whole buffer k, v and a (window,) mask, True = filled slot."""
        if k.shape != v.shape or k.size(-2) != 1:
            raise ValueError("append one token at a time, k and v alike")
        slot = self.next % self.window
        self.k[:, :, slot] = k[:, :, 0]
        self.v[:, :, slot] = v[:, :, 0]
        self.pos[slot] = self.next
        self.next += 1
        return self.k, self.v, self.pos >= 0


def decode_step(q, k, v, cache):
    """q: (B, H, 1, d_k) and k, v: (B, H_kv, 1, d_k) of the newest token
    -> (B, H, 1, d_k), attending to the last `window` tokens.

    After a wrap the slots are out of position order. Attention does not
    mind: softmax and the weighted sum run over a set of keys, and any
    position information (RoPE, say) is in q and k before they are cached.
    """
    keys, values, filled = cache.append(k, v)  # (B, H_kv, window, d_k)
    return F.scaled_dot_product_attention(  # filled[None]: (1, window)
        q, keys, values, attn_mask=filled[None], enable_gqa=True
    )
# --8<-- [end:rolling]


# --8<-- [start:rolling_demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    window, steps = 4, 11  # 11 tokens: the buffer wraps around twice
    q = torch.randn(1, 4, steps, 8)  # (B, H, T, d_k): 4 query heads
    k, v = torch.randn(2, 1, 2, steps, 8).unbind(0)  # 2 KV heads
    full = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(steps, window=window),
        enable_gqa=True,
    )  # all 11 tokens at once, no cache

    cache = RollingKVCache(1, 2, window, 8)
    decoded = torch.cat([
        decode_step(q[..., t : t + 1, :], k[..., t : t + 1, :],
                    v[..., t : t + 1, :], cache)
        for t in range(steps)
    ], dim=-2)
    print("buffer after 11 tokens (B, H_kv, window, d_k):",
          tuple(cache.k.shape))
    print("position held by each slot:", cache.pos.tolist())
    print("rolling-buffer decoding equals windowed attention:",
          torch.allclose(decoded, full, atol=1e-6))
# --8<-- [end:rolling_demo]


# --8<-- [start:receptive_field]
if __name__ == "__main__":
    # Stacked layers see further: after k layers the last token depends on
    # the inputs that a chain of k windows can reach, window - 1 per layer.
    length, window = 16, 4
    one = sliding_window_mask(length, window=window).long()
    reach, back = one, []
    for layers in range(1, 5):
        back.append(length - 1 - int(reach[-1].nonzero().min()))
        reach = (reach @ one).clamp(max=1)  # one more layer
    print("window 4, positions reached back after 1..4 layers:", back)
    print("k x (window - 1):", [k * (window - 1) for k in range(1, 5)])
    # Mistral 7B v0.1: W = 4096, 32 layers. Its paper counts W per layer.
    print("Mistral 7B v0.1, 32 layers x 4096 =", 32 * 4096,
          "(paper: about 131K)")
    print("counted with i - W < j <= i: 32 x 4095 =", 32 * 4095)
# --8<-- [end:receptive_field]
