"""NoPE: attention with no positional encoding. Without a mask it cannot
tell the order of its inputs (permutation equivariance); the causal mask
breaks that symmetry. Interleaved NoPE layers as Llama 4 and SmolLM3
configure them (`no_rope_layers`), and Llama 4's query scale on them."""

BLOCKS = {
    "demo": [
        "snippets/nope.py:code",
        "snippets/nope.py:demo",
    ],
    "layers": [
        "snippets/nope.py:code",
        "snippets/nope.py:layers",
    ],
}

# --8<-- [start:code]
import math

import torch
import torch.nn.functional as F


def nope_attention(x, w_q, w_k, w_v, *, causal):
    """One head of self-attention with no positions at all.

    x (..., T, d_model); w_q, w_k (d_model, d_k); w_v (d_model, d_v).
    Returns (..., T, d_v). Nothing in it depends on where a token is,
    except the causal mask when causal=True.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d_k), (..., T, d_v)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def no_rope_layers(num_layers, interval=4):
    """Hugging Face's `no_rope_layers` default (Llama 4, SmolLM3): 1 = the
    layer uses RoPE, 0 = a NoPE layer, one every `interval` layers."""
    return [int((i + 1) % interval != 0) for i in range(num_layers)]


def nope_query_scale(positions, floor_scale=8192, attn_scale=0.1):
    """Llama 4's `attn_temperature_tuning` on its NoPE layers: the query at
    position p (from 0) is multiplied by
    log(1 + floor((p + 1) / floor_scale)) * attn_scale + 1.
    float32, as Meta and Hugging Face compute it (positions exact below
    2**24); multiply and cast back: (q * scale[:, None]).to(q.dtype)."""
    steps = torch.floor((positions.float() + 1) / floor_scale)
    return torch.log1p(steps) * attn_scale + 1
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    T, d = 6, 8
    x = torch.randn(T, d, dtype=torch.float64)  # six tokens, no positions
    w_q, w_k, w_v = torch.randn(3, d, d, dtype=torch.float64)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])  # shuffle the tokens

    for causal in (False, True):
        out = nope_attention(x, w_q, w_k, w_v, causal=causal)
        shuffled = nope_attention(x[perm], w_q, w_k, w_v, causal=causal)
        print(f"causal={causal}: shuffling the input shuffles the output:",
              torch.allclose(shuffled, out[perm]))

    # Haviv et al.: the causal mask lets a token count what it can see.
    # A first token with value 1, five identical tokens with value 0, and
    # equal scores: token i gets the average of its i values, 1 / i.
    v = torch.zeros(T, 1, dtype=torch.float64)
    v[0] = 1.0
    q = k = torch.zeros(T, 4, dtype=torch.float64)  # every score is 0
    for causal in (False, True):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        print(f"causal={causal}:", [round(o, 4) for o in out[:, 0].tolist()])
# --8<-- [end:demo]


# --8<-- [start:layers]
if __name__ == "__main__":
    layers = no_rope_layers(48)  # Llama4TextConfig: 48 layers, interval 4
    nope = [i + 1 for i, rope in enumerate(layers) if not rope]
    print("no_rope_layers[:8]:", layers[:8])
    print(f"NoPE layers ({len(nope)} of 48):", nope[:4], "...", nope[-1])
    print("SmolLM3, 36 layers:", no_rope_layers(36).count(0), "NoPE layers")

    positions = torch.tensor([0, 8190, 8191, 65535, 1_048_575])
    scale = nope_query_scale(positions)
    for p, s in zip(positions.tolist(), scale.tolist()):
        print(f"query at position {p:>9}: times {s:.4f}")
    # Scaling the query by s multiplies its scores by s: in SDPA, the same
    # as scale = s / sqrt(d) for that query.
    q, k, v = torch.randn(3, 1, 1, 5, 8, dtype=torch.float64)
    s = 1.2
    print("q * s is SDPA with scale s / sqrt(d):", torch.allclose(
        F.scaled_dot_product_attention(q * s, k, v),
        F.scaled_dot_product_attention(q, k, v, scale=s / math.sqrt(8))))
# --8<-- [end:layers]
