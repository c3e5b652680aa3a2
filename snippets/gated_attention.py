"""Gated attention: a sigmoid gate on each head's attention output.

Qiu et al. (2025, arXiv 2505.06708) multiply the output of scaled dot-product
attention, head by head and element by element, by sigmoid(x W_theta), a gate
computed from the same token that made the query. Qwen3-Next computes that
gate in q_proj, which is twice as wide: for every head, its query and then
its gate, [q_1 | g_1 | q_2 | g_2 | ...] (transformers' modeling_qwen3_next.py).
"""

BLOCKS = {
    "demo": [
        "snippets/gated_attention.py:code",
        "snippets/gated_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn as nn
import torch.nn.functional as F


def split_query_gate(qg, num_heads):
    """q_proj's output -> queries and gates, in Qwen3-Next's layout.

    qg: (B, T, h * 2 * d_k), per head [q_i | g_i] side by side
    -> q, gate: (B, T, h, d_k) each
    """
    B, T, _ = qg.shape
    q, gate = qg.view(B, T, num_heads, -1).chunk(2, dim=-1)
    return q, gate


class GatedAttention(nn.Module):
    """Multi-head self-attention whose head outputs are multiplied by a
    sigmoid gate before the output projection. x: (B, T, d_model)."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        # Twice as wide: every head's query and its gate.
        self.q_proj = nn.Linear(d_model, 2 * d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.o_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, is_causal=True):
        B, T, _ = x.shape
        q, gate = split_query_gate(self.q_proj(x), self.h)  # (B,T,h,d_k)
        k = self.k_proj(x).view(B, T, self.h, self.d_k)
        v = self.v_proj(x).view(B, T, self.h, self.d_k)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
            is_causal=is_causal)  # (B, h, T, d_k)
        # The gate: one number in (0, 1) per head, token and channel.
        out = out.transpose(1, 2) * torch.sigmoid(gate)  # (B, T, h, d_k)
        return self.o_proj(out.reshape(B, T, -1))  # (B, T, d_model)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, d_model, h = 2, 5, 32, 4  # d_k = 8
    layer = GatedAttention(d_model, h)
    x = torch.randn(B, T, d_model)

    # Where each head's query and gate come from in q_proj's output:
    cols = torch.arange(2.0 * d_model).view(1, 1, -1)  # column numbers
    q_cols, g_cols = split_query_gate(cols, h)  # (1, 1, h, d_k)
    for i in (0, 1):
        q, g = q_cols[0, 0, i], g_cols[0, 0, i]
        print(f"head {i}: query = columns {q[0]:.0f}..{q[-1]:.0f},",
              f"gate = columns {g[0]:.0f}..{g[-1]:.0f}")

    # The same layer written out: softmax of the scores, then the gate.
    d_k = d_model // h
    qg = layer.q_proj(x).view(B, T, h, 2, d_k)  # [..., 0, :] = q_i
    q, g = qg[..., 0, :], qg[..., 1, :]  # (B, T, h, d_k)
    k = layer.k_proj(x).view(B, T, h, d_k)
    v = layer.v_proj(x).view(B, T, h, d_k)
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / d_k**0.5
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
    heads = torch.einsum("bhij,bjhd->bihd", weights, v) * g.sigmoid()
    ref = layer.o_proj(heads.reshape(B, T, d_model))
    print("equals the softmax einsum reference:",
          torch.allclose(layer(x), ref, atol=1e-6))

    # A gate stuck at 1 leaves plain multi-head attention: PyTorch's own.
    mha = nn.MultiheadAttention(d_model, h, batch_first=True)
    rows = q_cols.flatten().long()  # the query rows of q_proj, head by head
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.q_proj.weight[rows],
                                            layer.k_proj.weight,
                                            layer.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([layer.q_proj.bias[rows],
                                          layer.k_proj.bias,
                                          layer.v_proj.bias]))
        mha.out_proj.load_state_dict(layer.o_proj.state_dict())
        gates = g_cols.flatten().long()
        layer.q_proj.weight[gates] = 0.0
        layer.q_proj.bias[gates] = 100.0  # 1 - sigmoid(100) ~ e^-100
    causal = nn.Transformer.generate_square_subsequent_mask(T)
    plain, _ = mha(x, x, x, attn_mask=causal, need_weights=False)
    print("gate = 1 equals nn.MultiheadAttention:",
          torch.allclose(layer(x), plain, atol=1e-6))
# --8<-- [end:demo]
