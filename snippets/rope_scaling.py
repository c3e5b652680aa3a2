"""RoPE scaling: the frequencies of linear (position interpolation), NTK,
dynamic NTK, YaRN, Llama 3.1 and LongRoPE scaling, read from a
`rope_parameters` dict as Hugging Face Transformers writes it.

"ntk" (static NTK-aware scaling) is this module's own name: Transformers
has no such rope_type; its "dynamic" type uses the same base with a factor
that grows with the sequence length."""

BLOCKS = {
    "demo": [
        "snippets/rope_scaling.py:code",
        "snippets/rope_scaling.py:demo",
    ],
    "checks": [
        "snippets/rope_scaling.py:code",
        "snippets/rope_scaling.py:checks",
    ],
}

# --8<-- [start:code]
import math

import torch


def rope_frequencies(head_dim, rope_theta=10000.0):
    """theta_c = rope_theta^(-2c / head_dim), c = 0 .. head_dim/2 - 1.

    Returns (head_dim/2,) float64: the angle of pair c at position m is
    m * theta_c, and its wavelength is 2 pi / theta_c positions.
    """
    two_c = torch.arange(0, head_dim, 2, dtype=torch.float64)
    return rope_theta ** (-two_c / head_dim)


def yarn_ramp(head_dim, rope_theta, original, beta_fast, beta_slow,
              truncate=True):
    """(head_dim/2,): 0 for pairs that turn at least beta_fast times in
    `original` positions (kept), 1 for those that turn at most beta_slow
    times (divided by the factor), linear in the pair index between.
    truncate=False leaves the ramp's ends unrounded (gpt-oss)."""
    def pair_for(turns):  # the pair whose wavelength is original / turns
        return (head_dim * math.log(original / (turns * 2 * math.pi))
                / (2 * math.log(rope_theta)))
    low, high = pair_for(beta_fast), pair_for(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    c = torch.arange(head_dim // 2, dtype=torch.float64)
    return ((c - low) / max(high - low, 1e-3)).clamp(0, 1)


def scaled_frequencies(head_dim, rope, seq_len=None,
                       max_position_embeddings=None):
    """Frequencies (head_dim/2,) and attention factor for a config's
    `rope_parameters` (`rope_scaling` in older configs) dict and its
    top-level `max_position_embeddings` (read by dynamic and LongRoPE)."""
    kind = rope.get("rope_type", "default")
    theta = rope.get("rope_theta", 10000.0)
    factor = rope.get("factor", 1.0)
    original = rope.get("original_max_position_embeddings")
    freq = rope_frequencies(head_dim, theta)
    if kind == "default":
        return freq, 1.0
    if kind == "linear":  # position interpolation: m -> m / factor
        return freq / factor, 1.0
    if kind == "dynamic":  # NTK with a factor that grows with seq_len
        # Transformers measures it against max_position_embeddings,
        # never original_max_position_embeddings: no fallback here
        length = max_position_embeddings
        if length is None:
            raise ValueError("dynamic needs max_position_embeddings")
        seq_len = max(seq_len or length, length)
        factor = factor * seq_len / length - (factor - 1)
        kind = "ntk"
    # "ntk": static NTK-aware, this code's name; not a Transformers type
    if kind == "ntk":  # a larger base: pair 0 kept, the last one / factor
        theta = theta * factor ** (head_dim / (head_dim - 2))
        return rope_frequencies(head_dim, theta), 1.0
    if kind == "yarn":  # NTK-by-parts, and a factor on q and k
        ramp = yarn_ramp(head_dim, theta, original,
                         rope.get("beta_fast", 32.0),
                         rope.get("beta_slow", 1.0),
                         rope.get("truncate", True))

        def t(m=1.0):  # YaRN's attention factor, m = mscale
            return 0.1 * m * math.log(factor) + 1 if factor > 1 else 1.0
        m, m_all = rope.get("mscale"), rope.get("mscale_all_dim")
        scale = t(m) / t(m_all) if m and m_all else t()  # DeepSeek: 1
        scale = rope.get("attention_factor", scale)
        return freq * (1 - ramp) + freq / factor * ramp, scale
    if kind == "llama3":  # by wavelength: short kept, long / factor
        turns = original * freq / (2 * math.pi)  # turns in `original`
        lo, hi = rope["low_freq_factor"], rope["high_freq_factor"]
        keep = ((turns - lo) / (hi - lo)).clamp(0, 1)
        return freq * keep + freq / factor * (1 - keep), 1.0
    if kind == "longrope":  # one searched divisor per pair
        long = seq_len is not None and seq_len > original
        divisor = rope["long_factor" if long else "short_factor"]
        if "factor" not in rope and max_position_embeddings:  # Phi-3
            factor = max_position_embeddings / original
        scale = (math.sqrt(1 + math.log(factor) / math.log(original))
                 if factor > 1 else 1.0)
        scale = rope.get("attention_factor", scale)
        return freq / torch.tensor(divisor, dtype=freq.dtype), scale
    raise ValueError(f"unknown rope_type: {kind!r}")


def rotate(x, positions, freq, attention_factor=1.0):
    """Half-split RoPE of x (..., T, d) at positions (T,) with the given
    frequencies (d/2,); cos and sin are multiplied by attention_factor,
    as Hugging Face and YaRN do. Angles in float32 at least."""
    work = torch.promote_types(x.dtype, torch.float32)
    angles = positions.to(work)[:, None] * freq.to(work)  # (T, d/2)
    angles = torch.cat((angles, angles), dim=-1)  # (T, d)
    x_a, x_b = x.to(work).chunk(2, dim=-1)
    turned = torch.cat((-x_b, x_a), dim=-1)  # rotate_half
    out = x.to(work) * angles.cos() + turned * angles.sin()
    return (out * attention_factor).to(x.dtype)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    head_dim, theta = 128, 500000.0
    configs = {
        "linear": {"rope_type": "linear", "factor": 8.0},
        "ntk": {"rope_type": "ntk", "factor": 8.0},  # not in Transformers
        "yarn": {"rope_type": "yarn", "factor": 8.0,
                 "original_max_position_embeddings": 8192,
                 "beta_fast": 32.0, "beta_slow": 1.0},
        "llama3": {"rope_type": "llama3", "factor": 8.0,
                   "original_max_position_embeddings": 8192,
                   "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    }
    pairs = [0, 16, 32, 40, 48, 63]  # from the fastest pair to the slowest
    base = rope_frequencies(head_dim, theta)
    print("pair c:            ", "".join(f"{c:>7}" for c in pairs))
    for name, rope in configs.items():
        freq, scale = scaled_frequencies(head_dim, {**rope,
                                                    "rope_theta": theta})
        ratio = base[pairs] / freq[pairs]  # 1: kept, 8: divided by 8
        print(f"{name:>6}: theta / new ", "".join(f"{r:7.2f}" for r in ratio),
              f"  attention factor {scale:.4f}")
# --8<-- [end:demo]


# --8<-- [start:checks]
if __name__ == "__main__":
    torch.manual_seed(0)
    head_dim, factor, original = 64, 4.0, 2048
    pos = torch.arange(0, 4 * original, 97)  # up to 4x the trained length
    default = rope_frequencies(head_dim)

    linear, _ = scaled_frequencies(head_dim, {"rope_type": "linear",
                                              "factor": factor})
    x = torch.randn(len(pos), head_dim, dtype=torch.float64)  # (T, d)
    print("linear = positions divided by the factor:",
          torch.allclose(rotate(x, pos, linear),
                         rotate(x, pos / factor, default)))
    print("slowest pair's angle at 2048, unscaled:",
          f"{original * default[-1]:.4f};",
          f"at 8192, scaled: {4 * original * linear[-1]:.4f}")

    yarn = {"rope_type": "yarn", "factor": factor,
            "original_max_position_embeddings": original}
    freq, scale = scaled_frequencies(head_dim, yarn)
    turns = original * default / (2 * math.pi)  # turns in 2048 positions
    print("yarn keeps the pairs turning >= 32 times:",
          torch.equal(freq[turns >= 32], default[turns >= 32]))
    print("yarn divides the pairs turning <= 1 time by 4:",
          torch.allclose(freq[turns <= 1], default[turns <= 1] / factor))

    # The attention factor multiplies q and k: the scores by its square.
    q, k, v = torch.randn(3, 1, 1, 10, head_dim, dtype=torch.float64)
    t = torch.arange(10)
    out = torch.nn.functional.scaled_dot_product_attention(
        rotate(q, t, freq, scale), rotate(k, t, freq, scale), v)
    ref = torch.nn.functional.scaled_dot_product_attention(
        rotate(q, t, freq), rotate(k, t, freq), v,
        scale=scale ** 2 / math.sqrt(head_dim))
    print(f"attention factor {scale:.4f}: scores times {scale**2:.4f}:",
          torch.allclose(out, ref))
# --8<-- [end:checks]
