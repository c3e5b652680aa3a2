"""Cross-attention while decoding: project the encoder's keys/values once,
reuse them at every step."""

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
    """Encoder keys/values of one MultiHeadAttention, projected once per
    source sentence.

    The encoder output does not change while the decoder generates tokens,
    so W_K and W_V applied to it give the same (B, h, S, d_k) tensors at
    every step: compute them once.
    memory: (B, S, kdim); memory_padding: optional (B, S) boolean,
    keyword-only, True = padding (nn.MultiheadAttention's convention).
    """

    def __init__(self, attn, memory, *, memory_padding=None):
        self.attn = attn
        # (B, h, S, d_k) each, computed once
        self.k = attn.split_heads(attn.w_k(memory))
        self.v = attn.split_heads(attn.w_v(memory))
        # (B, S), True = padding -> (B, 1, 1, S), True = attend
        self.attend = None
        if memory_padding is not None:
            self.attend = ~memory_padding[:, None, None, :]

    def __call__(self, x_t):
        """x_t: (B, 1, d_model), the newest decoder position
        -> (B, 1, d_model)."""
        # (B, h, 1, d_k): only the query is new
        q = self.attn.split_heads(self.attn.w_q(x_t))
        heads = scaled_dot_product_attention(
            q, self.k, self.v, attend=self.attend
        )  # (B, h, 1, d_k)
        return self.attn.w_o(self.attn.merge_heads(heads))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads, steps = 16, 4, 6
    attn = MultiHeadAttention(d_model, num_heads).eval()
    memory = torch.randn(2, 7, d_model)  # encoder output: (batch, S=7, d)
    # (batch, S), True = pad
    padding = torch.arange(7)[None, :] >= torch.tensor([[7], [5]])
    attend = ~padding[:, None, None, :]  # (batch, 1, 1, S), True = attend

    calls = []  # one entry per run of the key projection
    attn.w_k.register_forward_hook(lambda *_: calls.append(1))

    with torch.no_grad():
        cache = CrossAttentionCache(attn, memory, memory_padding=padding)
        x = torch.randn(2, 1, d_model)  # stands in for the decoder state
        worst = 0.0
        for _ in range(steps):
            cached = cache(x)
            # projects K and V again
            recomputed = attn(x, memory, memory, attend=attend)
            worst = max(worst, (cached - recomputed).abs().max().item())
            x = x + cached  # the next step's input depends on this output
    print("steps:", steps, "key projections:", len(calls),
          "(1 cached +", steps, "recomputed)")
    print("cached equals recomputed:", worst < 1e-6)
# --8<-- [end:demo]
