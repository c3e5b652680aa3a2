"""KV-cache quantization: keys and values stored in 8 bits, with scales.

float8 (e4m3) with one scale per tensor or per KV head, as vLLM stores it;
integers (8 or 2 bits) with a scale and zero point per channel for the
keys and per token for the values, the split of KIVI (Liu et al. 2024).
Attention runs on the dequantized cache; its error is measured, bounded.
"""

BLOCKS = {
    "demo": [
        "snippets/kv_cache_quantization.py:code",
        "snippets/kv_cache_quantization.py:demo",
    ],
}

# --8<-- [start:code]
import math

import torch
import torch.nn.functional as F

FP8 = torch.float8_e4m3fn  # 1 byte: 4 exponent bits, 3 mantissa bits


def quantize_fp8(x, per_head=False):
    """x: (H_kv, S, d) -> (x8, scale): x8 in float8, x ~ x8 * scale.

    The scale maps the largest |x| (of the tensor, or of each KV head) to
    448, the largest float8_e4m3fn; scale: () or (H_kv, 1, 1), float32.
    """
    amax = x.abs().amax(dim=(-2, -1), keepdim=True) if per_head else \
        x.abs().amax()
    scale = amax.float().clamp(min=1e-12) / torch.finfo(FP8).max
    return (x.float() / scale).to(FP8), scale


def dequantize_fp8(x8, scale, dtype=torch.float32):
    return (x8.float() * scale).to(dtype)


def quantize_int(x, dim, bits=8):
    """Asymmetric integer codes 0 .. 2**bits - 1 over slices: min and max
    are taken along `dim`, so dim=-2 (over tokens) gives one scale and
    zero point per channel, dim=-1 (over channels) one per token.
    x: (H_kv, S, d) -> (codes, scale, low); codes are uint8 (a real
    kernel packs four 2-bit codes into a byte)."""
    low = x.float().amin(dim, keepdim=True)
    high = x.float().amax(dim, keepdim=True)
    levels = 2**bits - 1
    scale = (high - low).clamp(min=1e-12) / levels
    codes = torch.round((x.float() - low) / scale).clamp(0, levels)
    return codes.to(torch.uint8), scale, low


def dequantize_int(codes, scale, low, dtype=torch.float32):
    return (codes.float() * scale + low).to(dtype)


def attention(q, k, v):
    """q: (H, L, d), k, v: (H_kv, S, d), H a multiple of H_kv."""
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def error_bound(q, k_err, v_err, v_max):
    """A bound on |attention(q, k + E_K, v + E_V) - attention(q, k, v)|
    per query, from |E_K| <= k_err, |E_V| <= v_err and |v| <= v_max.

    Each score moves by at most D = ||q||_1 k_err / sqrt(d), so every
    softmax weight changes by a factor in [e^-2D, e^2D] and the weights
    move by at most e^2D - 1 in total. q: (H, L, d) -> (H, L, 1).
    """
    shift = q.abs().sum(-1, keepdim=True) * k_err / math.sqrt(q.size(-1))
    return v_err + torch.expm1(2 * shift) * v_max


def bytes_per_token(layers, kv_heads, d, bits):
    """KV-cache bytes per token: 2 (K and V) x layers x KV heads x d
    values of `bits` bits each (the scales come on top)."""
    return 2 * layers * kv_heads * d * bits // 8
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    heads, kv_heads, seq_len, d = 4, 2, 64, 32
    q = torch.randn(heads, 1, d)  # (H, L, d): one decoding step
    k = torch.randn(kv_heads, seq_len, d)  # (H_kv, S, d)
    k[..., 5] += 10.0  # an outlier channel, as KIVI finds in real keys
    v = torch.randn(kv_heads, seq_len, d)
    exact = attention(q, k, v)

    def fp8(x, per_head):
        return dequantize_fp8(*quantize_fp8(x, per_head))

    def integer(x, dim, bits):
        return dequantize_int(*quantize_int(x, dim, bits))

    methods = {  # name -> dequantized (K, V)
        "float8, one scale": (fp8(k, False), fp8(v, False)),
        "float8, scale per head": (fp8(k, True), fp8(v, True)),
    }
    for bits in (8, 2):  # V per token; K per token, then per channel
        for k_dim, k_name in ((-1, "per token"), (-2, "per channel")):
            methods[f"{bits}-bit, K {k_name}"] = (
                integer(k, k_dim, bits), integer(v, -1, bits))
    within = []
    for name, (k_hat, v_hat) in methods.items():
        error = (attention(q, k_hat, v_hat) - exact).abs()
        bound = error_bound(q, (k_hat - k).abs().max(),
                            (v_hat - v).abs().max(), v.abs().max())
        within.append(bool((error <= bound).all()))
        print(f"{name:23} max error {error.max():.1e}")
    print("every error within its bound:", all(within))

    # Llama 2 70B: 80 layers, 8 KV heads of width 128 (bytes per token).
    for name, bits in (("bfloat16", 16), ("float8, int8", 8), ("2-bit", 2)):
        print(f"{name}: {bytes_per_token(80, 8, 128, bits)} bytes per token")
# --8<-- [end:demo]
