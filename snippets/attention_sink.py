"""Attention sinks: a learned sink logit per head, and the StreamingLLM cache.

A sink logit adds exp(sink) to the softmax denominator, so a query may give
part of its weight to "nothing". The StreamingLLM cache (Xiao et al. 2023,
arXiv 2309.17453) keeps the first tokens (the sinks) and a window of the
most recent ones.
"""

BLOCKS = {
    "demo": [
        "snippets/attention_sink.py:code",
        "snippets/attention_sink.py:demo",
    ],
    "streaming": [
        "snippets/attention_sink.py:cache",
        "snippets/attention_sink.py:streaming_demo",
    ],
    "lse": [
        "snippets/attention_sink.py:code",
        "snippets/attention_sink.py:lse",
        "snippets/attention_sink.py:lse_demo",
    ],
}

# --8<-- [start:code]
import torch


def attention_with_sink(q, k, v, sink, *, attend=None):
    """softmax attention with one extra logit per head in the denominator.

    q: (B, h, L, d_k), k: (B, h, S, d_k), v: (B, h, S, d_v), sink: (h,)
    -> (B, h, L, d_v). Weight of key j:
        exp(s_j) / (exp(sink) + sum_i exp(s_i)),  s = q.k / sqrt(d_k)
    so a row sums to less than 1. The sink is compared with the scaled
    scores. attend: optional boolean (L, S) or broadcastable, True = may
    attend. A query with no key at all puts all its weight on the sink
    and gets zeros: no NaN.
    """
    # Scale q first: q @ k^T in float16 could overflow before the scale.
    scores = (q * q.size(-1) ** -0.5) @ k.transpose(-2, -1)  # (B,h,L,S)
    if attend is not None:
        scores = scores.masked_fill(~attend, float("-inf"))
    # The sink is one more column of logits, the same for every query
    # (as in the gpt-oss reference code: concatenate, softmax, drop).
    sink = sink.to(scores.dtype).view(-1, 1, 1)  # (h, 1, 1)
    sink = sink.expand(*scores.shape[:-1], 1)  # (B, h, L, 1)
    weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)
    # The sink has no value: drop its column before averaging values.
    return weights[..., :-1] @ v  # (B, h, L, d_v)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, h, L, S, d = 2, 3, 4, 6, 8
    q = torch.randn(B, h, L, d)
    k, v = torch.randn(2, B, h, S, d).unbind(0)
    sink = torch.tensor([-1.0, 0.0, 2.0])  # one learned logit per head
    attend = torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)
    out = attention_with_sink(q, k, v, sink, attend=attend)

    # The same thing as SDPA with one extra key: a zero key vector whose
    # score is set to the sink by an additive mask, and a zero value.
    k_extra = torch.cat([k, torch.zeros(B, h, 1, d)], dim=-2)
    v_extra = torch.cat([v, torch.zeros(B, h, 1, d)], dim=-2)
    bias = torch.zeros(h, L, S).masked_fill(~attend, float("-inf"))
    bias = torch.cat([bias, sink.view(h, 1, 1).expand(h, L, 1)], dim=-1)
    ref = F.scaled_dot_product_attention(q, k_extra, v_extra,
                                         attn_mask=bias)
    same = torch.allclose(out, ref, atol=1e-6)
    print("sink = extra key with score = sink and zero value:", same)

    # Values of 1 turn the output into each row's total weight.
    ones = torch.ones(B, h, S, 1)
    total = attention_with_sink(q, k, ones, sink, attend=attend)
    print("mean weight on real keys, per head:",
          [f"{w:.3f}" for w in total.mean(dim=(0, 2, 3)).tolist()])

    nothing = torch.zeros(L, S, dtype=torch.bool)  # no key at all
    out = attention_with_sink(q, k, v, sink, attend=nothing)
    print("query with no key -> zeros:", bool((out == 0).all()))
# --8<-- [end:demo]


# --8<-- [start:cache]
import torch


class SinkCache:
    """StreamingLLM's KV cache: the first n_sink tokens, plus the `window`
    most recent ones; the tokens in between are evicted.

    append() takes k, v: (B, h, n, d) for the next n tokens. The cache
    holds at most n_sink + window tokens. `positions` are the tokens'
    positions in the whole stream. StreamingLLM's code instead gives
    RoPE the positions inside the cache (0, 1, ..., len - 1): keys are
    cached before RoPE and rotated again at each step. This code has no
    positional encoding, so attention over the cache equals attention
    over the whole stream with streaming_mask (see below).
    """

    def __init__(self, *, n_sink, window):
        if n_sink < 0 or window < 1:
            raise ValueError("need n_sink >= 0 and window >= 1")
        self.n_sink, self.window = n_sink, window
        self.k = self.v = self.positions = None
        self.seen = 0  # tokens appended so far

    def append(self, k, v):
        # Evicts right away: append one token at a time, or let a chunk's
        # queries attend before appending the chunk (as StreamingLLM does).
        new = torch.arange(self.seen, self.seen + k.size(-2), device=k.device)
        self.seen += k.size(-2)
        if self.k is None:
            self.k, self.v, self.positions = k, v, new
        else:
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
            self.positions = torch.cat([self.positions, new])
        if len(self.positions) > self.n_sink + self.window:
            # The sinks stay first; keep them and the last `window`.
            n = len(self.positions)
            keep = torch.cat([
                torch.arange(self.n_sink, device=k.device),
                torch.arange(n - self.window, n, device=k.device),
            ])
            self.k, self.v = self.k[..., keep, :], self.v[..., keep, :]
            self.positions = self.positions[keep]


def streaming_mask(T, *, n_sink, window, device=None):
    """(T, T) boolean, True = may attend: what query i sees when it
    decodes with a SinkCache, written over the whole stream: keys
    j <= i that are sinks (j < n_sink) or among the last `window`
    (j > i - window)."""
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j <= i) & ((j < n_sink) | (j > i - window))
# --8<-- [end:cache]


# --8<-- [start:streaming_demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, h, T, d = 1, 2, 20, 8
    n_sink, window = 4, 6
    q, k, v = torch.randn(3, B, h, T, d).unbind(0)
    attend = streaming_mask(T, n_sink=n_sink, window=window)
    cache = SinkCache(n_sink=n_sink, window=window)
    same = True
    for t in range(T):  # decode one token at a time
        cache.append(k[..., t:t + 1, :], v[..., t:t + 1, :])
        out = F.scaled_dot_product_attention(q[..., t:t + 1, :],
                                             cache.k, cache.v)
        full = F.scaled_dot_product_attention(
            q[..., t:t + 1, :], k, v, attn_mask=attend[t:t + 1])
        same = same and torch.allclose(out, full, atol=1e-6)
    print("positions kept after 20 tokens:", cache.positions.tolist())
    print("cache size:", cache.k.size(-2), "=", n_sink, "+", window)
    print("every step equals the full sequence with streaming_mask:",
          same)
    print("row 19 of the mask (1 = may attend):")
    print("".join(str(int(a)) for a in attend[19]))
# --8<-- [end:streaming_demo]


# --8<-- [start:lse]
def add_sink_afterwards(out, lse, sink):
    """The sink added after plain attention, from the log-sum-exp.

    out: (B, h, L, d_v), softmax attention without a sink
    lse: (B, h, L), log of sum_j exp(s_j) over each row's scaled scores
    sink: (h,) -> (B, h, L, d_v). With the sink in the denominator the
    real keys keep a share exp(lse) / (exp(lse) + exp(sink)) of the row,
    which is sigmoid(lse - sink); a row with no key (lse = -inf) gets 0.
    """
    keep = torch.sigmoid(lse - sink.to(lse.dtype).view(-1, 1))  # (B,h,L)
    keep = keep.unsqueeze(-1).to(out.dtype)
    return torch.where(keep > 0, out * keep, 0.0)  # 0 even if out is NaN
# --8<-- [end:lse]


# --8<-- [start:lse_demo]
if __name__ == "__main__":
    import warnings

    from torch.nn.attention.flex_attention import (
        AuxRequest, create_block_mask, flex_attention)

    def causal(b, h, q_idx, kv_idx):  # True = may attend
        return kv_idx <= q_idx

    torch.manual_seed(0)
    B, h, T, d = 1, 3, 8, 4
    q, k, v = torch.randn(3, B, h, T, d).unbind(0)
    sink = torch.tensor([-1.0, 0.0, 2.0])  # one learned logit per head
    blocks = create_block_mask(causal, None, None, T, T, device="cpu")
    with warnings.catch_warnings():  # eager on a CPU: it says so, once
        warnings.filterwarnings("ignore", message="flex_attention called")
        out, aux = flex_attention(q, k, v, block_mask=blocks,
                                  return_aux=AuxRequest(lse=True))
    attend = torch.ones(T, T, dtype=torch.bool).tril()
    ref = attention_with_sink(q, k, v, sink, attend=attend)
    print("lse from flex_attention, o * sigmoid(lse - sink) = softmax "
          "over [scores, sink]:",
          torch.allclose(add_sink_afterwards(out, aux.lse, sink), ref,
                         atol=1e-6))

    # The same with the log-sum-exp computed by hand.
    scores = (q @ k.transpose(-2, -1)) / d**0.5
    scores = scores.masked_fill(~attend, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # (B, h, T)
    print("flex's lse = torch.logsumexp of the scaled scores:",
          torch.allclose(aux.lse, lse, atol=1e-5))
    print("share kept by the keys, query 0, per head:",
          [f"{w:.3f}" for w in torch.sigmoid(lse - sink.view(-1, 1))
           [0, :, 0].tolist()])
# --8<-- [end:lse_demo]
