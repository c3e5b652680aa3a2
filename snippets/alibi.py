"""ALiBi: per-head linear distance penalties added to the attention scores,
passed to F.scaled_dot_product_attention as one float mask."""

BLOCKS = {
    "demo": [
        "snippets/alibi.py:code",
        "snippets/alibi.py:demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


def alibi_slopes(num_heads, *, dtype=torch.float32, device=None):
    """(num_heads,) slopes m of Press et al. (2021), one per head.

    n a power of 2: the geometric sequence that starts at 2^(-8/n) and has
    that same ratio, 2^(-8/n), 2^(-16/n), ..., 2^-8 (8 heads: 1/2 ... 1/256).
    Other n, as in the authors' code: the slopes for p, the largest power
    of 2 below n, then every other slope of the sequence for 2p (these
    interleave with the first ones, the first of them above all of them),
    as many as are still missing.
    """
    if num_heads < 1:
        raise ValueError(f"num_heads must be at least 1, got {num_heads}")

    def geometric(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    p = 1 << (num_heads.bit_length() - 1)  # largest power of 2 <= num_heads
    slopes = geometric(p) + geometric(2 * p)[0::2][: num_heads - p]
    return torch.tensor(slopes, dtype=dtype, device=device)


def alibi_bias(num_heads, num_queries, num_keys=None, *,
               dtype=torch.float32, device=None):
    """(H, L, S) float mask: m_h * (j - i) = -m_h * (i - j) for keys j <= i,
    -inf for keys j > i: the causal mask is folded into the bias.

    Query row r is at position i = S - L + r: the last L of S positions,
    as when L new tokens follow S - L cached ones (L == S: plain causal).
    At least float32 even for half-precision q: SDPA on the CPU accepts
    that, and bfloat16 keeps only 8 significant bits (2 to 3 decimal
    digits) of m_h * (i - j).
    """
    s = num_queries if num_keys is None else num_keys
    if num_queries > s:
        raise ValueError(f"{num_queries} queries but only {s} keys")
    work = torch.promote_types(dtype, torch.float32)
    i = torch.arange(s - num_queries, s, device=device)[:, None]  # (L, 1)
    j = torch.arange(s, device=device)[None, :]  # (1, S)
    slopes = alibi_slopes(num_heads, dtype=work, device=device)
    slopes = slopes[:, None, None]  # (H, 1, 1)
    bias = slopes * (j - i)  # (H, L, S): 0 on the diagonal, < 0 before it
    return bias.masked_fill(j > i, float("-inf"))


def alibi_attention(q, k, v):
    """Causal attention with ALiBi. q (B, H, L, d), k and v (B, H, S, d)
    -> (B, H, L, d). No position embeddings anywhere else."""
    bias = alibi_bias(q.size(-3), q.size(-2), k.size(-2), dtype=q.dtype,
                      device=q.device)  # (H, L, S)
    if q.device.type != "cpu":  # CUDA kernels want q's dtype (untested)
        bias = bias.to(q.dtype)
    # SDPA adds attn_mask to q k^T / sqrt(d). The mask is already causal:
    # never pass is_causal=True as well.
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    for n in (8, 6, 12, 5):
        exponents = alibi_slopes(n, dtype=torch.float64).log2().tolist()
        print(f"{n} heads, log2 of the slopes:",
              " ".join(f"{e:g}" for e in exponents))

    print("bias of head 0 (slope 1/2), 4 tokens:")
    for row in alibi_bias(8, 4)[0].tolist():
        print(" ".join(f"{x:5.1f}" for x in row))

    torch.manual_seed(0)
    B, H, T, d = 2, 12, 7, 16
    q, k, v = torch.randn(3, B, H, T, d, dtype=torch.float64)
    out = alibi_attention(q, k, v)

    # Directly: scores + bias, then a masked softmax.
    slopes = alibi_slopes(H, dtype=torch.float64)[:, None, None]
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    scores = q @ k.transpose(-2, -1) / d**0.5 - slopes * (i - j)
    scores = scores.masked_fill(j > i, float("-inf"))
    direct = torch.softmax(scores, dim=-1) @ v
    print("SDPA with the ALiBi mask equals scores + bias:",
          torch.allclose(out, direct))

    # The authors' code adds m * j, the same row for every query: it differs
    # from -m (i - j) by m * i per row, and softmax ignores a row constant.
    same_rows = (slopes * j).masked_fill(j > i, float("-inf"))
    official = F.scaled_dot_product_attention(q, k, v, attn_mask=same_rows)
    print("the authors' bias m * j gives the same output:",
          torch.allclose(official, out))
# --8<-- [end:demo]
