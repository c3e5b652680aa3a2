"""Cross-layer KV sharing: later layers reuse an earlier layer's K and V.

kv_source[i] names the layer whose keys and values layer i attends to:
i itself (a layer that produces K/V) or an earlier one (it only makes
queries). CLA (Brandon et al. 2024) shares between adjacent layers; Gemma
3n's last layers reuse the K/V of the last local or global layer before
them. Only producing layers are cached.
"""

BLOCKS = {
    "demo": [
        "snippets/cross_layer_kv_sharing.py:code",
        "snippets/cross_layer_kv_sharing.py:demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


class SharedKVDecoder(torch.nn.Module):
    """Causal self-attention layers with residuals; layer i attends to
    the keys and values of layer kv_source[i] <= i."""

    def __init__(self, kv_source, vocab=64, d_model=16, heads=2):
        super().__init__()
        if any(not 0 <= s <= i or kv_source[s] != s
               for i, s in enumerate(kv_source)):
            raise ValueError(f"kv_source {kv_source}: each source must be"
                             " an earlier or the same layer that produces")
        self.kv_source, self.heads = list(kv_source), heads
        self.embed = torch.nn.Embedding(vocab, d_model)
        self.wq = torch.nn.ModuleList(
            torch.nn.Linear(d_model, d_model) for _ in kv_source)
        self.wkv = torch.nn.ModuleDict({  # only producers have K/V weights
            str(i): torch.nn.Linear(d_model, 2 * d_model)
            for i, s in enumerate(kv_source) if s == i})

    def split(self, x):  # (T, d_model) -> (H, T, d_h)
        return x.unflatten(-1, (self.heads, -1)).transpose(0, 1)

    def forward(self, tokens, cache=None):
        """tokens: (T,) new ids; cache: {producer: (k, v)}, (H, P, d_h)
        each -> hidden (T, d_model) and the cache with the T tokens."""
        cache, x = dict(cache or {}), self.embed(tokens)
        for i, source in enumerate(self.kv_source):
            if source == i:  # a producer: project and append its K/V
                k, v = self.wkv[str(i)](x).chunk(2, dim=-1)
                k, v = self.split(k), self.split(v)
                if i in cache:
                    k = torch.cat([cache[i][0], k], dim=1)
                    v = torch.cat([cache[i][1], v], dim=1)
                cache[i] = (k, v)
            k, v = cache[source]
            q = self.split(self.wq[i](x))  # (H, T, d_h)
            num_new, num_keys = q.size(1), k.size(1)
            causal = torch.ones(num_new, num_keys, dtype=torch.bool,
                                device=q.device).tril(num_keys - num_new)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
            x = x + out.transpose(0, 1).flatten(1)
        return x, cache


def kv_bytes_per_token(kv_source, kv_heads, d_k, bytes_per_value):
    """Only the layers that produce K/V add to the cache."""
    producers = sum(s == i for i, s in enumerate(kv_source))
    return 2 * producers * kv_heads * d_k * bytes_per_value
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, 64, (9,))
    layouts = {
        "no sharing": [0, 1, 2, 3, 4, 5],
        "CLA, pairs": [0, 0, 2, 2, 4, 4],
        "last 2 reuse": [0, 1, 2, 3, 2, 3],  # Gemma 3n's pattern
    }
    for name, source in layouts.items():
        model = SharedKVDecoder(source)
        with torch.no_grad():
            full, _ = model(tokens)  # all 9 tokens at once
            out, cache = model(tokens[:6])  # prefill 6, then decode
            for t in range(6, 9):
                step, cache = model(tokens[t:t + 1], cache)
                out = torch.cat([out, step])
        same = torch.allclose(out, full, atol=1e-5)
        print(f"{name:12} cached layers {sorted(cache)},"
              f" decoding equals recomputing: {same}")
    # Gemma 3n E4B: 35 layers, 4 local then 1 global; the last 15 reuse
    # layer 18 (local) or 19 (global). 2 KV heads of width 256.
    gemma = list(range(20)) + [18 + (i % 5 == 4) for i in range(15)]
    print("Gemma 3n E4B, bfloat16 bytes per token:",
          kv_bytes_per_token(gemma, 2, 256, 2), "instead of",
          kv_bytes_per_token(list(range(35)), 2, 256, 2))
# --8<-- [end:demo]
