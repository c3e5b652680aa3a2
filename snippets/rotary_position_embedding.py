"""Rotary position embedding (RoPE): both memory layouts, the complex form,
the checkpoint row permutation between layouts, and position ids."""

BLOCKS = {
    "demo": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/rotary_position_embedding.py:complex",
        "snippets/rotary_position_embedding.py:demo",
    ],
    "layouts": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/rotary_position_embedding.py:convert",
        "snippets/rotary_position_embedding.py:layouts",
    ],
    "offset": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/rotary_position_embedding.py:offset",
    ],
    "partial": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/rotary_position_embedding.py:partial",
        "snippets/rotary_position_embedding.py:partial_demo",
    ],
}

# --8<-- [start:code]
import torch


def rope_angles(positions, head_dim, *, rope_theta=10000.0,
                dtype=torch.float32):
    """Positions (..., T) -> angles m * theta_i, shape (..., T, head_dim/2).

    theta_i = rope_theta^(-2i / head_dim) for i = 0 .. head_dim/2 - 1
    (Su et al. 2021, eq. 15, which counts i from 1). Always computed in at
    least float32, whatever the model's dtype: bfloat16 cannot even hold the
    position 257, and the angle m * theta_0 = m needs all of its digits.
    """
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (pairs), got {head_dim}")
    work = torch.promote_types(dtype, torch.float32)
    two_i = torch.arange(0, head_dim, 2, dtype=work, device=positions.device)
    inv_freq = rope_theta ** (-two_i / head_dim)  # theta_i: (head_dim/2,)
    return positions.to(work)[..., None] * inv_freq


def rotate_pairs(x, angles):
    """Interleaved layout: pair i is (x[2i], x[2i+1]), as in the paper and
    in Meta's original Llama code. x (..., T, d), angles (..., T, d/2)."""
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    cos, sin = angles.cos(), angles.sin()
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2)  # (..., T, d/2, 2) -> (..., T, d)


def rotate_half(x):
    """(x_a, x_b) -> (-x_b, x_a), with x_a, x_b the two halves of x."""
    x_a, x_b = x.chunk(2, dim=-1)
    return torch.cat((-x_b, x_a), dim=-1)


def rotate_halves(x, angles):
    """Half-split layout: pair i is (x[i], x[i + d/2]), as in GPT-NeoX and
    Hugging Face's Llama. x (..., T, d), angles (..., T, d/2)."""
    angles = torch.cat((angles, angles), dim=-1)  # (..., T, d)
    return x * angles.cos() + rotate_half(x) * angles.sin()


LAYOUTS = {"interleaved": rotate_pairs, "half": rotate_halves}


def apply_rope(x, positions, *, layout, rope_theta=10000.0):
    """Rotate x (..., T, head_dim) at positions (T,) or (..., T).

    layout is "interleaved" or "half" and must match the checkpoint (see
    interleaved_to_half_rows); it has no default on purpose. The rotation
    runs in at least float32, the result has x's dtype.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {sorted(LAYOUTS)}: {layout}")
    angles = rope_angles(positions, x.size(-1), rope_theta=rope_theta,
                         dtype=x.dtype)
    return LAYOUTS[layout](x.to(angles.dtype), angles).to(x.dtype)


def apply_rope_qk(q, k, position_ids, *, layout, rope_theta=10000.0):
    """q (B, H, L, d) and k (B, H_kv, L, d) of L new tokens -> rotated q, k.

    position_ids: (L,) or (B, L), the absolute position of each new token.
    After S cached tokens pass S + arange(L); cached keys keep the rotation
    they got when they were new. Values are never rotated.
    """
    if position_ids.dim() == 2:
        position_ids = position_ids[:, None, :]  # (B, 1, L): every head
    q = apply_rope(q, position_ids, layout=layout, rope_theta=rope_theta)
    k = apply_rope(k, position_ids, layout=layout, rope_theta=rope_theta)
    return q, k
# --8<-- [end:code]


# --8<-- [start:complex]
def rope_complex(x, positions, *, rope_theta=10000.0):
    """Interleaved RoPE as complex numbers, as Meta's Llama code writes it:
    pair (x[2i], x[2i+1]) is x[2i] + j x[2i+1], multiplied by e^(j m theta_i).
    """
    angles = rope_angles(positions, x.size(-1), rope_theta=rope_theta,
                         dtype=x.dtype)
    pairs = x.to(angles.dtype).unflatten(-1, (-1, 2))  # (..., T, d/2, 2)
    z = torch.view_as_complex(pairs.contiguous())  # (..., T, d/2) complex
    z = z * torch.polar(torch.ones_like(angles), angles)  # |e^(j a)| = 1
    return torch.view_as_real(z).flatten(-2).to(x.dtype)
# --8<-- [end:complex]


# --8<-- [start:convert]
def interleaved_to_half_rows(weight, num_heads):
    """Rows of a W_Q or W_K checkpoint (nn.Linear weight, (H * d, d_in), or
    its bias, (H * d,)) reordered from the interleaved to the half-split
    layout: within each head, row 2i + t goes to row t * d/2 + i.

    The same permutation as permute() in Hugging Face's
    convert_llama_weights_to_hf.py. Apply it to W_Q (num_heads) and W_K
    (num_kv_heads), never to W_V or W_O: only queries and keys are rotated.
    """
    d = _head_dim(weight, num_heads)
    rows = weight.unflatten(0, (num_heads, d // 2, 2))  # (H, d/2, 2, ...)
    # (H, 2, d/2, ...): per head the even rows first, then the odd ones
    return rows.transpose(1, 2).flatten(0, 2)


def half_to_interleaved_rows(weight, num_heads):
    """The inverse: rows t * d/2 + i back to 2i + t within each head."""
    d = _head_dim(weight, num_heads)
    rows = weight.unflatten(0, (num_heads, 2, d // 2))  # (H, 2, d/2, ...)
    return rows.transpose(1, 2).flatten(0, 2)


def _head_dim(weight, num_heads):
    if weight.size(0) % (2 * num_heads):
        raise ValueError(f"{weight.size(0)} rows are not {num_heads} heads "
                         "of even width")
    return weight.size(0) // num_heads
# --8<-- [end:convert]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d = 8
    q, k = torch.randn(2, 1, d, dtype=torch.float64)  # one query, one key

    def score(m, n, layout):
        """q rotated to position m, dot k rotated to position n."""
        q_m = apply_rope(q, torch.tensor([m]), layout=layout)
        k_n = apply_rope(k, torch.tensor([n]), layout=layout)
        return (q_m @ k_n.T).item()

    for layout in ("interleaved", "half"):
        print(f"{layout}: q_5 . k_2 = {score(5, 2, layout):.4f}, "
              f"q_105 . k_102 = {score(105, 102, layout):.4f}")

    # The same vector at every position: scores are constant along each
    # diagonal m - n = const of the (T, T) score matrix.
    pos = torch.arange(10)
    qs = apply_rope(q.expand(10, d), pos, layout="half")
    ks = apply_rope(k.expand(10, d), pos, layout="half")
    s = qs @ ks.T
    print("scores depend only on m - n:",
          torch.allclose(s[1:, 1:], s[:-1, :-1]))

    x = torch.randn(2, 4, 10, d, dtype=torch.float64)  # (B, H, T, d)
    print("complex form equals real form:",
          torch.allclose(rope_complex(x, pos),
                         apply_rope(x, pos, layout="interleaved")))

    # Half precision: the angles are computed in float32, never in bfloat16.
    print("position 1001 stored in bfloat16:",
          int(torch.tensor(1001).bfloat16().item()))
    pos = torch.arange(4096)
    x = torch.randn(4096, 64)
    exact = apply_rope(x.double(), pos, layout="half")
    low = apply_rope(x.bfloat16(), pos, layout="half")
    print("bfloat16 result, float32 angles, close to float64:",
          torch.allclose(low.double(), exact, atol=0.05))
    angles = rope_angles(pos, 64).bfloat16()  # the mistake: rounded angles
    bad = rotate_halves(x.bfloat16(), angles)
    print("bfloat16 result, bfloat16 angles, close to float64:",
          torch.allclose(bad.double(), exact, atol=0.05))
# --8<-- [end:demo]


# --8<-- [start:layouts]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads, d, T = 32, 4, 8, 6
    x = torch.randn(1, T, d_model, dtype=torch.float64)  # (B, T, d_model)
    # A checkpoint trained with the interleaved layout, stored as
    # nn.Linear stores weights: (out_features, in_features).
    w_q, w_k = torch.randn(2, num_heads * d, d_model, dtype=torch.float64)

    def scores(w_q, w_k, layout):
        q = (x @ w_q.T).view(1, T, num_heads, d).transpose(1, 2)
        k = (x @ w_k.T).view(1, T, num_heads, d).transpose(1, 2)
        q, k = apply_rope_qk(q, k, torch.arange(T), layout=layout)
        return q @ k.transpose(-2, -1)  # (B, H, T, T)

    reference = scores(w_q, w_k, "interleaved")
    print("row order of head 0 after conversion:",
          interleaved_to_half_rows(torch.arange(num_heads * d),
                                   num_heads)[:d].tolist())
    hf_q = interleaved_to_half_rows(w_q, num_heads)
    hf_k = interleaved_to_half_rows(w_k, num_heads)
    print("half-split code, rows permuted: same scores:",
          torch.allclose(scores(hf_q, hf_k, "half"), reference))
    print("half-split code, rows as stored: same scores:",
          torch.allclose(scores(w_q, w_k, "half"), reference))
    print("converting back restores the checkpoint:",
          torch.equal(half_to_interleaved_rows(hf_q, num_heads), w_q))
# --8<-- [end:layouts]


# --8<-- [start:offset]
if __name__ == "__main__":
    torch.manual_seed(0)
    B, H, T, d = 1, 2, 6, 8
    q, k = torch.randn(2, B, H, T, d, dtype=torch.float64)
    full_q, full_k = apply_rope_qk(q, k, torch.arange(T), layout="half")
    full = full_q[..., -1:, :] @ full_k.transpose(-2, -1)  # last query

    # Prefill 5 tokens and cache their rotated keys; then decode token 6.
    _, cached_k = apply_rope_qk(q[..., :5, :], k[..., :5, :],
                                torch.arange(5), layout="half")
    for start in (5, 0):  # 0: the offset of the cache forgotten
        new_q, new_k = apply_rope_qk(q[..., 5:, :], k[..., 5:, :],
                                     torch.tensor([start]), layout="half")
        keys = torch.cat((cached_k, new_k), dim=-2)  # (B, H, 6, d)
        step = new_q @ keys.transpose(-2, -1)
        print(f"decode with position_ids=[{start}] matches the full pass:",
              torch.allclose(step, full))
# --8<-- [end:offset]


# --8<-- [start:partial]
def apply_partial_rope(x, positions, *, rotary_dim, layout,
                       rope_theta=10000.0):
    """Partial RoPE: rotate the first rotary_dim coordinates of x (..., T, d)
    and pass the other d - rotary_dim through unchanged. rotary_dim is
    partial_rotary_factor * d in Hugging Face configs (rotary_pct in
    GPT-NeoX's); the frequencies follow rotary_dim, not d.
    """
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    x_rot = apply_rope(x_rot, positions, layout=layout,
                       rope_theta=rope_theta)  # (..., T, rotary_dim)
    return torch.cat((x_rot, x_pass), dim=-1)  # (..., T, d)
# --8<-- [end:partial]


# --8<-- [start:partial_demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d, rotary_dim = 16, 4  # partial_rotary_factor = 4 / 16 = 0.25
    q, k = torch.randn(2, 1, d, dtype=torch.float64)  # one query, one key

    def parts(m, n):
        """The two parts of q_m . k_n: rotated coordinates, the rest."""
        q_m = apply_partial_rope(q, torch.tensor([m]),
                                 rotary_dim=rotary_dim, layout="half")
        k_n = apply_partial_rope(k, torch.tensor([n]),
                                 rotary_dim=rotary_dim, layout="half")
        r = slice(0, rotary_dim)
        rest = slice(rotary_dim, d)
        return ((q_m[:, r] @ k_n[:, r].T).item(),
                (q_m[:, rest] @ k_n[:, rest].T).item())

    for m, n in ((5, 2), (105, 102), (105, 40)):
        rot, rest = parts(m, n)
        print(f"m={m}, n={n}: rotated part {rot:.4f}, rest {rest:.4f}")
    plain = (q[:, rotary_dim:] @ k[:, rotary_dim:].T).item()
    print("the rest is q . k of the unrotated coordinates:",
          abs(parts(7, 3)[1] - plain) < 1e-12)
# --8<-- [end:partial_demo]
