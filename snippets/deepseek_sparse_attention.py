"""DeepSeek Sparse Attention: a lightning indexer picks the top-k keys.

DeepSeek-V3.2 (DeepSeek-AI 2025): a small indexer scores every earlier
token, I[t, s] = sum_j w[t, j] * relu(q[t, j] . k[s]); each query then
attends only to the k tokens with the highest scores (k = 2048 there), on
top of MLA's shared key/value entries. Selection through a boolean mask in
SDPA equals attention over the gathered keys.
"""

BLOCKS = {
    "demo": [
        "snippets/deepseek_sparse_attention.py:code",
        "snippets/deepseek_sparse_attention.py:demo",
    ],
}

# --8<-- [start:code]
import math

import torch
import torch.nn.functional as F


class LightningIndexer(torch.nn.Module):
    """Index scores I[t, s] = sum_j w[t, j] * relu(q[t, j] . k[s]).

    n_heads indexer heads of width head_dim; one key per token, shared by
    every indexer head (V3.2: 64 heads of width 128).
    """

    def __init__(self, d_model, n_heads, head_dim):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, head_dim
        self.wq = torch.nn.Linear(d_model, n_heads * head_dim, bias=False)
        self.wk = torch.nn.Linear(d_model, head_dim, bias=False)
        self.ww = torch.nn.Linear(d_model, n_heads, bias=False)

    def forward(self, x_q, x_kv):
        """x_q: (L, d_model), the last L of the S tokens x_kv: (S, d_model)
        -> (L, S) index scores."""
        q = self.wq(x_q).unflatten(-1, (self.n_heads, self.head_dim))
        k = self.wk(x_kv)  # (S, head_dim)
        w = self.ww(x_q)  # (L, n_heads)
        dots = torch.einsum("thd,sd->ths", q, k)  # (L, n_heads, S)
        return torch.einsum("th,ths->ts", w, dots.relu())


def top_k_mask(index_scores, top_k):
    """(L, S) -> (L, S) bool, True = selected: the top_k earlier (or same)
    positions by index score; a query with fewer earlier keys keeps all."""
    num_q, num_k = index_scores.shape
    dev = index_scores.device
    causal = torch.ones(num_q, num_k, dtype=torch.bool, device=dev)
    causal = causal.tril(num_k - num_q)  # the queries are the last L
    scores = index_scores.masked_fill(~causal, float("-inf"))
    best = scores.topk(min(top_k, num_k), dim=-1).indices  # (L, k)
    keep = torch.zeros_like(causal).scatter_(-1, best, True)
    return keep & causal  # -inf picks of a short row are dropped


def sparse_attention_masked(q, k, v, keep):
    """q: (H, L, d_k); k: (S, d_k), v: (S, d_v), one key/value entry per
    token shared by all H heads (MLA's MQA mode); keep: (L, S) bool
    -> (H, L, d_v). SDPA computes all L x S scores, then masks them."""
    return F.scaled_dot_product_attention(
        q, k[None], v[None], attn_mask=keep, enable_gqa=True
    )


def sparse_attention_gathered(q, k, v, keep, top_k):
    """The same result from only the selected keys: gather top_k rows of
    K and V for each query and compute L x top_k scores."""
    top_k = min(top_k, k.size(0))
    # keep has at most top_k True per row: sort them first, then take k.
    idx = keep.float().topk(top_k, dim=-1).indices  # (L, top_k)
    valid = keep.gather(-1, idx)  # False where a row had fewer keys
    k_sel, v_sel = k[idx], v[idx]  # (L, top_k, d_k), (L, top_k, d_v)
    q = q / math.sqrt(q.size(-1))  # scale before the product: in float16
    scores = torch.einsum("hld,lkd->hlk", q, k_sel)  # q.k alone may overflow
    scores = scores.masked_fill(~valid, float("-inf"))
    return torch.einsum("hlk,lkd->hld", scores.softmax(-1), v_sel)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    seq_len, d_model, heads, d_k, top_k = 8, 16, 4, 8, 3
    x = torch.randn(seq_len, d_model)  # (S, d_model), a prefill: L = S
    indexer = LightningIndexer(d_model, n_heads=2, head_dim=4)
    with torch.no_grad():
        index_scores = indexer(x, x)  # (L, S)
    keep = top_k_mask(index_scores, top_k)  # (L, S) bool
    print("keys per query:", keep.sum(-1).tolist())
    q = torch.randn(heads, seq_len, d_k)  # (H, L, d_k)
    k, v = torch.randn(2, seq_len, d_k).unbind(0)  # (S, d_k) each
    masked = sparse_attention_masked(q, k, v, keep)
    gathered = sparse_attention_gathered(q, k, v, keep, top_k)
    print("masked SDPA equals the gathered keys:",
          torch.allclose(masked, gathered, atol=1e-6))
    dense = F.scaled_dot_product_attention(
        q, k[None], v[None], is_causal=True, enable_gqa=True
    )
    everything = top_k_mask(index_scores, top_k=seq_len)
    print("k >= L gives dense causal attention:",
          torch.allclose(sparse_attention_masked(q, k, v, everything),
                         dense, atol=1e-6))
# --8<-- [end:demo]
