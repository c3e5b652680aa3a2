"""Hybrid attention: a stack that mixes full-attention and recurrent layers.

Qwen3-Next's configuration lists a kind per layer, `layer_types`, by default
"full_attention" every `full_attention_interval` = 4 layers and
"linear_attention" (Gated DeltaNet) in between (transformers'
configuration_qwen3_next.py). A full-attention layer caches every key and
value; a linear-attention layer carries one state of fixed size.
"""

BLOCKS = {
    "demo": [
        "snippets/hybrid_attention.py:code",
        "snippets/hybrid_attention.py:demo",
    ],
    "cost": [
        "snippets/hybrid_attention.py:cost",
        "snippets/hybrid_attention.py:cost_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn as nn
import torch.nn.functional as F


def layer_types_from_interval(num_layers, interval):
    """Qwen3-Next's default layout: every `interval`-th layer is full
    attention, the others linear attention."""
    return ["full_attention" if (i + 1) % interval == 0
            else "linear_attention" for i in range(num_layers)]


class FullAttention(nn.Module):
    """Causal multi-head attention. Its cache keeps every key and value."""

    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x, cache):  # x: (B, n, d), the next n tokens
        B, n, d = x.shape
        q, k, v = self.qkv(x).view(B, n, 3, self.h, -1).permute(
            2, 0, 3, 1, 4)  # each (B, h, n, d_k)
        if cache:
            k = torch.cat([cache["k"], k], dim=2)
            v = torch.cat([cache["v"], v], dim=2)
        cache["k"], cache["v"] = k, v  # (B, h, S, d_k): grows by n
        S = k.size(2)
        # The n new queries are tokens S - n .. S - 1: causal over S keys.
        attend = torch.ones(n, S, dtype=torch.bool, device=x.device)
        attend = attend.tril(S - n)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        return self.out(o.transpose(1, 2).reshape(B, n, d))


class DeltaRuleLayer(nn.Module):
    """Linear attention with the delta rule. Its cache is one state."""

    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.proj, self.out = nn.Linear(d, 3 * d + h), nn.Linear(d, d)

    def forward(self, x, cache):
        B, n, d = x.shape
        qkv, b = self.proj(x).split([3 * d, self.h], dim=-1)
        q, k, v = qkv.view(B, n, 3, self.h, -1).permute(2, 0, 3, 1, 4)
        k = F.normalize(k, dim=-1)  # unit keys
        beta = b.sigmoid().transpose(1, 2)  # (B, h, n)
        d_k = d // self.h
        S = cache.get("state", x.new_zeros(B, self.h, d_k, d_k))
        out = []
        for t in range(n):  # S <- S + k^T beta (v - k S)
            k_t = k[:, :, t].unsqueeze(-1)  # (B, h, d_k, 1)
            new = beta[:, :, t, None] * (v[:, :, t] - (k_t * S).sum(-2))
            S = S + k_t * new.unsqueeze(-2)
            out.append((q[:, :, t].unsqueeze(-1) * S).sum(-2))
        cache["state"] = S  # (B, h, d_k, d_v): the same size every step
        o = torch.stack(out, dim=2)  # (B, h, n, d_v)
        return self.out(o.transpose(1, 2).reshape(B, n, d))


class HybridStack(nn.Module):
    """Residual layers of the kinds in layer_types; one cache per layer."""

    def __init__(self, d, h, layer_types):
        super().__init__()
        kind = {"full_attention": FullAttention,
                "linear_attention": DeltaRuleLayer}
        self.layers = nn.ModuleList(kind[t](d, h) for t in layer_types)

    def forward(self, x, caches):
        for layer, cache in zip(self.layers, caches):
            x = x + layer(x, cache)
        return x
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    B, d, h = 1, 16, 2  # d_k = d_v = 8
    types = layer_types_from_interval(8, interval=4)
    print("layer_types:", " ".join(t[0].upper() for t in types))
    stack = HybridStack(d, h, types)
    x = torch.randn(B, 10, d)

    def numbers(caches):  # how many numbers each layer's cache holds
        return [sum(t.numel() for t in c.values()) for c in caches]

    caches = [{} for _ in types]
    with torch.no_grad():
        steps = [stack(x[:, :6], caches)]  # the prompt, 6 tokens at once
        print("cached after 6 tokens: ", numbers(caches))
        for t in range(6, 10):  # then one token at a time
            steps.append(stack(x[:, t:t + 1], caches))
        print("cached after 10 tokens:", numbers(caches))
        whole = stack(x, [{} for _ in types])  # all 10 tokens, no cache
    print("prompt + 4 decoding steps = one pass over 10 tokens:",
          torch.allclose(torch.cat(steps, dim=1), whole, atol=1e-5))
# --8<-- [end:demo]


# --8<-- [start:cost]
def cache_numbers(layer_types, tokens, *, kv_heads, head_dim,
                  state_numbers):
    """Numbers one sequence of `tokens` keeps in the cache of a stack:
    2 * kv_heads * head_dim per token in each full-attention layer (a key
    and a value per KV head), a fixed state_numbers in each
    linear-attention layer."""
    full = layer_types.count("full_attention")
    linear = layer_types.count("linear_attention")
    return (full * 2 * kv_heads * head_dim * tokens
            + linear * state_numbers)


def cache_bytes(layer_types, tokens, *, kv_heads, head_dim, state_bytes,
                kv_bytes=2):
    """The same in bytes: kv_bytes per cached key or value number, a
    fixed state_bytes in each linear-attention layer."""
    kv = cache_numbers(layer_types, tokens, kv_heads=kv_heads,
                       head_dim=head_dim, state_numbers=0)
    return kv * kv_bytes + layer_types.count("linear_attention") * state_bytes
# --8<-- [end:cost]


# --8<-- [start:cost_demo]
if __name__ == "__main__":
    # Qwen3NextConfig's defaults (transformers), after Qwen3-Next-80B-A3B:
    # 48 layers, full attention every 4th: 2 KV heads of 256;
    # Gated DeltaNet: 32 value heads, key and value heads of 128, and a
    # short convolution that keeps 4 steps of its 8192 input channels.
    # Transformers keeps the recurrent state in float32 (4 bytes) and
    # the convolution state, keys and values in bfloat16 (2 bytes).
    hybrid = ["linear_attention"] * 3 + ["full_attention"]
    hybrid = hybrid * 12
    dense = ["full_attention"] * 48
    state = 32 * 128 * 128 * 4 + 8192 * 4 * 2  # bytes per layer
    shape = dict(kv_heads=2, head_dim=256, state_bytes=state)
    for name, types in (("dense ", dense), ("hybrid", hybrid)):
        per_token = (cache_bytes(types, 1001, **shape)
                     - cache_bytes(types, 1000, **shape))
        fixed = cache_bytes(types, 0, **shape)
        print(f"{name}: {per_token // 1024} KiB per token,",
              f"{fixed / 2**20:.2f} MiB fixed")
    T = next(T for T in range(1, 10**6)
             if cache_bytes(hybrid, T, **shape)
             < cache_bytes(dense, T, **shape))
    print("the hybrid holds less from", T, "tokens on; at 262144 tokens:",
          f"{cache_bytes(hybrid, 262144, **shape) / 2**30:.2f}",
          "GiB against",
          f"{cache_bytes(dense, 262144, **shape) / 2**30:.2f}")
# --8<-- [end:cost_demo]
