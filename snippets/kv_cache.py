"""KV cache: prefill, then decode one token at a time, reusing past keys.

The memory it costs per token: 2 x layers x KV heads x d_k x bytes.
"""

BLOCKS = {
    "demo": [
        "snippets/kv_cache.py:code",
        "snippets/kv_cache.py:demo",
    ],
    "memory": [
        "snippets/kv_cache.py:code",
        "snippets/kv_cache.py:memory",
        "snippets/kv_cache.py:memory_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F
from torch import nn


class KVCache:
    """Keys and values of every token seen so far, for one attention layer.

    append(k, v) takes the new tokens' keys and values, each
    (B, H_kv, T_new, d_k), and returns all of them, (B, H_kv, T, d_k),
    where T = len(cache) counts the tokens cached so far.
    """

    def __init__(self):
        self.k = None
        self.v = None

    def __len__(self):
        return 0 if self.k is None else self.k.size(-2)

    def append(self, k, v):
        if k.shape != v.shape:
            raise ValueError(f"k {tuple(k.shape)} and v {tuple(v.shape)}")
        if self.k is None:
            self.k, self.v = k, v
        else:
            # cat copies the whole cache at every step: simple, not fast
            # (Hugging Face's DynamicCache does the same). Servers
            # preallocate the memory or manage it in blocks.
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v


def causal_mask_at(num_new, num_keys, *, offset, device=None):
    """(T_new, S) boolean, True = may attend, for T_new new tokens at
    positions offset .. offset + T_new - 1 and keys at positions 0 .. S - 1.

    With S = offset + T_new (cache plus new tokens) this is the lower-right
    alignment of torch.nn.attention.bias.causal_lower_right: the last new
    token sees every key. Upper-left (is_causal=True) would be wrong here.
    """
    q_pos = torch.arange(offset, offset + num_new, device=device)
    k_pos = torch.arange(num_keys, device=device)
    return k_pos[None, :] <= q_pos[:, None]


class CachedCausalSelfAttention(nn.Module):
    """Causal self-attention that can run on a chunk of new tokens.

    num_kv_heads < num_heads gives grouped-query attention (1: multi-query);
    only the num_kv_heads key/value heads are cached.
    """

    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__()
        num_kv_heads = num_kv_heads or num_heads
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError("need num_kv_heads | num_heads | d_model")
        self.h, self.h_kv = num_heads, num_kv_heads
        self.d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None, *, offset=0):
        """x: (B, T_new, d_model), the tokens at positions offset ..
        offset + T_new - 1 -> (B, T_new, d_model). cache: a KVCache that
        holds the offset earlier tokens (None: no earlier tokens).

        The offset places the new tokens in the sequence: the mask needs
        it here, and rotary position embeddings would need it too."""
        past = 0 if cache is None else len(cache)
        if offset != past:
            raise ValueError(f"offset {offset}, but {past} cached tokens")
        b, t, _ = x.shape
        q = self.w_q(x).view(b, t, self.h, self.d_k).transpose(1, 2)
        k = self.w_k(x).view(b, t, self.h_kv, self.d_k).transpose(1, 2)
        v = self.w_v(x).view(b, t, self.h_kv, self.d_k).transpose(1, 2)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, H_kv, offset + T_new, d_k)
        num_keys = k.size(-2)  # offset + T_new
        attend = causal_mask_at(t, num_keys, offset=offset, device=x.device)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attend, enable_gqa=True
        )  # (B, H, T_new, d_k)
        return self.w_o(out.transpose(1, 2).reshape(b, t, self.h * self.d_k))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    from torch.nn.attention.bias import causal_lower_right

    torch.manual_seed(0)
    attn = CachedCausalSelfAttention(d_model=32, num_heads=4, num_kv_heads=2)
    x = torch.randn(1, 10, 32)  # stands in for the embeddings of 10 tokens

    with torch.no_grad():
        full = attn(x)  # one causal pass over all 10 tokens, no cache
        cache = KVCache()
        steps = [attn(x[:, :6], cache, offset=0)]  # prefill: the prompt
        for t in range(6, 10):  # decode: one new token per step
            steps.append(attn(x[:, t : t + 1], cache, offset=t))
    decoded = torch.cat(steps, dim=1)
    print("cached keys (B, H_kv, T, d_k):", tuple(cache.k.shape))
    same = torch.allclose(decoded, full, atol=1e-6)
    print("prefill + 4 decode steps equal one causal pass:", same)

    # 3 new tokens after 5 cached ones: align the mask to the lower right.
    print("mask for 3 new tokens after 5 cached (1 = may attend):")
    print(causal_mask_at(3, 8, offset=5).int())
    q = torch.randn(1, 2, 3, 8)  # (B, H, T_new, d_k)
    k, v = torch.randn(2, 1, 2, 8, 8).unbind(0)  # (B, H, S, d_k), S = 8
    sdpa = F.scaled_dot_product_attention
    ours = sdpa(q, k, v, attn_mask=causal_mask_at(3, 8, offset=5))
    ref = sdpa(q, k, v, attn_mask=causal_lower_right(3, 8))
    print("equals causal_lower_right:", torch.allclose(ours, ref, atol=1e-6))
    upper = sdpa(q, k, v, is_causal=True)
    print("is_causal=True (upper-left) gives the same:",
          torch.allclose(upper, ref, atol=1e-6))
# --8<-- [end:demo]


# --8<-- [start:memory]
def kv_bytes_per_token(num_layers, num_kv_heads, d_k, bytes_per_value):
    """Bytes the KV cache grows by per token: one key and one value vector
    (the 2) of d_k numbers per KV head, in every layer."""
    return 2 * num_layers * num_kv_heads * d_k * bytes_per_value


def format_bytes(n):
    """1536 -> '1.50 KiB' (powers of 1024)."""
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if n == int(n) else f"{n:.2f} {unit}"
        n /= 1024
# --8<-- [end:memory]


# --8<-- [start:memory_demo]
if __name__ == "__main__":
    # Llama 2 70B (its config.json): 80 layers, 64 query heads of d_k = 128
    # (hidden size 8192 / 64), 8 KV heads, a context of 4096 tokens.
    fp16 = torch.finfo(torch.float16).bits // 8  # 2 bytes per number
    for name, kv_heads in [("MHA", 64), ("GQA-8", 8), ("MQA", 1)]:
        per_token = kv_bytes_per_token(80, kv_heads, 128, fp16)
        context = per_token * 4096  # one sequence of 4096 tokens
        print(f"{name:5} (H_kv = {kv_heads:2}): {format_bytes(per_token)}"
              f" per token, {format_bytes(context)} per 4096 tokens")

    # The formula counts what the caches of a real stack hold: 3 layers,
    # 2 KV heads of d_k = 8, float16, after a prompt of 5 tokens.
    torch.manual_seed(0)
    layers = [CachedCausalSelfAttention(32, 4, 2).half() for _ in range(3)]
    caches = [KVCache() for _ in layers]
    h = torch.randn(1, 5, 32, dtype=torch.float16)
    with torch.no_grad():
        for layer, cache in zip(layers, caches):
            h = h + layer(h, cache)
    held = sum(t.nelement() * t.element_size()
               for c in caches for t in (c.k, c.v))
    print("bytes held by the caches:", held)
    print("formula matches:", held == 5 * kv_bytes_per_token(3, 2, 8, fp16))
# --8<-- [end:memory_demo]
