"""One projection or one per head? h per-head Linear layers equal one fused
Linear."""

from snippets.multi_head_attention import MultiHeadAttention
from snippets.scaled_dot_product_attention import scaled_dot_product_attention

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/per_head_projections.py:code",
        "snippets/per_head_projections.py:convert",
        "snippets/per_head_projections.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


class PerHeadAttention(nn.Module):
    """Multi-head attention as the paper writes it: each head has its own
    W_i^Q, W_i^K, W_i^V.

    query: (B, L, d_model), key/value: (B, S, d_model) -> (B, L, d_model)
    attend: optional mask broadcastable to (B, L, S), keyword-only,
    True = may attend.
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads "
                f"({num_heads})"
            )
        d_k = d_model // num_heads

        def heads():  # h Linear(d_model, d_k), one per head
            return nn.ModuleList(
                nn.Linear(d_model, d_k) for _ in range(num_heads)
            )

        self.q_heads, self.k_heads, self.v_heads = heads(), heads(), heads()
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, *, attend=None):
        heads = [  # h tensors of (B, L, d_k)
            scaled_dot_product_attention(
                w_q(query), w_k(key), w_v(value), attend=attend
            )
            for w_q, w_k, w_v in zip(self.q_heads, self.k_heads, self.v_heads)
        ]
        # concat: (B, L, h * d_k) -> (B, L, d_model)
        return self.w_o(torch.cat(heads, dim=-1))
# --8<-- [end:code]


# --8<-- [start:convert]
def _roles(fused, per_head):
    """(fused Linear, its per-head Linears) for queries, keys and values."""
    return [
        (fused.w_q, per_head.q_heads),
        (fused.w_k, per_head.k_heads),
        (fused.w_v, per_head.v_heads),
    ]


@torch.no_grad()
def fused_to_per_head(fused, per_head):
    """Split each fused Linear weight (d_model, d_model) by rows: head i
    owns rows i*d_k:(i+1)*d_k, its (W_i)^T.

    This is exactly what .view(B, T, h, d_k) does to the fused projection's
    output.
    """
    for linear, heads in _roles(fused, per_head):
        weights = linear.weight.chunk(len(heads))
        biases = linear.bias.chunk(len(heads))
        for head, w, b in zip(heads, weights, biases):
            head.weight.copy_(w)
            head.bias.copy_(b)
    per_head.w_o.load_state_dict(fused.w_o.state_dict())
    return per_head


@torch.no_grad()
def per_head_to_fused(per_head, fused):
    """Stack the per-head Linear weights (each (W_i)^T, (d_k, d_model)) and
    biases by rows into one fused Linear per role."""
    for linear, heads in _roles(fused, per_head):
        linear.weight.copy_(torch.cat([head.weight for head in heads]))
        linear.bias.copy_(torch.cat([head.bias for head in heads]))
    fused.w_o.load_state_dict(per_head.w_o.state_dict())
    return fused
# --8<-- [end:convert]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads = 16, 4
    x = torch.randn(2, 5, d_model)  # (batch, tokens, d_model)

    fused = MultiHeadAttention(d_model, num_heads)
    per_head = fused_to_per_head(fused, PerHeadAttention(d_model, num_heads))
    same = torch.allclose(fused(x, x, x), per_head(x, x, x), atol=1e-6)
    print("fused -> per-head, same output:", same)

    # Fresh weights, this time the other way.
    per_head = PerHeadAttention(d_model, num_heads)
    fused = per_head_to_fused(per_head, MultiHeadAttention(d_model, num_heads))
    same = torch.allclose(fused(x, x, x), per_head(x, x, x), atol=1e-6)
    print("per-head -> fused, same output:", same)
    n_fused = sum(p.numel() for p in fused.parameters())
    n_per_head = sum(p.numel() for p in per_head.parameters())
    # the same weights, regrouped
    print("parameters, fused vs per-head:", n_fused, n_per_head)
# --8<-- [end:demo]
