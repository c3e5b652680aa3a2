"""Prefix caching: reuse the KV cache of a prompt's shared prefix.

vLLM's automatic prefix caching hashes each full block of tokens together
with the hash of the block before it, so equal hashes mean equal prefixes;
a new request reuses the cached blocks of its longest such run and
computes only the rest. The result equals recomputing everything.
"""

BLOCKS = {
    "demo": [
        "snippets/prefix_caching.py:code",
        "snippets/prefix_caching.py:demo",
    ],
}

# --8<-- [start:code]
import hashlib

import torch
import torch.nn.functional as F


SEED = hashlib.sha256(b"prefix-cache").digest()  # h_0, fixed as in vLLM


def block_hashes(tokens, block_size, salt=b""):
    """One hash per FULL block: sha256(parent hash, tokens, extra keys).
    The chain makes a block's hash depend on every token before it; the
    salt is an extra key of the first block only, as in vLLM."""
    hashes, parent = [], SEED
    for start in range(0, len(tokens) - block_size + 1, block_size):
        block = tuple(tokens[start:start + block_size])
        extra = salt if start == 0 else b""
        key = repr((block, extra)).encode()
        parent = hashlib.sha256(parent + key).digest()
        hashes.append(parent)
    return hashes


class TinyDecoder(torch.nn.Module):
    """Causal self-attention layers with residuals, enough to have keys
    and values that depend on the tokens before them."""

    def __init__(self, vocab=64, d_model=16, heads=2, layers=2):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, d_model)
        self.qkv = torch.nn.ModuleList(
            torch.nn.Linear(d_model, 3 * d_model) for _ in range(layers))

    def forward(self, tokens, past=None):
        """tokens: (T,) new token ids; past: per layer (k, v), each
        (H, P, d_h), of the P tokens before them -> hidden (T, d_model)
        and per layer (k, v) of all P + T tokens."""
        x = self.embed(tokens)
        present = []
        for i, proj in enumerate(self.qkv):
            qkv = proj(x).unflatten(-1, (3, self.heads, -1))  # (T,3,H,d_h)
            q, k, v = qkv.permute(1, 2, 0, 3)  # each (H, T, d_h)
            if past is not None:
                k = torch.cat([past[i][0], k], dim=1)
                v = torch.cat([past[i][1], v], dim=1)
            present.append((k, v))
            num_new, num_keys = q.size(1), k.size(1)
            causal = torch.ones(num_new, num_keys, dtype=torch.bool,
                                device=q.device).tril(num_keys - num_new)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
            x = x + out.transpose(0, 1).flatten(1)  # (T, d_model)
        return x, present


class PrefixCache:
    """block hash -> per layer (k, v) of that block, each (H, B, d_h)."""

    def __init__(self, block_size):
        self.block_size = block_size
        self.blocks = {}

    def prefill(self, model, tokens):
        """Reuse the longest run of cached full blocks, compute the rest.
        -> (hidden of the computed tokens, per-layer K/V, tokens reused)"""
        size, hits = self.block_size, []
        for h in block_hashes(tokens, size):
            if h not in self.blocks:
                break
            hits.append(self.blocks[h])
        if len(hits) * size == len(tokens):
            hits.pop()  # keep one block to compute: its logits are needed
        reused = len(hits) * size
        past = None
        if hits:  # concatenate the blocks, layer by layer
            past = [tuple(torch.cat(kv, dim=1) for kv in zip(*layer))
                    for layer in zip(*hits)]
        hidden, present = model(torch.tensor(tokens[reused:]), past)
        for j, h in enumerate(block_hashes(tokens, size)):  # store
            cut = slice(j * size, (j + 1) * size)
            self.blocks.setdefault(
                h, [(k[:, cut], v[:, cut]) for k, v in present])
        return hidden, present, reused
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    model, cache = TinyDecoder(), PrefixCache(block_size=4)
    system = [5, 17, 3, 42, 8, 8, 23, 1, 30, 11]  # a shared system prompt
    with torch.no_grad():
        for name, question in (("A", [7, 9, 2, 60]), ("B", [33, 4, 12])):
            tokens = system + question
            hidden, past, reused = cache.prefill(model, tokens)
            print(f"request {name}: {reused} of {len(tokens)} tokens reused")
        same = []
        for _ in range(3):  # decode B greedily on top of the reused prefix
            nxt = int((hidden[-1] @ model.embed.weight.T).argmax())
            tokens.append(nxt)
            hidden, past = model(torch.tensor([nxt]), past)
            full, _ = model(torch.tensor(tokens))  # recompute everything
            same.append(torch.allclose(hidden[-1], full[-1], atol=1e-5))
    print("decoding on the reused prefix equals recomputing:", all(same))
    a, b = block_hashes([1, 2, 3, 4, 5, 6], 2), block_hashes([9, 2, 3, 4], 2)
    print("block (3, 4) after another prefix, same hash:", a[1] == b[1])
    print("full blocks hashed, of 6 and 7 tokens:",
          len(a), len(block_hashes(list(range(7)), 2)))
# --8<-- [end:demo]
