"""Multi-query and grouped-query attention: fewer key/value heads than query
heads."""

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


def grouped_query_attention(q, k, v, *, attend=None):
    """q: (B, H_q, L, d_k), k/v: (B, H_kv, S, d_k) -> (B, H_q, L, d_k).

    H_q must be a multiple of H_kv. H_kv == 1 is multi-query attention,
    H_kv == H_q is ordinary multi-head attention. attend: optional mask,
    keyword-only, as in scaled_dot_product_attention (which scales q
    first: float16 scores overflow only if the scaled scores do).
    """
    h_q, h_kv = q.size(-3), k.size(-3)
    if h_q % h_kv != 0:
        raise ValueError(
            f"query heads ({h_q}) must be a multiple of key/value heads "
            f"({h_kv})"
        )
    group = h_q // h_kv
    # Query heads g*group .. (g+1)*group - 1 share KV head g:
    # repeat_interleave gives [kv0, kv0, kv1, kv1, ...]. (.repeat would
    # tile [kv0, kv1, kv0, kv1]: a different model.)
    k = k.repeat_interleave(group, dim=-3)  # (B, H_q, S, d_k)
    v = v.repeat_interleave(group, dim=-3)
    return scaled_dot_product_attention(q, k, v, attend=attend)


class GroupedQueryAttention(nn.Module):
    """num_kv_heads = 1: multi-query attention; 1 < num_kv_heads <
    num_heads: grouped-query attention.

    query: (B, L, d_model), key/value: (B, S, d_model) -> (B, L, d_model);
    attend: optional mask, keyword-only, True = may attend.
    """

    def __init__(self, d_model, num_heads, num_kv_heads):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads "
                f"({num_heads})"
            )
        if num_heads % num_kv_heads != 0:
            raise ValueError(
                f"num_heads ({num_heads}) must be a multiple of "
                f"num_kv_heads ({num_kv_heads})"
            )
        self.h, self.h_kv = num_heads, num_kv_heads
        self.d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        # Smaller K/V projections: this is where the memory of the KV cache
        # is saved.
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, *, attend=None):
        b, length, _ = query.shape  # (B, L, d_model)
        s = key.size(1)
        q = self.w_q(query).view(b, length, self.h, self.d_k)
        k = self.w_k(key).view(b, s, self.h_kv, self.d_k)
        v = self.w_v(value).view(b, s, self.h_kv, self.d_k)
        # (B, H_q, L, d_k) and (B, H_kv, S, d_k)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        # (B, H_q, L, d_k)
        heads = grouped_query_attention(q, k, v, attend=attend)
        merged = heads.transpose(1, 2).reshape(b, length, self.h * self.d_k)
        return self.w_o(merged)  # (B, L, d_model)
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
        ours = grouped_query_attention(q, k, v, attend=causal)
        ref = F.scaled_dot_product_attention(
            q, k, v, attn_mask=causal, enable_gqa=True
        )
        print(name, "output shape:", tuple(ours.shape))
        same = torch.allclose(ours, ref, atol=1e-6)
        print(name, "matches SDPA enable_gqa=True:", same)

    # 2 KV heads for 8 query heads, tiled with .repeat: [kv0, kv1, kv0, ...]
    k2, v2 = torch.randn(2, 2, 2, 5, 16).unbind(0)  # (batch, 2, S, d_k)
    grouped = F.scaled_dot_product_attention(
        q, k2, v2, attn_mask=causal, enable_gqa=True
    )
    tiled = F.scaled_dot_product_attention(
        q, k2.repeat(1, 4, 1, 1), v2.repeat(1, 4, 1, 1), attn_mask=causal
    )
    same = torch.allclose(tiled, grouped, atol=1e-6)
    print("tiling with .repeat instead matches:", same)

    gqa = GroupedQueryAttention(d_model=64, num_heads=8, num_kv_heads=2)
    x = torch.randn(2, 5, 64)
    out = gqa(x, x, x, attend=causal)
    print("module output shape:", tuple(out.shape))  # (2, 5, 64)
    # 16 vs 64 rows: keys and values (and a KV cache of them) are 4 times
    # smaller.
    print("K/V projection rows, GQA vs MHA:", gqa.w_k.out_features, 64)
# --8<-- [end:demo]
