"""snippets/rotary_position_embedding.py against the paper's rotation
matrices, the complex form, SDPA, and the layout conversion."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.rotary_position_embedding as mod
from snippets.rotary_position_embedding import (
    apply_partial_rope,
    apply_rope,
    apply_rope_qk,
    half_to_interleaved_rows,
    interleaved_to_half_rows,
    rope_angles,
    rope_complex,
    rotate_halves,
    rotate_pairs,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "interleaved: q_5 . k_2 = -1.7961, q_105 . k_102 = -1.7961",
        "half: q_5 . k_2 = 0.5062, q_105 . k_102 = 0.5062",
        "scores depend only on m - n: True",
        "complex form equals real form: True",
        "position 1001 stored in bfloat16: 1000",
        "bfloat16 result, float32 angles, close to float64: True",
        "bfloat16 result, bfloat16 angles, close to float64: False",
    ],
    "layouts": [
        "row order of head 0 after conversion: [0, 2, 4, 6, 1, 3, 5, 7]",
        "half-split code, rows permuted: same scores: True",
        "half-split code, rows as stored: same scores: False",
        "converting back restores the checkpoint: True",
    ],
    "offset": [
        "decode with position_ids=[5] matches the full pass: True",
        "decode with position_ids=[0] matches the full pass: False",
    ],
    "partial": [
        "m=5, n=2: rotated part -1.0019, rest -7.7293",
        "m=105, n=102: rotated part -1.0019, rest -7.7293",
        "m=105, n=40: rotated part 2.1476, rest -7.7293",
        "the rest is q . k of the unrotated coordinates: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             derandomize=True)
F64 = torch.float64
LAYOUT_NAMES = ["interleaved", "half"]

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def paper_thetas(d, base=10000.0):
    """Eq. 15 of arXiv 2104.09864: theta_i = base^(-2(i-1)/d), i = 1..d/2."""
    return [base ** (-2 * (i - 1) / d) for i in range(1, d // 2 + 1)]


def rotation_matrix(m, d, pairs, base=10000.0):
    """R_m (d, d) acting on column vectors: a 2 x 2 rotation by m * theta_i
    on the two coordinates of pair i (a list of (a, b) index pairs)."""
    r = torch.zeros(d, d, dtype=F64)
    for (a, b), theta in zip(pairs, paper_thetas(d, base)):
        c, s = math.cos(m * theta), math.sin(m * theta)
        r[a, a], r[a, b], r[b, a], r[b, b] = c, -s, s, c
    return r


def interleaved_pairs(d):
    return [(2 * i, 2 * i + 1) for i in range(d // 2)]


def half_pairs(d):
    return [(i, i + d // 2) for i in range(d // 2)]


PAIRS = {"interleaved": interleaved_pairs, "half": half_pairs}


def random(*shape, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


@pytest.mark.parametrize("d,base", [(2, 10000.0), (8, 10000.0),
                                    (64, 10000.0), (16, 500000.0)])
def test_angles_follow_equation_15(d, base):
    pos = torch.tensor([0, 1, 7, 4095])
    angles = rope_angles(pos, d, rope_theta=base, dtype=F64)
    expected = torch.tensor([[m * t for t in paper_thetas(d, base)]
                             for m in pos.tolist()], dtype=F64)
    assert angles.shape == (4, d // 2)
    sb.assert_close(angles, expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16,
                                   torch.float32])
def test_angles_are_never_computed_in_half_precision(dtype):
    assert rope_angles(torch.arange(3), 4, dtype=dtype).dtype == torch.float32
    assert rope_angles(torch.arange(3), 4, dtype=F64).dtype == F64


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("d", [2, 4, 10])
def test_rotation_is_the_papers_block_diagonal_matrix(layout, d):
    x = random(5, d)
    pos = torch.tensor([0, 1, 3, 50, 1000])
    out = apply_rope(x, pos, layout=layout)
    for t, m in enumerate(pos.tolist()):
        r = rotation_matrix(m, d, PAIRS[layout](d))
        sb.assert_close(out[t], r @ x[t])  # row of x as a column vector
    sb.assert_close(out.norm(dim=-1), x.norm(dim=-1))  # a rotation
    sb.assert_close(out[0], x[0])  # position 0: no rotation


@PROPERTY_SETTINGS
@given(m=st.integers(0, 5000), n=st.integers(0, 5000),
       shift=st.integers(-3000, 3000), half_d=st.integers(1, 12),
       base=st.sampled_from([10000.0, 1e6]),
       layout=st.sampled_from(LAYOUT_NAMES), seed=st.integers(0, 2**16))
def test_property_scores_depend_only_on_m_minus_n(m, n, shift, half_d, base,
                                                  layout, seed):
    d = 2 * half_d
    q, k = random(2, 1, d, seed=seed)

    def score(a, b):
        q_a = apply_rope(q, torch.tensor([a]), layout=layout, rope_theta=base)
        k_b = apply_rope(k, torch.tensor([b]), layout=layout, rope_theta=base)
        return (q_a @ k_b.T)[0, 0]

    s = score(m, n)
    if min(m, n) + shift >= 0:
        torch.testing.assert_close(s, score(m + shift, n + shift),
                                   atol=1e-9, rtol=1e-9)
    # eq. 16: q_m . k_n = q^T R_(n - m) k
    r = rotation_matrix(n - m, d, PAIRS[layout](d), base)
    torch.testing.assert_close(s, q[0] @ r @ k[0], atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("dtype", [F64, torch.float32])
def test_complex_form_equals_real_form(dtype):
    x = random(2, 3, 17, 12, dtype=dtype)
    pos = torch.arange(100, 117)
    out = rope_complex(x, pos)
    assert out.dtype == dtype and out.shape == x.shape
    sb.assert_close(out, apply_rope(x, pos, layout="interleaved"))
    sb.assert_close(out, rotate_pairs(x, rope_angles(pos, 12, dtype=dtype)))


def half_split_index(d):
    """Where each interleaved coordinate lands in the half-split layout,
    written out: coordinate 2i + t goes to t * d/2 + i."""
    perm = [0] * d
    for i in range(d // 2):
        for t in (0, 1):
            perm[t * (d // 2) + i] = 2 * i + t
    return torch.tensor(perm)


@pytest.mark.parametrize("d", [2, 8, 12])
def test_the_two_layouts_are_the_same_rotation_of_permuted_coordinates(d):
    x = random(7, d)
    angles = rope_angles(torch.arange(7), d, dtype=F64)
    perm = half_split_index(d)
    sb.assert_close(rotate_halves(x[:, perm], angles),
                    rotate_pairs(x, angles)[:, perm])


def permuted_rows_by_loop(weight, num_heads):
    d = weight.size(0) // num_heads
    perm = torch.cat([h * d + half_split_index(d) for h in range(num_heads)])
    return weight[perm]


@pytest.mark.parametrize("num_heads,d", [(1, 2), (4, 8), (3, 16)])
def test_row_permutation_matches_a_hand_written_index(num_heads, d):
    weight = random(num_heads * d, 5)
    converted = interleaved_to_half_rows(weight, num_heads)
    torch.testing.assert_close(converted,
                               permuted_rows_by_loop(weight, num_heads),
                               rtol=0, atol=0)
    bias = random(num_heads * d)
    torch.testing.assert_close(interleaved_to_half_rows(bias, num_heads),
                               permuted_rows_by_loop(bias, num_heads),
                               rtol=0, atol=0)
    back = half_to_interleaved_rows(converted, num_heads)
    assert torch.equal(back, weight)


def hf_permute(w, n_heads, dim1, dim2):
    """permute() of Hugging Face's convert_llama_weights_to_hf.py, as written there
    ("permute for sliced rotary"), applied to q_proj and k_proj."""
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(
        dim1, dim2)


@pytest.mark.parametrize("n_heads,d,d_model", [(4, 8, 32), (8, 16, 64), (2, 64, 48)])
def test_row_permutation_is_the_hugging_face_converter(n_heads, d, d_model):
    weight = random(n_heads * d, d_model, seed=12)
    torch.testing.assert_close(interleaved_to_half_rows(weight, n_heads),
                               hf_permute(weight, n_heads, n_heads * d, d_model),
                               rtol=0, atol=0)


def projected_scores(x, w_q, w_k, h, h_kv, d, layout, b_q=None, b_k=None):
    """Scores of a GQA layer whose q/k projections are given as nn.Linear
    weights; RoPE applied in the given layout."""
    bsz, t, _ = x.shape
    q = F.linear(x, w_q, b_q).view(bsz, t, h, d).transpose(1, 2)
    k = F.linear(x, w_k, b_k).view(bsz, t, h_kv, d).transpose(1, 2)
    q, k = apply_rope_qk(q, k, torch.arange(t), layout=layout)
    k = k.repeat_interleave(h // h_kv, dim=1)
    return q @ k.transpose(-2, -1)


@pytest.mark.parametrize("h,h_kv", [(4, 4), (4, 2), (6, 1)])
def test_converted_checkpoint_gives_identical_scores(h, h_kv):
    d, d_model = 8, 24
    x = random(2, 9, d_model, seed=1)
    w_q, b_q = random(h * d, d_model, seed=2), random(h * d, seed=3)
    w_k, b_k = random(h_kv * d, d_model, seed=4), random(h_kv * d, seed=5)
    meta = projected_scores(x, w_q, w_k, h, h_kv, d, "interleaved", b_q, b_k)
    to_half = interleaved_to_half_rows
    hf = projected_scores(x, to_half(w_q, h), to_half(w_k, h_kv), h, h_kv, d,
                          "half", to_half(b_q, h), to_half(b_k, h_kv))
    sb.assert_close(hf, meta)
    # the silent bug: the same weights loaded into the other layout
    wrong = projected_scores(x, w_q, w_k, h, h_kv, d, "half", b_q, b_k)
    assert (wrong - meta).abs().max() > 1.0
    # and the reverse direction
    to_meta = half_to_interleaved_rows
    back = projected_scores(x, to_meta(to_half(w_q, h), h),
                            to_meta(to_half(w_k, h_kv), h_kv), h, h_kv, d,
                            "interleaved", b_q, b_k)
    sb.assert_close(back, meta)


def test_sdpa_output_is_unchanged_when_all_positions_shift():
    q, k, v = random(3, 2, 4, 11, 16, seed=6)
    causal = torch.ones(11, 11, dtype=torch.bool).tril()
    outs = []
    for start in (0, 37, 9000):
        pos = torch.arange(start, start + 11)
        rq, rk = apply_rope_qk(q, k, pos, layout="half")
        outs.append(F.scaled_dot_product_attention(rq, rk, v,
                                                   attn_mask=causal))
    sb.assert_close(outs[1], outs[0])
    sb.assert_close(outs[2], outs[0])


def test_decoding_step_with_offset_position_ids():
    q, k = random(2, 1, 2, 8, 16, seed=7)
    full_q, full_k = apply_rope_qk(q, k, torch.arange(8), layout="half")
    new_q, new_k = apply_rope_qk(q[..., 6:, :], k[..., 6:, :],
                                 torch.tensor([6, 7]), layout="half")
    sb.assert_close(new_q, full_q[..., 6:, :])
    sb.assert_close(new_k, full_k[..., 6:, :])


def test_per_sequence_position_ids_broadcast_over_heads():
    q = random(2, 3, 5, 8, seed=8)
    k = random(2, 1, 5, 8, seed=9)  # one KV head (MQA)
    ids = torch.tensor([[0, 1, 2, 3, 4], [0, 0, 0, 1, 2]])  # left padded
    rq, rk = apply_rope_qk(q, k, ids, layout="interleaved")
    for b in range(2):
        eq, ek = apply_rope_qk(q[b:b + 1], k[b:b + 1], ids[b],
                               layout="interleaved")
        sb.assert_close(rq[b:b + 1], eq)
        sb.assert_close(rk[b:b + 1], ek)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_half_precision_with_float32_angles(dtype, layout):
    pos = torch.arange(0, 8192, 7)
    x = random(2, pos.numel(), 64, seed=10)
    exact = apply_rope(x, pos, layout=layout)
    low = apply_rope(x.to(dtype), pos, layout=layout)
    assert low.dtype == dtype
    sb.assert_close(low.double(), exact, dtype=dtype)
    q, k = apply_rope_qk(x.to(dtype)[:, None], x.to(dtype)[:, None], pos,
                         layout=layout)
    assert q.dtype == k.dtype == dtype


def test_angles_rounded_to_bfloat16_are_far_off():
    assert torch.tensor(257.0).bfloat16().item() == 256.0
    pos = torch.arange(4096)
    x = random(4096, 64, seed=11)
    exact = apply_rope(x, pos, layout="half")
    bad = rotate_halves(x.bfloat16(), rope_angles(pos, 64).bfloat16())
    assert (bad.double() - exact).abs().max() > 1.0


def test_float32_angles_near_a_million_positions_are_hundredths_off():
    """The page: float32 holds every position up to 2**24 exactly, but the
    other angles m theta_c are rounded, by up to about 0.06 rad near
    position 10**6 (against float64)."""
    pos = torch.arange(10**6 - 4096, 10**6)
    for theta in (10000.0, 1000000.0):
        single = rope_angles(pos, 128, rope_theta=theta)
        double = rope_angles(pos, 128, rope_theta=theta, dtype=torch.float64)
        error = (single.double() - double).abs()
        assert (error[:, 0] == 0).all()  # m theta_1 = m: exact
        assert 0.02 < error.max() < 0.1


def test_larger_theta_rotates_slower_and_pair_zero_turns_one_radian():
    for theta in (10000.0, 500000.0):
        angles = rope_angles(torch.tensor([1]), 16, rope_theta=theta)
        assert angles[0, 0] == 1.0
    slow = rope_angles(torch.tensor([1]), 16, rope_theta=500000.0)
    fast = rope_angles(torch.tensor([1]), 16)
    assert (slow[0, 1:] < fast[0, 1:]).all()


def test_bad_arguments_are_refused():
    x = torch.randn(3, 8)
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.randn(3, 7), torch.arange(3), layout="half")
    with pytest.raises(ValueError, match="layout"):
        apply_rope(x, torch.arange(3), layout="neox")
    with pytest.raises(TypeError):
        apply_rope(x, torch.arange(3), "half")  # layout is keyword-only
    with pytest.raises(TypeError):
        apply_rope(x, torch.arange(3))  # and has no default
    with pytest.raises(ValueError, match="heads"):
        interleaved_to_half_rows(torch.randn(12, 4), 4)  # width 3 is odd


# --- partial RoPE ---------------------------------------------------------------------------
@PROPERTY_SETTINGS
@given(m=st.integers(0, 5000), n=st.integers(0, 5000), shift=st.integers(0, 3000),
       half_r=st.integers(1, 8), extra=st.integers(0, 12),
       layout=st.sampled_from(LAYOUT_NAMES), seed=st.integers(0, 2**16))
def test_property_partial_rope_rotated_part_relative_rest_position_free(m, n, shift, half_r,
                                                                         extra, layout, seed):
    """The rotated coordinates give a score that depends only on m - n; the others give
    q . k of the unrotated coordinates, whatever the positions."""
    r = 2 * half_r
    d = r + extra
    q, k = random(2, 1, d, seed=seed)

    def parts(a, b):
        q_a = apply_partial_rope(q, torch.tensor([a]), rotary_dim=r, layout=layout)
        k_b = apply_partial_rope(k, torch.tensor([b]), rotary_dim=r, layout=layout)
        return (q_a[:, :r] @ k_b[:, :r].T)[0, 0], (q_a[:, r:] @ k_b[:, r:].T)[0, 0], q_a, k_b

    rot, rest, q_m, k_n = parts(m, n)
    rot_s, rest_s, _, _ = parts(m + shift, n + shift)
    torch.testing.assert_close(rot, rot_s, atol=1e-9, rtol=1e-9)
    # eq. 16 on the rotated part alone, with the frequencies of width r
    rmat = rotation_matrix(n - m, r, PAIRS[layout](r))
    torch.testing.assert_close(rot, q[0, :r] @ rmat @ k[0, :r], atol=1e-9, rtol=1e-9)
    assert torch.equal(q_m[:, r:], q[:, r:]) and torch.equal(k_n[:, r:], k[:, r:])
    torch.testing.assert_close(rest, q[0, r:] @ k[0, r:], atol=1e-12, rtol=1e-12)


def hf_partial_apply_rotary_pos_emb(q, k, cos, sin):
    """apply_rotary_pos_emb of Hugging Face's Qwen3-Next (and GPT-NeoX): rotate the first
    cos.shape[-1] coordinates with rotate_half, concatenate the rest back."""
    def rotate_half_hf(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
    q_embed = (q_rot * cos) + (rotate_half_hf(q_rot) * sin)
    k_embed = (k_rot * cos) + (rotate_half_hf(k_rot) * sin)
    return torch.cat([q_embed, q_pass], dim=-1), torch.cat([k_embed, k_pass], dim=-1)


@pytest.mark.parametrize("head_dim,factor", [(256, 0.25), (64, 0.25), (32, 0.5), (16, 1.0)])
def test_partial_rope_equals_hugging_faces_partial_rotary_factor(head_dim, factor):
    """Qwen3-Next: head_dim 256, partial_rotary_factor 0.25 -> 64 rotated coordinates; the
    frequencies are those of width int(head_dim * factor) (modeling_rope_utils)."""
    r = int(head_dim * factor)
    q, k = random(2, 1, 2, 7, head_dim, seed=20)
    pos = torch.arange(40, 47)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, r, 2, dtype=F64) / r))
    freqs = pos.double()[:, None] * inv_freq  # (T, r/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    ref_q, ref_k = hf_partial_apply_rotary_pos_emb(q, k, emb.cos(), emb.sin())
    sb.assert_close(apply_partial_rope(q, pos, rotary_dim=r, layout="half"), ref_q)
    sb.assert_close(apply_partial_rope(k, pos, rotary_dim=r, layout="half"), ref_k)


def test_partial_rope_limits_and_the_decoupled_key_of_mla():
    x, pos = random(6, 12, seed=21), torch.arange(100, 106)
    for layout in LAYOUT_NAMES:
        sb.assert_close(apply_partial_rope(x, pos, rotary_dim=12, layout=layout),
                        apply_rope(x, pos, layout=layout))
        assert torch.equal(apply_partial_rope(x, pos, rotary_dim=0, layout=layout), x)
    # MLA puts its rotated part last, [q^C; q^R] . [k^C; k^R]: the same scores as rotating the
    # first coordinates of the permuted vectors, q^C . k^C + RoPE(q^R) . RoPE(k^R)
    q_c, k_c = random(2, 6, 8, seed=22)
    q_r, k_r = random(2, 6, 4, seed=23)
    mla_q = torch.cat((q_c, apply_rope(q_r, pos, layout="half")), dim=-1)
    mla_k = torch.cat((k_c, apply_rope(k_r, pos, layout="half")), dim=-1)
    first_q = apply_partial_rope(torch.cat((q_r, q_c), dim=-1), pos, rotary_dim=4, layout="half")
    first_k = apply_partial_rope(torch.cat((k_r, k_c), dim=-1), pos, rotary_dim=4, layout="half")
    sb.assert_close(mla_q @ mla_k.T, first_q @ first_k.T)
