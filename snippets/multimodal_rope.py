"""Multimodal RoPE (M-RoPE): three position axes (time, height, width), the
pairs of each head split among them in sections (Qwen2-VL) or interleaved
(Qwen3-VL), and the position ids of text, image and video tokens."""

BLOCKS = {
    "demo": [
        "snippets/multimodal_rope.py:code",
        "snippets/multimodal_rope.py:demo",
    ],
    "layouts": [
        "snippets/multimodal_rope.py:code",
        "snippets/multimodal_rope.py:layouts",
    ],
}

# --8<-- [start:code]
import torch

AXES = "thw"  # axis 0: time (t), 1: height (h), 2: width (w)


def mrope_axes(mrope_section, interleaved=False):
    """The axis each pair c reads, a tensor (sum(mrope_section),) of 0, 1, 2.

    Sectioned (Qwen2-VL): the first mrope_section[0] pairs read t, the next
    mrope_section[1] read h, the last mrope_section[2] read w.
    Interleaved (Qwen3-VL, Transformers' apply_interleaved_mrope): pairs
    cycle t, h, w, t, h, w, ... and the pairs left at the end read t.
    Transformers does not check that the interleaved cycle gives each axis
    its share; this function does.
    """
    section = torch.tensor(mrope_section)
    if section.shape != (3,) or (section < 0).any():
        raise ValueError(f"mrope_section needs 3 counts >= 0: {mrope_section}")
    if not interleaved:
        return torch.repeat_interleave(torch.arange(3), section)
    pairs = int(section.sum())
    j = torch.arange(pairs)  # pair index counted from 0, as in the code
    axes = torch.zeros(pairs, dtype=torch.long)  # t unless h or w below
    axes[(j % 3 == 1) & (j < 3 * section[1])] = 1
    axes[(j % 3 == 2) & (j < 3 * section[2])] = 2
    counts = torch.bincount(axes, minlength=3)
    if not torch.equal(counts, section):
        raise ValueError(f"interleaving {mrope_section} gives the axes "
                         f"{counts.tolist()} pairs: not its sections")
    return axes


def mrope_angles(position_ids, head_dim, mrope_section, *, interleaved,
                 rope_theta=10000.0, dtype=torch.float32):
    """position_ids (3, ..., T), rows t, h, w -> angles (..., T, head_dim/2).

    Pair c turns by p_a * theta_c, where a = mrope_axes(...)[c] is its axis
    and theta_c = rope_theta^(-2c / head_dim), c = 0 .. head_dim/2 - 1, the
    frequencies of 1-D RoPE. At least float32, as for any RoPE.
    """
    if 2 * sum(mrope_section) != head_dim:
        raise ValueError(f"mrope_section {mrope_section} must sum to "
                         f"head_dim / 2 = {head_dim / 2}")
    work = torch.promote_types(dtype, torch.float32)
    two_i = torch.arange(0, head_dim, 2, dtype=work,
                         device=position_ids.device)
    inv_freq = rope_theta ** (-two_i / head_dim)  # theta_c: (head_dim/2,)
    every = position_ids.to(work)[..., None] * inv_freq  # (3, ..., T, d/2)
    axes = mrope_axes(mrope_section, interleaved).to(every.device)
    index = axes.expand(every.shape[1:])[None]  # (1, ..., T, d/2)
    return every.gather(0, index)[0]  # pair c reads row axes[c]


def rotate_half(x):
    """(x_a, x_b) -> (-x_b, x_a), with x_a, x_b the two halves of x."""
    x_a, x_b = x.chunk(2, dim=-1)
    return torch.cat((-x_b, x_a), dim=-1)


def apply_mrope(x, position_ids, mrope_section, *, interleaved,
                rope_theta=10000.0):
    """Rotate queries or keys x (..., T, d) at position_ids (3, ..., T).

    Half-split pairs (x[c], x[c + d/2]), as in Hugging Face's Qwen2-VL and
    Qwen3-VL. Computed in at least float32; the result has x's dtype.
    """
    angles = mrope_angles(position_ids, x.size(-1), mrope_section,
                          interleaved=interleaved, rope_theta=rope_theta,
                          dtype=x.dtype)
    angles = torch.cat((angles, angles), dim=-1)  # (..., T, d)
    xw = x.to(angles.dtype)
    out = xw * angles.cos() + rotate_half(xw) * angles.sin()
    return out.to(x.dtype)


def mrope_position_ids(segments, spatial_merge_size=2):
    """Position ids (3, T) of a sequence of segments, as get_rope_index
    builds them: ("text", n) for n text tokens, ("vision", (t, h, w)) for
    an image (t = 1) or a video of t temporal patches (temporal_patch_size
    frames each), h x w patches of the encoder.

    Text tokens get t = h = w, counting on from the largest position so
    far. A vision segment of grid (t, h / m, w / m) tokens (m the spatial
    merge size) starts at that same next position s: token (i, j, k) gets
    (s + i, s + j, s + k).
    """
    rows, start = [], 0
    for kind, size in segments:
        if kind == "text":
            ids = torch.arange(size).expand(3, size) + start
        elif kind == "vision":
            t, h, w = size[0], size[1] // spatial_merge_size, \
                size[2] // spatial_merge_size
            grid = torch.meshgrid(torch.arange(t), torch.arange(h),
                                  torch.arange(w), indexing="ij")
            ids = torch.stack([g.flatten() for g in grid]) + start
        else:
            raise ValueError(f"segment kind must be text or vision: {kind}")
        rows.append(ids)
        start = int(ids.max()) + 1 if ids.numel() else start
    return torch.cat(rows, dim=1)  # (3, T)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    # 3 text tokens, an image of 4 x 6 patches (2 x 3 tokens), 2 text tokens
    ids = mrope_position_ids([("text", 3), ("vision", (1, 4, 6)),
                              ("text", 2)])
    for axis, row in zip(AXES, ids.tolist()):
        print(f"{axis}: {row}")

    d, section = 16, [4, 2, 2]  # 8 pairs: 4 read t, 2 read h, 2 read w
    x = torch.randn(ids.size(1), d, dtype=torch.float64)  # (T, d)

    def rope_1d(x, m):
        """Plain RoPE (half-split) at the 1-D positions m (T,)."""
        theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
        a = m.to(x.dtype)[:, None] * theta
        a = torch.cat((a, a), dim=-1)
        return x * a.cos() + rotate_half(x) * a.sin()

    text = torch.tensor([0, 1, 2, 9, 10])  # the text tokens of the sequence
    for interleaved in (False, True):
        out = apply_mrope(x, ids, section, interleaved=interleaved)
        plain = rope_1d(x[text], ids[0, text])
        print(f"interleaved={interleaved}: text tokens equal 1-D RoPE:",
              torch.equal(out[text], plain))
    image = torch.arange(3, 9)  # the six image tokens
    both = [apply_mrope(x[image], ids[:, image], section, interleaved=flag)
            for flag in (False, True)]
    print("image tokens: sectioned equals interleaved:",
          torch.allclose(*both))

    # The score depends only on the difference of the positions, per axis.
    q, k = torch.randn(2, 1, d, dtype=torch.float64)

    def score(p_q, p_k):
        q_r = apply_mrope(q, torch.tensor(p_q)[:, None], section,
                          interleaved=True)
        k_r = apply_mrope(k, torch.tensor(p_k)[:, None], section,
                          interleaved=True)
        return (q_r @ k_r.T).item()

    print(f"q at (5, 2, 7), k at (3, 1, 4): {score([5, 2, 7], [3, 1, 4]):.4f}")
    print(f"both moved by (10, 20, 30):     "
          f"{score([15, 22, 37], [13, 21, 34]):.4f}")
    print(f"k at (3, 4, 1) instead:         {score([5, 2, 7], [3, 4, 1]):.4f}")
# --8<-- [end:demo]


# --8<-- [start:layouts]
if __name__ == "__main__":
    for section, interleaved in (([16, 24, 24], False),
                                 ([24, 20, 20], False),
                                 ([24, 20, 20], True)):
        axes = mrope_axes(section, interleaved)
        print(f"{section}, interleaved={interleaved}:")
        print("  " + "".join(AXES[a] for a in axes.tolist()))

    # Same share per axis, other frequencies: pairs read by t in each layout
    sectioned = mrope_axes([24, 20, 20], interleaved=False)
    interleaved = mrope_axes([24, 20, 20], interleaved=True)
    for name, axes in (("sectioned", sectioned), ("interleaved", interleaved)):
        pairs = (torch.nonzero(axes == 0).flatten() + 1).tolist()
        print(f"{name}: t reads {len(pairs)} pairs, the slowest pair "
              f"{max(pairs)}")

    # A time shift of 1 rotates each pair of t by theta_c: the angles of
    # the two layouts are different sets, so no permutation of the rows of
    # W^Q and W^K turns a checkpoint of one layout into the other.
    d = 128
    shift = torch.tensor([[1], [0], [0]])  # (3, T=1): one step in time
    for name, flag in (("sectioned", False), ("interleaved", True)):
        a = mrope_angles(shift, d, [24, 20, 20], interleaved=flag,
                         dtype=torch.float64)[0]
        turned = a[a > 0]
        print(f"{name}: smallest angle per step in time "
              f"{turned.min().item():.2e} rad")
# --8<-- [end:layouts]
