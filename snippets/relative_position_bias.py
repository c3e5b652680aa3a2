"""Relative positions inside attention: Shaw et al.'s clipped relative keys
and T5's bucketed bias, both passed to SDPA as a float mask."""

BLOCKS = {
    "demo": [
        "snippets/relative_position_bias.py:code",
        "snippets/relative_position_bias.py:shaw",
        "snippets/relative_position_bias.py:demo",
    ],
    "t5": [
        "snippets/relative_position_bias.py:code",
        "snippets/relative_position_bias.py:t5",
        "snippets/relative_position_bias.py:t5_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F
from torch import nn


def relative_positions(num_queries, num_keys=None, *, device=None):
    """(L, S) integer table of j - i, key position minus query position.

    Query row r is at position i = S - L + r: the last L of S positions,
    as when L new tokens follow S - L cached ones (L == S: self-attention).
    """
    s = num_queries if num_keys is None else num_keys
    if num_queries > s:
        raise ValueError(f"{num_queries} queries but only {s} keys")
    i = torch.arange(s - num_queries, s, device=device)[:, None]  # (L, 1)
    j = torch.arange(s, device=device)[None, :]  # (1, S)
    return j - i
# --8<-- [end:code]


# --8<-- [start:shaw]
class ShawRelativeKeys(nn.Module):
    """Relative position keys of Shaw et al. (2018), eq. (4) and (5):

    e_ij = q_i (k_j + a_ij)^T / sqrt(d),  a_ij = w_clip(j - i, k),

    with 2k + 1 learned vectors w_-k .. w_k of width d, shared by all heads
    (section 3.3). forward(q, num_keys) returns the second term of eq. (5),
    q_i a_ij^T / sqrt(d), as an additive mask (B, H, L, S): SDPA scales
    only its own q k^T, so this term comes already scaled.
    """

    def __init__(self, head_dim, max_distance):
        super().__init__()
        if max_distance < 0:
            raise ValueError(f"max_distance must be >= 0: {max_distance}")
        self.max_distance = max_distance  # k of the paper
        self.w = nn.Embedding(2 * max_distance + 1, head_dim)

    def forward(self, q, num_keys):
        k = self.max_distance
        rel = relative_positions(q.size(-2), num_keys, device=q.device)
        row = rel.clamp(-k, k) + k  # (L, S): a_ij is row `row` of w
        q = q * q.size(-1) ** -0.5  # scale first: no overflow in float16
        # Only 2k + 1 vectors exist: score each query against all of them,
        # (..., L, 2k + 1), then pick per key; never (L, S, d) copies.
        scores = q @ self.w.weight.to(q.dtype).T
        return scores.gather(-1, row.expand(*scores.shape[:-1], num_keys))


def shaw_attention(q, k, v, relative_keys, *, attend=None):
    """q (B, H, L, d), k/v (B, H, S, d) -> (B, H, L, d). attend: boolean,
    broadcastable to (B, H, L, S), True = may attend (SDPA convention)."""
    bias = relative_keys(q, k.size(-2))  # (B, H, L, S)
    if attend is not None:
        bias = bias.masked_fill(~attend, float("-inf"))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
# --8<-- [end:shaw]


# --8<-- [start:t5]
import math


def t5_relative_position_bucket(relative_position, *, bidirectional,
                                num_buckets=32, max_distance=128):
    """Bucket index of each relative position j - i, as T5 computes it.

    Half of the buckets (of each direction) hold the exact distances
    0, 1, ..., the other half grow on a log scale up to max_distance, and
    every distance beyond shares the last bucket. Bidirectional (encoder):
    keys after the query get a second set of buckets. Causal (decoder):
    only the distance back counts; keys after the query get bucket 0.
    """
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        bucket = bucket + (relative_position > 0) * num_buckets
        n = relative_position.abs()
    else:
        n = (-relative_position).clamp(min=0)  # distance back; future: 0
    max_exact = num_buckets // 2
    # log(n / max_exact) / log(max_distance / max_exact) runs from 0 to 1
    # over max_exact..max_distance; clamp(min=...) only keeps log(0) out
    # of the rows that use the exact bucket anyway.
    log_scale = (torch.log(n.clamp(min=max_exact).float() / max_exact)
                 / math.log(max_distance / max_exact))
    large = max_exact + (log_scale * (num_buckets - max_exact)).long()
    large = large.clamp(max=num_buckets - 1)
    return bucket + torch.where(n < max_exact, n, large)


class T5RelativePositionBias(nn.Module):
    """One learned scalar per (bucket, head), added to the scores.

    forward(L, S) -> (H, L, S) float mask. Causal (decoder): keys after the
    query get -inf, the causal mask folded in. T5 does not divide q k^T by
    sqrt(d): call SDPA with scale=1.0.
    """

    def __init__(self, num_heads, *, bidirectional, num_buckets=32,
                 max_distance=128):
        super().__init__()
        self.bidirectional = bidirectional
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.bias = nn.Embedding(num_buckets, num_heads)

    def forward(self, num_queries, num_keys=None):
        device = self.bias.weight.device
        rel = relative_positions(num_queries, num_keys, device=device)
        buckets = t5_relative_position_bucket(
            rel, bidirectional=self.bidirectional,
            num_buckets=self.num_buckets, max_distance=self.max_distance)
        bias = self.bias(buckets).permute(2, 0, 1)  # (L, S, H) -> (H, L, S)
        if not self.bidirectional:
            bias = bias.masked_fill(rel > 0, float("-inf"))
        return bias
# --8<-- [end:t5]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    B, H, T, d, k_max = 2, 4, 7, 16, 2
    q, k, v = torch.randn(3, B, H, T, d, dtype=torch.float64)
    relative_keys = ShawRelativeKeys(d, max_distance=k_max).double()
    print(f"clip(j - i, {k_max}) for 5 tokens:")
    print(relative_positions(5).clamp(-k_max, k_max))
    print("learned vectors, 2k + 1:", relative_keys.w.num_embeddings)

    out = shaw_attention(q, k, v, relative_keys)
    # Directly, eq. (4): e_ij = q_i (k_j + a_ij)^T / sqrt(d).
    a = relative_keys.w(relative_positions(T).clamp(-k_max, k_max) + k_max)
    e = (q[..., :, None, :] * (k[..., None, :, :] + a)).sum(-1) / d**0.5
    direct = torch.softmax(e, dim=-1) @ v
    print("SDPA with the bias equals eq. (4):", torch.allclose(out, direct))

    causal = torch.ones(T, T, dtype=torch.bool).tril()
    e = e.masked_fill(~causal, float("-inf"))
    print("and with a causal mask:",
          torch.allclose(shaw_attention(q, k, v, relative_keys,
                                        attend=causal),
                         torch.softmax(e, dim=-1) @ v))
# --8<-- [end:demo]


# --8<-- [start:t5_demo]
if __name__ == "__main__":
    rel = torch.tensor([-128, -40, -16, -8, -7, -1, 0, 1, 7, 8, 16, 40, 128])
    print("j - i ", " ".join(f"{x:4d}" for x in rel.tolist()))
    for bidirectional, name in ((True, "bidir."), (False, "causal")):
        buckets = t5_relative_position_bucket(rel, bidirectional=bidirectional)
        print(name, " ".join(f"{x:4d}" for x in buckets.tolist()))

    torch.manual_seed(0)
    B, H, T, d = 2, 4, 9, 16
    q, k, v = torch.randn(3, B, H, T, d, dtype=torch.float64)
    for bidirectional in (True, False):
        t5_bias = T5RelativePositionBias(H, bidirectional=bidirectional)
        bias = t5_bias.double()(T)  # (H, T, T); causal: -inf where j > i
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                             scale=1.0)
        scores = q @ k.transpose(-2, -1) + bias  # T5: no 1 / sqrt(d)
        direct = torch.softmax(scores, dim=-1) @ v
        print(f"bidirectional={bidirectional}: SDPA equals scores + bias:",
              torch.allclose(out, direct))
# --8<-- [end:t5_demo]
