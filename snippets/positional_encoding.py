"""Sinusoidal and learned absolute positions, and why attention needs them."""

BLOCKS = {
    "demo": [
        "snippets/positional_encoding.py:code",
        "snippets/positional_encoding.py:demo",
    ],
    "permutation": [
        "snippets/positional_encoding.py:code",
        "snippets/positional_encoding.py:permutation",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


def sinusoidal_positional_encoding(num_positions, d_model, *, base=10000.0,
                                   dtype=torch.float32, device=None):
    """(num_positions, d_model) table of Vaswani et al. (2017), section 3.5:

    PE[pos, 2i] = sin(pos / base^(2i / d_model))
    PE[pos, 2i + 1] = cos(pos / base^(2i / d_model))

    Pair i turns at the angular frequency base^(-2i / d_model): wavelengths
    from 2 pi (i = 0) up to nearly base * 2 pi. Angles are computed in at
    least float32: pos * frequency would lose whole radians in half precision.
    """
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs): {d_model}")
    work = torch.promote_types(dtype, torch.float32)
    two_i = torch.arange(0, d_model, 2, dtype=work, device=device)
    frequency = base ** (-two_i / d_model)  # (d_model / 2,)
    pos = torch.arange(num_positions, dtype=work, device=device)
    angles = pos[:, None] * frequency  # (T, d_model / 2)
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1)  # (T, d/2, 2)
    return pe.flatten(-2).to(dtype)  # interleave: sin, cos, sin, cos, ...


def sinusoidal_shift_matrix(k, d_model, *, base=10000.0,
                            dtype=torch.float64, device=None):
    """(d_model, d_model) M_k with PE[pos + k] = PE[pos] @ M_k for every pos.

    Block diagonal: one 2 x 2 rotation per (sin, cos) pair, by the angle
    k * frequency_i. It depends on k only, not on pos: the "linear function
    of PE_pos" of section 3.5. Negative k shifts backwards.
    """
    two_i = torch.arange(0, d_model, 2, dtype=dtype, device=device)
    angle = k * base ** (-two_i / d_model)  # (d_model / 2,)
    c, s = angle.cos(), angle.sin()
    # [sin a, cos a] @ [[cos b, -sin b], [sin b, cos b]]
    #   = [sin(a + b), cos(a + b)]
    blocks = torch.stack((torch.stack((c, -s), -1),
                          torch.stack((s, c), -1)), -2)  # (d/2, 2, 2)
    return torch.block_diag(*blocks)


class LearnedPositionEmbedding(nn.Module):
    """Token ids (B, T) -> token + position embeddings (B, T, d_model).

    One learned vector per absolute position, added to the token embedding,
    as GPT-2 (wpe) and BERT (position_embeddings) do. There is no vector for
    positions >= max_positions: longer inputs are refused, not extrapolated.
    `offset` is the position of the first token (e.g. tokens already cached).
    """

    def __init__(self, vocab_size, max_positions, d_model):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_positions, d_model)

    def forward(self, ids, *, offset=0):
        t = ids.size(-1)
        if offset < 0 or offset + t > self.positions.num_embeddings:
            raise ValueError(
                f"positions {offset}..{offset + t - 1} asked for, but only "
                f"0..{self.positions.num_embeddings - 1} are learned")
        pos = torch.arange(offset, offset + t, device=ids.device)  # (T,)
        # (B, T, d) + (T, d): one position vector broadcast over the batch
        return self.tokens(ids) + self.positions(pos)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    d_model = 16
    pe = sinusoidal_positional_encoding(50, d_model, dtype=torch.float64)
    print("PE shape:", tuple(pe.shape))
    print("PE[0, :4]:", " ".join(f"{x:.4f}" for x in pe[0, :4]))
    print("PE[1, :4]:", " ".join(f"{x:.4f}" for x in pe[1, :4]))

    # One fixed matrix moves every position 3 steps forward.
    m3 = sinusoidal_shift_matrix(3, d_model)
    print("PE[pos + 3] == PE[pos] @ M_3 for all pos:",
          torch.allclose(pe[:-3] @ m3, pe[3:], atol=1e-12))
    print("M_3 is a rotation (orthogonal):",
          torch.allclose(m3 @ m3.T, torch.eye(d_model, dtype=m3.dtype)))

    torch.manual_seed(0)
    embed = LearnedPositionEmbedding(vocab_size=100, max_positions=8,
                                     d_model=d_model)
    ids = torch.tensor([[7, 7, 7, 3, 5]])  # token 7 at positions 0, 1, 2
    x = embed(ids)
    print("learned: output shape:", tuple(x.shape))
    print("learned: same token, different positions differ:",
          not torch.allclose(x[0, 0], x[0, 1]))
    try:
        embed(ids, offset=4)  # positions 4..8: there is no position 8
    except ValueError as error:
        print("learned: refused:", error)
# --8<-- [end:demo]


# --8<-- [start:permutation]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    T, d = 6, 16
    x = torch.randn(T, d, dtype=torch.float64)  # 6 token embeddings
    w_q, w_k, w_v = (torch.randn(d, d, dtype=torch.float64) * d**-0.5
                     for _ in range(3))

    def self_attention(x, *, is_causal=False):
        q, k, v = x @ w_q, x @ w_k, x @ w_v  # (T, d) each
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)

    perm = torch.tensor([3, 0, 5, 1, 4, 2])  # shuffle the tokens

    # Without positions, attention sees a set: shuffled in, shuffled out.
    same = torch.allclose(self_attention(x[perm]), self_attention(x)[perm])
    print("no positions: output follows the shuffle:", same)

    # Positions stay put while the tokens move: the outputs change.
    pe = sinusoidal_positional_encoding(T, d, dtype=torch.float64)
    same = torch.allclose(self_attention(x[perm] + pe),
                          self_attention(x + pe)[perm])
    print("with positions: output follows the shuffle:", same)

    # A causal mask breaks the symmetry too: token i sees only tokens <= i.
    same = torch.allclose(self_attention(x[perm], is_causal=True),
                          self_attention(x, is_causal=True)[perm])
    print("causal, no positions: output follows the shuffle:", same)
# --8<-- [end:permutation]
