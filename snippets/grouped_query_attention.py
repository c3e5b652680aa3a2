"""Multi-query and grouped-query attention: fewer key/value heads than query heads."""

from snippets.scaled_dot_product_attention import scaled_dot_product_attention

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/grouped_query_attention.py:code",
        "snippets/grouped_query_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


def grouped_query_attention(q, k, v, attend=None):
    """q: (B, H_q, L, d_k), k/v: (B, H_kv, S, d_k) with H_q a multiple of H_kv -> (B, H_q, L, d_k).

    H_kv == 1 is multi-query attention, H_kv == H_q is ordinary multi-head attention.
    """
    group = q.size(-3) // k.size(-3)
    assert group * k.size(-3) == q.size(-3), "query heads must be a multiple of key/value heads"
    # Query heads g*group .. (g+1)*group - 1 share KV head g: repeat_interleave gives
    # [kv0, kv0, kv1, kv1, ...]. (.repeat would tile [kv0, kv1, kv0, kv1]: a different model.)
    k = k.repeat_interleave(group, dim=-3)  # (B, H_q, S, d_k)
    v = v.repeat_interleave(group, dim=-3)
    return scaled_dot_product_attention(q, k, v, attend)


class GroupedQueryAttention(nn.Module):
    """num_kv_heads = 1: multi-query attention; 1 < num_kv_heads < num_heads: grouped-query."""

    def __init__(self, d_model, num_heads, num_kv_heads):
        super().__init__()
        assert d_model % num_heads == 0 and num_heads % num_kv_heads == 0
        self.h, self.h_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        # Smaller K/V projections: this is where the memory of the KV cache is saved.
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, attend=None):
        b, length, _ = query.shape  # (B, L, d_model)
        s = key.size(1)
        q = self.w_q(query).view(b, length, self.h, self.d_k).transpose(1, 2)  # (B, H_q, L, d_k)
        k = self.w_k(key).view(b, s, self.h_kv, self.d_k).transpose(1, 2)  # (B, H_kv, S, d_k)
        v = self.w_v(value).view(b, s, self.h_kv, self.d_k).transpose(1, 2)
        heads = grouped_query_attention(q, k, v, attend)  # (B, H_q, L, d_k)
        return self.w_o(heads.transpose(1, 2).reshape(b, length, self.h * self.d_k))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(2, 8, 5, 16)  # (batch, 8 query heads, L, d_k)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    for kv_heads, name in [(1, "multi-query"), (2, "grouped-query")]:
        k = torch.randn(2, kv_heads, 5, 16)  # (batch, kv_heads, S, d_k)
        v = torch.randn(2, kv_heads, 5, 16)
        ours = grouped_query_attention(q, k, v, causal)
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=causal, enable_gqa=True)
        print(name, "output shape:", tuple(ours.shape))
        print(name, "matches SDPA enable_gqa=True:", torch.allclose(ours, ref, atol=1e-6))

    k_tiled, v_tiled = k.repeat(1, 4, 1, 1), v.repeat(1, 4, 1, 1)  # [kv0, kv1, kv0, kv1, ...]
    tiled = F.scaled_dot_product_attention(q, k_tiled, v_tiled, attn_mask=causal)
    print("tiling with .repeat instead matches:", torch.allclose(tiled, ref, atol=1e-6))

    gqa = GroupedQueryAttention(d_model=64, num_heads=8, num_kv_heads=2)
    x = torch.randn(2, 5, 64)
    print("module output shape:", tuple(gqa(x, x, x, causal).shape))  # (2, 5, 64)
    # 16 vs 64 rows: keys and values (and a KV cache of them) are 4 times smaller.
    print("K/V projection rows, GQA vs MHA:", gqa.w_k.out_features, 64)
# --8<-- [end:demo]
