"""snippets/multimodal_rope.py against the site's 1-D RoPE, against Hugging
Face's Qwen2-VL and Qwen3-VL code transcribed line by line (the rotary
embedding, apply_multimodal_rotary_pos_emb, apply_interleaved_mrope and
get_rope_index), and against rotation matrices built pair by pair."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.multimodal_rope as mod
from snippets.multimodal_rope import (
    apply_mrope,
    mrope_angles,
    mrope_axes,
    mrope_position_ids,
)
from snippets.rotary_position_embedding import apply_rope
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "t: [0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7]",
        "h: [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7]",
        "w: [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7]",
        "interleaved=False: text tokens equal 1-D RoPE: True",
        "interleaved=True: text tokens equal 1-D RoPE: True",
        "image tokens: sectioned equals interleaved: False",
        "q at (5, 2, 7), k at (3, 1, 4): 0.9001",
        "both moved by (10, 20, 30):     0.9001",
        "k at (3, 4, 1) instead:         1.0892",
    ],
    "layouts": [
        "[16, 24, 24], interleaved=False:",
        "  tttttttttttttttthhhhhhhhhhhhhhhhhhhhhhhhwwwwwwwwwwwwwwwwwwwwwwww",
        "[24, 20, 20], interleaved=False:",
        "  tttttttttttttttttttttttthhhhhhhhhhhhhhhhhhhhwwwwwwwwwwwwwwwwwwww",
        "[24, 20, 20], interleaved=True:",
        "  thwthwthwthwthwthwthwthwthwthwthwthwthwthwthwthwthwthwthwthwtttt",
        "sectioned: t reads 24 pairs, the slowest pair 24",
        "interleaved: t reads 24 pairs, the slowest pair 64",
        "sectioned: smallest angle per step in time 3.65e-02 rad",
        "interleaved: smallest angle per step in time 1.15e-04 rad",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             derandomize=True)
F64 = torch.float64
# (mrope_section, valid when interleaved): Qwen2-VL's, Qwen3-VL's default in
# Transformers, and small ones
SECTIONS = [[16, 24, 24], [24, 20, 20], [4, 2, 2], [2, 1, 1], [1, 0, 0]]
INTERLEAVABLE = [[24, 20, 20], [4, 2, 2], [2, 1, 1], [1, 0, 0], [11, 11, 10]]

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def random(*shape, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


# --- Hugging Face's code, transcribed ---------------------------------------
# transformers/models/qwen2_vl/modeling_qwen2_vl.py (commit 928b556):
# Qwen2VLRotaryEmbedding.forward and apply_multimodal_rotary_pos_emb.
# transformers/models/qwen3_vl/modeling_qwen3_vl.py (commit 68a7b7e):
# Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope and forward.
def hf_inv_freq(dim, base):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64)
                           .to(dtype=F64) / dim))


def hf_qwen2_vl_cos_sin(position_ids, dim, base):
    """position_ids (3, bs, T) -> cos, sin (3, bs, T, dim)."""
    inv_freq = hf_inv_freq(dim, base)
    inv_freq_expanded = inv_freq[None, None, :, None].expand(
        3, position_ids.shape[1], -1, 1)
    position_ids_expanded = position_ids[:, :, None, :].to(F64)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(2, 3)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def hf_rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_apply_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section,
                                       unsqueeze_dim=1):
    mrope_section = mrope_section * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(
        cos.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
    sin = torch.cat([m[i % 3] for i, m in enumerate(
        sin.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (hf_rotate_half(q) * sin)
    k_embed = (k * cos) + (hf_rotate_half(k) * sin)
    return q_embed, k_embed


def hf_apply_interleaved_mrope(freqs, mrope_section):
    freqs_t = freqs[0].clone()  # the original writes into freqs[0]
    for dim, offset in enumerate((1, 2), start=1):  # H, W
        length = mrope_section[dim] * 3
        idx = slice(offset, length, 3)
        freqs_t[..., idx] = freqs[dim, ..., idx]
    return freqs_t


def hf_qwen3_vl_cos_sin(position_ids, dim, base, mrope_section):
    """position_ids (3, bs, T) -> cos, sin (bs, T, dim)."""
    inv_freq = hf_inv_freq(dim, base)
    inv_freq_expanded = inv_freq[None, None, :, None].expand(
        3, position_ids.shape[1], -1, 1)
    position_ids_expanded = position_ids[:, :, None, :].to(F64)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(2, 3)
    freqs = hf_apply_interleaved_mrope(freqs, mrope_section)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


TEXT, VISION_START, IMAGE, VIDEO = 1, 151652, 151655, 151656


def token_ids(segments, spatial_merge_size=2):
    """Token ids and grids as the processor would give them: a vision
    segment is preceded by a text token <|vision_start|> (the last token of
    the text segment before it), an image has t = 1, a video t > 1."""
    ids, images, videos = [], [], []
    for i, (kind, size) in enumerate(segments):
        if kind == "text":
            follows = i + 1 < len(segments) and segments[i + 1][0] == "vision"
            ids += [TEXT] * (size - 1) + [VISION_START if follows else TEXT]
        else:
            t, h, w = size
            n = t * h * w // spatial_merge_size**2
            ids += [IMAGE if t == 1 else VIDEO] * n
            (images if t == 1 else videos).append(list(size))
    return ids, torch.tensor(images or [[0, 0, 0]]), \
        torch.tensor(videos or [[0, 0, 0]])


def hf_get_rope_index(input_ids, image_grid_thw, video_grid_thw,
                      spatial_merge_size=2, qwen3=False):
    """get_rope_index's loop for one unpadded sequence (Qwen2-VL, commit
    928b556; qwen3: Qwen3-VL, commit 68a7b7e, which first splits every
    video into frames of t = 1)."""
    if qwen3:
        video_grid_thw = torch.repeat_interleave(
            video_grid_thw, video_grid_thw[:, 0], dim=0)
        video_grid_thw[:, 0] = 1
    input_ids = torch.tensor(input_ids)
    vision_start_indices = torch.argwhere(
        input_ids == VISION_START).squeeze(1)
    vision_tokens = input_ids[vision_start_indices + 1]
    image_nums = (vision_tokens == IMAGE).sum()
    video_nums = (vision_tokens == VIDEO).sum()
    input_tokens = input_ids.tolist()
    llm_pos_ids_list = []
    st = 0
    image_index, video_index = 0, 0
    remain_images, remain_videos = image_nums, video_nums
    for _ in range(image_nums + video_nums):
        if IMAGE in input_tokens and remain_images > 0:
            ed_image = input_tokens.index(IMAGE, st)
        else:
            ed_image = len(input_tokens) + 1
        if VIDEO in input_tokens and remain_videos > 0:
            ed_video = input_tokens.index(VIDEO, st)
        else:
            ed_video = len(input_tokens) + 1
        if ed_image < ed_video:
            t, h, w = image_grid_thw[image_index]
            image_index += 1
            remain_images -= 1
            ed = ed_image
        else:
            t, h, w = video_grid_thw[video_index]
            video_index += 1
            remain_videos -= 1
            ed = ed_video
        llm_grid_t, llm_grid_h, llm_grid_w = (
            t.item(), h.item() // spatial_merge_size,
            w.item() // spatial_merge_size)
        text_len = ed - st
        st_idx = (llm_pos_ids_list[-1].max() + 1
                  if len(llm_pos_ids_list) > 0 else 0)
        llm_pos_ids_list.append(
            torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
        t_index = torch.arange(llm_grid_t).view(-1, 1).expand(
            -1, llm_grid_h * llm_grid_w).flatten()
        h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(
            llm_grid_t, -1, llm_grid_w).flatten()
        w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(
            llm_grid_t, llm_grid_h, -1).flatten()
        llm_pos_ids_list.append(
            torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
        st = ed + llm_grid_t * llm_grid_h * llm_grid_w
    if st < len(input_tokens):
        st_idx = (llm_pos_ids_list[-1].max() + 1
                  if len(llm_pos_ids_list) > 0 else 0)
        text_len = len(input_tokens) - st
        llm_pos_ids_list.append(
            torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
    return torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)


# --- an independent formulation: rotation matrices, pair by pair ------------
def rotation_matrix(p, d, axes, base=10000.0):
    """R (d, d) acting on row vectors (x R), half-split pairs (c, c + d/2):
    pair c turns by p[axes[c]] * base^(-2c/d), with rho(alpha) as in the
    site's notation."""
    r = torch.zeros(d, d, dtype=F64)
    for c in range(d // 2):
        alpha = p[axes[c]] * base ** (-2 * c / d)
        a, b = c, c + d // 2
        cos, sin = math.cos(alpha), math.sin(alpha)
        r[a, a], r[a, b], r[b, a], r[b, b] = cos, sin, -sin, cos
    return r


# --- the tests ----------------------------------------------------------------
@pytest.mark.parametrize("section", SECTIONS)
def test_sectioned_axes_are_contiguous_blocks(section):
    axes = mrope_axes(section).tolist()
    expected = [0] * section[0] + [1] * section[1] + [2] * section[2]
    assert axes == expected


@pytest.mark.parametrize("section", INTERLEAVABLE)
def test_interleaved_axes_follow_transformers(section):
    """apply_interleaved_mrope on freqs that are the axis numbers
    themselves returns the axis each pair reads."""
    pairs = sum(section)
    freqs = torch.arange(3, dtype=F64)[:, None].expand(3, pairs)
    expected = hf_apply_interleaved_mrope(freqs, section).long()
    assert torch.equal(mrope_axes(section, interleaved=True), expected)


@pytest.mark.parametrize("section", INTERLEAVABLE)
def test_layouts_give_each_axis_the_same_number_of_pairs(section):
    counts = [torch.bincount(mrope_axes(section, flag), minlength=3)
              for flag in (False, True)]
    assert counts[0].tolist() == counts[1].tolist() == section


def test_interleaving_qwen2_vl_sections_is_refused():
    """[16, 24, 24] interleaved would give h and w 21 pairs and t 22:
    Transformers' loop does it silently, the snippet says so."""
    with pytest.raises(ValueError, match=r"\[22, 21, 21\] pairs"):
        mrope_axes([16, 24, 24], interleaved=True)


@pytest.mark.parametrize("bad", [[1, 2], [1, -1, 2], [1, 1, 1, 1]])
def test_sections_must_be_three_counts(bad):
    with pytest.raises(ValueError, match="3 counts"):
        mrope_axes(bad)


def test_sections_must_sum_to_half_the_head():
    with pytest.raises(ValueError, match="head_dim / 2 = 8"):
        mrope_angles(torch.zeros(3, 1), 16, [2, 2, 2], interleaved=False)


@pytest.mark.parametrize("section", SECTIONS)
def test_sectioned_equals_qwen2_vl_code(section):
    d = 2 * sum(section)
    pos = torch.stack([torch.randint(0, 50, (2, 7), generator=g)
                       for g in [torch.Generator().manual_seed(i)
                                 for i in range(3)]])  # (3, bs, T)
    q, k = random(2, 2, 3, 7, d)  # (2, bs, H, T, d)
    cos, sin = hf_qwen2_vl_cos_sin(pos, d, 1e6)
    ref_q, ref_k = hf_apply_multimodal_rotary_pos_emb(q, k, cos, sin,
                                                      section)
    pos_h = pos[:, :, None, :]  # (3, bs, 1, T): every head
    sb.assert_close(apply_mrope(q, pos_h, section, interleaved=False,
                                rope_theta=1e6), ref_q)
    sb.assert_close(apply_mrope(k, pos_h, section, interleaved=False,
                                rope_theta=1e6), ref_k)


@pytest.mark.parametrize("section", INTERLEAVABLE)
def test_interleaved_equals_qwen3_vl_code(section):
    d = 2 * sum(section)
    gens = [torch.Generator().manual_seed(10 + i) for i in range(3)]
    pos = torch.stack([torch.randint(0, 500, (2, 5), generator=g)
                       for g in gens])
    x = random(2, 5, d, seed=3)  # (bs, T, d)
    cos, sin = hf_qwen3_vl_cos_sin(pos, d, 5e6, section)
    ref = x * cos + hf_rotate_half(x) * sin
    out = apply_mrope(x, pos, section, interleaved=True, rope_theta=5e6)
    sb.assert_close(out, ref)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("section", INTERLEAVABLE)
def test_text_tokens_are_exactly_1d_rope(section, interleaved):
    """t = h = w: bit for bit the site's RoPE entry, half-split layout."""
    d = 2 * sum(section)
    m = torch.tensor([0, 1, 2, 7, 100, 4095, 131071])
    x = random(3, len(m), d, seed=5)
    for dtype in (F64, torch.float32):
        xd = x.to(dtype)
        out = apply_mrope(xd, m.expand(3, -1), section,
                          interleaved=interleaved)
        assert torch.equal(out, apply_rope(xd, m, layout="half"))


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotation_is_block_diagonal_per_axis(interleaved):
    section, d = [4, 2, 2], 16
    axes = mrope_axes(section, interleaved).tolist()
    x = random(4, d, seed=8)
    pos = torch.tensor([[0, 3, 9, 40], [0, 1, 2, 3], [0, 5, 0, 60]])
    out = apply_mrope(x, pos, section, interleaved=interleaved)
    for t in range(4):
        r = rotation_matrix(pos[:, t].tolist(), d, axes)
        sb.assert_close(out[t], x[t] @ r)
    sb.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    sb.assert_close(out[0], x[0])  # (0, 0, 0): no rotation


@PROPERTY_SETTINGS
@given(p_q=st.lists(st.integers(0, 3000), min_size=3, max_size=3),
       p_k=st.lists(st.integers(0, 3000), min_size=3, max_size=3),
       shift=st.lists(st.integers(0, 3000), min_size=3, max_size=3),
       section=st.sampled_from(INTERLEAVABLE), interleaved=st.booleans(),
       seed=st.integers(0, 2**16))
def test_property_score_depends_only_on_differences_per_axis(
        p_q, p_k, shift, section, interleaved, seed):
    d = 2 * sum(section)
    q, k = random(2, 1, d, seed=seed)
    axes = mrope_axes(section, interleaved).tolist()

    def score(a, b):
        q_a = apply_mrope(q, torch.tensor(a)[:, None], section,
                          interleaved=interleaved)
        k_b = apply_mrope(k, torch.tensor(b)[:, None], section,
                          interleaved=interleaved)
        return (q_a @ k_b.T)[0, 0]

    s = score(p_q, p_k)
    moved = score([a + c for a, c in zip(p_q, shift)],
                  [b + c for b, c in zip(p_k, shift)])
    torch.testing.assert_close(s, moved, atol=1e-9, rtol=1e-9)
    # q R_(p_q) (k R_(p_k))^T = q R_(p_q - p_k) k^T
    diff = [a - b for a, b in zip(p_q, p_k)]
    r = rotation_matrix(diff, d, axes)
    torch.testing.assert_close(s, q[0] @ r @ k[0], atol=1e-9, rtol=1e-9)


def test_layouts_are_the_same_rotation_with_pairs_reordered():
    """Interleaved = sectioned with each pair moved, frequency and all:
    reorder the pairs of x and of theta_c by the permutation that sends
    the k-th pair of axis a in one layout to the k-th in the other."""
    section, d, base = [24, 20, 20], 128, 10000.0
    sec, inter = mrope_axes(section), mrope_axes(section, interleaved=True)
    # pair c of the interleaved layout is pair perm[c] of the sectioned one
    perm = torch.empty(d // 2, dtype=torch.long)
    for a in range(3):
        perm[inter == a] = torch.nonzero(sec == a).flatten()
    assert torch.equal(sec[perm], inter)
    pos = torch.tensor([[2, 7, 7], [5, 0, 3], [1, 9, 4]])  # (3, T)
    x = random(3, d, seed=11)
    out = apply_mrope(x, pos, section, interleaved=True)
    # the sectioned rotation with frequencies theta_perm^-1 ... applied to
    # the reordered coordinates, written with rotation matrices
    theta = base ** (-2 * torch.arange(d // 2, dtype=F64) / d)
    moved_theta = torch.empty_like(theta)
    moved_theta[perm] = theta
    for t in range(3):
        p = pos[:, t].tolist()
        angles = torch.tensor([p[sec[c]] for c in range(d // 2)]) * moved_theta
        cols = torch.cat((perm, perm + d // 2))  # the coordinates of x, moved
        xm = torch.empty_like(x[t])
        xm[cols] = x[t]
        a2 = torch.cat((angles, angles))
        ym = xm * a2.cos() + torch.cat((-xm[d // 2:], xm[:d // 2])) * a2.sin()
        sb.assert_close(out[t], ym[cols])


def test_no_change_of_basis_turns_one_layout_into_the_other():
    """For a shift in time alone, the eigenvalues of the rotation are
    e^(+-i theta_c) over the pairs that read t: an orthogonal change of
    basis (a permutation of the rows of W^Q and W^K included) keeps them,
    and they differ between the layouts."""
    section, d = [24, 20, 20], 128
    angles = []
    for flag in (False, True):
        r = rotation_matrix([1, 0, 0], d, mrope_axes(section, flag).tolist())
        ev = torch.linalg.eigvals(r)
        angles.append(torch.sort(ev.angle().abs()).values)
    assert not torch.allclose(angles[0], angles[1], atol=1e-6)
    # the temporal axis reaches down to the slowest frequency only when
    # interleaved: theta_64 against theta_24
    low = [a[a > 1e-12].min().item() for a in angles]
    assert low[0] == pytest.approx(10000.0 ** (-2 * 23 / d))
    assert low[1] == pytest.approx(10000.0 ** (-2 * 63 / d))


def test_text_tokens_agree_between_layouts_and_vision_tokens_do_not():
    section, d = [24, 20, 20], 128
    x = random(6, d, seed=2)
    text = torch.arange(6).expand(3, -1)
    a, b = (apply_mrope(x, text, section, interleaved=f) for f in (0, 1))
    assert torch.equal(a, b)
    image = torch.tensor([[3] * 6, [3, 3, 3, 4, 4, 4], [3, 4, 5, 3, 4, 5]])
    a, b = (apply_mrope(x, image, section, interleaved=f) for f in (0, 1))
    assert not torch.allclose(a[1:], b[1:])


SEQUENCES = [
    [("text", 5)],
    [("text", 3), ("vision", (1, 4, 6)), ("text", 2)],
    [("text", 1), ("vision", (1, 8, 4)), ("text", 4), ("vision", (1, 2, 2))],
    [("text", 2), ("vision", (3, 4, 4)), ("text", 3)],  # a video
    [("text", 1), ("vision", (2, 6, 2)), ("text", 2), ("vision", (1, 2, 8)),
     ("text", 1)],
]


@pytest.mark.parametrize("segments", SEQUENCES)
def test_position_ids_equal_get_rope_index(segments):
    ids, images, videos = token_ids(segments)
    expected = hf_get_rope_index(ids, images, videos)
    assert torch.equal(mrope_position_ids(segments), expected)


def test_qwen2_vl_docstring_example():
    """get_rope_index's own example: a video of 3 x 2 x 2 tokens, then
    five text tokens at 3 .. 7."""
    ids = mrope_position_ids([("vision", (3, 4, 4)), ("text", 5)])
    assert ids[0].tolist() == [0] * 4 + [1] * 4 + [2] * 4 + [3, 4, 5, 6, 7]
    assert ids[1].tolist() == [0, 0, 1, 1] * 3 + [3, 4, 5, 6, 7]
    assert ids[2].tolist() == [0, 1, 0, 1] * 3 + [3, 4, 5, 6, 7]


def test_qwen3_vl_video_frames_each_start_again():
    """Qwen3-VL splits a video of 3 frames into frames of t = 1, each after
    its timestamp's text tokens: each frame has t = its own start."""
    frames = [("text", 2), ("vision", (1, 4, 4))] * 3
    ids = mrope_position_ids(frames)
    tokens, _, _ = token_ids(frames)
    tokens = [VIDEO if i == IMAGE else i for i in tokens]  # video tokens
    expected = hf_get_rope_index(tokens, torch.tensor([[0, 0, 0]]),
                                 torch.tensor([[3, 4, 4]]), qwen3=True)
    assert torch.equal(ids, expected)
    assert ids[0].tolist() == [0, 1] + [2] * 4 + [4, 5] + [6] * 4 \
        + [8, 9] + [10] * 4


def test_text_after_vision_counts_from_the_largest_position():
    """A wide image advances the positions by its width, not by its
    number of tokens: the next text token is not at its index."""
    ids = mrope_position_ids([("vision", (1, 2, 16)), ("text", 1)])
    assert ids.shape == (3, 9)
    assert ids[:, -1].tolist() == [8, 8, 8]  # index 8, after w = 0 .. 7
    ids = mrope_position_ids([("vision", (1, 8, 8)), ("text", 1)])
    assert ids[:, -1].tolist() == [4, 4, 4]  # 16 tokens, position 4


def test_unknown_segment_is_refused():
    with pytest.raises(ValueError, match="text or vision"):
        mrope_position_ids([("audio", 3)])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("interleaved", [False, True])
def test_half_precision_with_float32_angles(dtype, interleaved):
    section, d = [24, 20, 20], 128
    gens = [torch.Generator().manual_seed(i) for i in range(3)]
    pos = torch.stack([torch.randint(0, 30000, (64,), generator=g)
                       for g in gens])
    x = random(64, d, seed=4)
    exact = apply_mrope(x, pos, section, interleaved=interleaved)
    low = apply_mrope(x.to(dtype), pos, section, interleaved=interleaved)
    assert low.dtype == dtype
    assert mrope_angles(pos, d, section, interleaved=interleaved,
                        dtype=dtype).dtype == torch.float32
    torch.testing.assert_close(low.double(), exact, atol=0.05, rtol=0.02)
