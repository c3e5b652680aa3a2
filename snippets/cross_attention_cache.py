"""Cross-attention while decoding: project the encoder's keys/values once, reuse every step."""

from snippets.multi_head_attention import MultiHeadAttention
from snippets.scaled_dot_product_attention import scaled_dot_product_attention

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/cross_attention_cache.py:code",
        "snippets/cross_attention_cache.py:demo",
    ],
}

# --8<-- [start:code]
import torch


class CrossAttentionCache:
    """Encoder keys/values of one MultiHeadAttention, projected once per source sentence.

    The encoder output does not change while the decoder generates tokens, so W_K and W_V
    applied to it give the same (B, h, S, d_k) tensors at every step: compute them once.
    """

    def __init__(self, attn, memory, memory_padding=None):
        self.attn = attn
        self.k = attn.split_heads(attn.w_k(memory))  # (B, h, S, d_k), computed once
        self.v = attn.split_heads(attn.w_v(memory))  # (B, h, S, d_k), computed once
        # (B, S), True = padding -> (B, 1, 1, S), True = attend
        self.attend = None if memory_padding is None else ~memory_padding[:, None, None, :]

    def __call__(self, x_t):
        """x_t: (B, 1, d_model), the newest decoder position -> (B, 1, d_model)."""
        q = self.attn.split_heads(self.attn.w_q(x_t))  # (B, h, 1, d_k): only the query is new
        heads = scaled_dot_product_attention(q, self.k, self.v, self.attend)  # (B, h, 1, d_k)
        return self.attn.w_o(self.attn.merge_heads(heads))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads, steps = 16, 4, 6
    attn = MultiHeadAttention(d_model, num_heads).eval()
    memory = torch.randn(2, 7, d_model)  # encoder output: (batch, S=7, d_model)
    padding = torch.arange(7)[None, :] >= torch.tensor([[7], [5]])  # (batch, S), True = pad

    calls = []  # one entry per run of the key projection
    attn.w_k.register_forward_hook(lambda module, inputs, output: calls.append(1))

    with torch.no_grad():
        cache = CrossAttentionCache(attn, memory, padding)
        x = torch.randn(2, 1, d_model)  # stands in for the decoder state of token t
        worst = 0.0
        for _ in range(steps):
            cached = cache(x)
            recomputed = attn(x, memory, memory, ~padding[:, None, None, :])  # projects K, V again
            worst = max(worst, (cached - recomputed).abs().max().item())
            x = x + cached  # the next step's input depends on this step's output
    print("steps:", steps, "key projections:", len(calls), "(1 cached +", steps, "recomputed)")
    print("max abs difference, cached vs recomputed:", f"{worst:.1e}")
    print("cached equals recomputed:", worst < 1e-6)
# --8<-- [end:demo]
