"""Additive (Bahdanau) attention: a small feed-forward net scores each pair.

Bahdanau, Cho and Bengio 2014 (arXiv 1409.0473): e_ij = v^T tanh(W s_{i-1}
+ U h_j), the decoder's previous state s_{i-1} against each encoder
annotation h_j. Written here with row vectors: score(q, k) =
tanh(q W_q + k W_k) . v.
"""

BLOCKS = {
    "demo": [
        "snippets/additive_attention.py:code",
        "snippets/additive_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


class AdditiveAttention(nn.Module):
    """score(q, k) = v . tanh(q W_q + k W_k), softmax over the keys.

    q: (B, L, d_q), k: (B, S, d_k), value: (B, S, d_v).
    W_q: d_q x d_attn, W_k: d_k x d_attn, v: d_attn (no biases, as in
    the paper's score). Each nn.Linear stores W^T as its weight.
    """

    def __init__(self, d_q, d_k, d_attn):
        super().__init__()
        self.w_q = nn.Linear(d_q, d_attn, bias=False)
        self.w_k = nn.Linear(d_k, d_attn, bias=False)
        self.v = nn.Linear(d_attn, 1, bias=False)

    def scores(self, q, k):
        """(B, L, d_q), (B, S, d_k) -> (B, L, S)."""
        # Broadcast every query against every key: (B, L, S, d_attn).
        # Unlike a dot product this keeps L * S * d_attn numbers.
        hidden = torch.tanh(self.w_q(q)[:, :, None, :]
                            + self.w_k(k)[:, None, :, :])
        return self.v(hidden).squeeze(-1)

    def forward(self, q, k, value, *, attend=None):
        """-> context (B, L, d_v), weights (B, L, S).

        attend: optional boolean (B, L, S) or broadcastable, True = may
        attend. A query with no key at all gets zeros, not NaN.
        """
        scores = self.scores(q, k)
        if attend is not None:
            scores = scores.masked_fill(~attend, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if attend is not None:  # all -inf rows are NaN: zero them
            weights = weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)
        return weights @ value, weights
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    # One decoder state against three encoder annotations, weights by hand.
    attn = AdditiveAttention(d_q=2, d_k=2, d_attn=2)
    with torch.no_grad():
        attn.w_q.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]).T)
        attn.w_k.weight.copy_(torch.tensor([[0.5, -0.5], [1.0, 0.5]]).T)
        attn.v.weight.copy_(torch.tensor([[1.0, -1.0]]))
    q = torch.tensor([[[1.0, 0.0]]])  # (B=1, L=1, d_q=2)
    k = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])  # (1, 3, 2)
    value = torch.tensor([[[1.0], [2.0], [3.0]]])  # (1, 3, 1)
    context, weights = attn(q, k, value)
    print("scores: ", [f"{s:.4f}" for s in attn.scores(q, k)[0, 0].tolist()])
    print("weights:", [f"{w:.4f}" for w in weights[0, 0].tolist()])
    print(f"context: {context.item():.4f}")
    print("weights sum to 1:", torch.allclose(weights.sum(-1),
                                              torch.ones(1, 1)))
# --8<-- [end:demo]
