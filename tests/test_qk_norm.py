"""snippets/qk_norm.py: against RMSNorm/LayerNorm written out and SDPA, against
nn.MultiheadAttention without the norm, and the logit bound (holds, is tight)."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.qk_norm as mod
from snippets.qk_norm import QKNormSelfAttention, logit_bound
from snippets.rotary_position_embedding import apply_rope
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "matches RMSNorm + F.scaled_dot_product_attention: True",
        "bound sqrt(d_k) * max|g_q g_k|: 9.8885",
        "max |logit| with inputs x 1000: 5.1991",
        "within the bound: True",
    ],
    "logit_growth": [
        "scale  max|logit| plain  qk-norm  top weight plain  qk-norm",
        "    1              1.10     3.19            0.1095   0.2470",
        "    2              4.41     3.19            0.3368   0.2470",
        "    4             17.63     3.19            0.7647   0.2470",
        "    8             70.53     3.19            0.9376   0.2470",
        "   16            282.12     3.19            0.9830   0.2470",
        "   32           1128.47     3.19            0.9972   0.2470",
        "qk-norm bound: 4.00",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
F64 = torch.float64
EPS = 1e-6

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "qk_norm.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


def make(seed, d_model, heads, norm, gains=True):
    torch.manual_seed(seed)
    attn = QKNormSelfAttention(d_model, heads, norm=norm, eps=EPS).double()
    if norm is not None and gains:
        with torch.no_grad():
            attn.q_norm.weight.uniform_(-2.0, 2.0)
            attn.k_norm.weight.uniform_(-2.0, 2.0)
    return attn


def normalise(t, gain, norm):
    """RMSNorm and bias-free LayerNorm over the last dimension, written out."""
    if norm == "rms":
        return gain * t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + EPS)
    centred = t - t.mean(-1, keepdim=True)
    return gain * centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + EPS)


@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_matches_the_norms_written_out_and_sdpa(norm):
    attn = make(0, 12, 3, norm)
    x = torch.randn(2, 5, 12, dtype=F64)
    attend = torch.ones(5, 5, dtype=torch.bool).tril()
    q = normalise(attn.split(attn.w_q(x)), attn.q_norm.weight, norm)
    k = normalise(attn.split(attn.w_k(x)), attn.k_norm.weight, norm)
    v = attn.split(attn.w_v(x))
    sb.assert_close(attn.logits(x), q @ k.transpose(-2, -1) / math.sqrt(4))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    ref = attn.w_o(ref.transpose(1, 2).reshape(2, 5, 12))
    sb.assert_close(attn(x, attend=attend), ref)


def test_without_the_norm_it_is_nn_multihead_attention():
    attn = make(1, 12, 3, None)
    mha = nn.MultiheadAttention(12, 3, bias=False, batch_first=True, dtype=F64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([attn.w_q.weight, attn.w_k.weight, attn.w_v.weight]))
        mha.out_proj.weight.copy_(attn.w_o.weight)
    x = torch.randn(2, 6, 12, dtype=F64)
    expected, _ = mha(x, x, x, need_weights=False)
    sb.assert_close(attn(x), expected)


@PROPERTY_SETTINGS
@given(
    heads=st.integers(1, 3),
    d_k=st.integers(1, 8),
    norm=st.sampled_from(["rms", "layer"]),
    log_scale=st.floats(-3, 6),
    seed=st.integers(0, 2**16),
)
def test_property_logits_never_exceed_the_bound(heads, d_k, norm, log_scale, seed):
    attn = make(seed, heads * d_k, heads, norm)
    x = 10**log_scale * torch.randn(2, 7, heads * d_k, dtype=F64)
    with torch.no_grad():
        assert attn.logits(x).abs().max() <= logit_bound(attn)


def rope_logits(attn, q_in, k_in, layout):
    """Norm, then RoPE at positions 0..T-1, then the scaled scores: the
    order of Qwen3, Gemma 3 and OLMo 2. q_in, k_in: (T, d_k)."""
    positions = torch.arange(q_in.size(0))
    q = apply_rope(attn.q_norm(q_in), positions, layout=layout)
    k = apply_rope(attn.k_norm(k_in), positions, layout=layout)
    return (q @ k.T) / math.sqrt(attn.d_k)


def pair(layout, d_k):
    """The two coordinates RoPE rotates together as its fastest pair."""
    return (0, 1) if layout == "interleaved" else (0, d_k // 2)


@PROPERTY_SETTINGS
@given(
    d_k=st.sampled_from([2, 4, 8]),
    layout=st.sampled_from(["interleaved", "half"]),
    norm=st.sampled_from(["rms", "layer"]),
    adversarial=st.booleans(),
    big=st.floats(2.0, 50.0),
    seed=st.integers(0, 2**16),
)
def test_property_with_rope_after_the_norm(d_k, layout, norm, adversarial,
                                           big, seed):
    """With RoPE after the norm, logits stay under the RoPE bound. In the
    adversarial case the query gain is large on one coordinate of a pair
    and the key gain on the other: the logits then pass the bound without
    RoPE (sqrt(d_k) max|g_q g_k|) and come close to the RoPE bound."""
    attn = make(seed, 2 * d_k, 2, norm)
    gen = torch.Generator().manual_seed(seed)
    q_in = torch.randn(16, d_k, generator=gen, dtype=F64) * 100
    k_in = torch.randn(16, d_k, generator=gen, dtype=F64) * 100
    if adversarial:
        a, b = pair(layout, d_k)
        with torch.no_grad():
            attn.q_norm.weight.uniform_(-0.1, 0.1)
            attn.k_norm.weight.uniform_(-0.1, 0.1)
            attn.q_norm.weight[a], attn.k_norm.weight[b] = big, -big
        q_in, k_in = torch.zeros(16, d_k, dtype=F64), torch.zeros(16, d_k,
                                                                  dtype=F64)
        q_in[:, a], k_in[:, b] = 1e3, 1e3
        if norm == "layer":  # a centred one-hot: still mostly on a, b
            q_in[:, a] = k_in[:, b] = 1e3 * d_k
    with torch.no_grad():
        largest = rope_logits(attn, q_in, k_in, layout).abs().max()
        assert largest <= logit_bound(attn, rope=True) * (1 + 1e-9)
        if adversarial and norm == "rms":
            assert largest > 0.99 * logit_bound(attn, rope=True)
            assert largest > 10 * logit_bound(attn)  # the plain bound fails


def test_review_example_rope_bound_is_a_hundred_times_the_plain_one():
    """d_k = 8, g_q = (10, 0.1, ...), g_k = (0.1, 10, ...): the plain bound
    is sqrt(8) * 1 = 2.83, RoPE after the norm reaches about 282.8."""
    attn = make(0, 16, 2, "rms", gains=False)
    with torch.no_grad():
        attn.q_norm.weight.fill_(0.1)
        attn.k_norm.weight.fill_(0.1)
        attn.q_norm.weight[0], attn.k_norm.weight[1] = 10.0, 10.0
        q_in = torch.zeros(16, 8, dtype=F64)
        k_in = torch.zeros(16, 8, dtype=F64)
        q_in[:, 0], k_in[:, 1] = 1.0, 1.0
        largest = rope_logits(attn, q_in, k_in, "interleaved").abs().max()
        torch.testing.assert_close(logit_bound(attn),
                                   torch.tensor(math.sqrt(8), dtype=F64))
        torch.testing.assert_close(logit_bound(attn, rope=True),
                                   torch.tensor(100 * math.sqrt(8),
                                                dtype=F64))
        assert largest > 0.999 * 100 * math.sqrt(8)


def test_the_models_own_score_scale():
    """Gemma 3 27B scales by query_pre_attn_scalar**-0.5 = 1/sqrt(168)
    with d_k = 128: the bound scales with it."""
    attn = make(1, 256, 2, "rms")
    default = logit_bound(attn)
    gemma = logit_bound(attn, scale=168**-0.5)
    torch.testing.assert_close(gemma, default * math.sqrt(128 / 168))
    x = 1e3 * torch.randn(1, 5, 256, dtype=F64)
    with torch.no_grad():
        q, k = attn.qk(x)
        assert ((q @ k.transpose(-2, -1)) * 168**-0.5).abs().max() <= gemma


@pytest.mark.parametrize("d_k", [1, 4, 16])
def test_rms_bound_is_reached_along_the_largest_gain(d_k):
    attn = make(2, 2 * d_k, 2, "rms")
    gains = attn.q_norm.weight * attn.k_norm.weight
    i = gains.abs().argmax()
    e = torch.zeros(d_k, dtype=F64)
    e[i] = 1e3  # large enough that eps does not matter
    with torch.no_grad():
        u, w = attn.q_norm(e), attn.k_norm(e)
        logit = (u @ w).abs() / math.sqrt(d_k)
        torch.testing.assert_close(logit, logit_bound(attn), rtol=1e-8, atol=0)


def test_layer_norm_bound_is_reached_with_equal_gains():
    attn = make(3, 16, 2, "layer", gains=False)
    with torch.no_grad():
        attn.q_norm.weight.fill_(1.5)
        attn.k_norm.weight.fill_(-2.0)
        t = torch.randn(8, dtype=F64) * 100
        logit = (attn.q_norm(t) @ attn.k_norm(t)).abs() / math.sqrt(8)
        torch.testing.assert_close(logit, logit_bound(attn), rtol=1e-8, atol=0)
        assert logit_bound(attn) == math.sqrt(8) * 3.0


def test_scaling_the_input_scales_plain_logits_by_its_square_only():
    plain, normed = make(4, 16, 2, None), make(4, 16, 2, "rms")
    x = torch.randn(1, 6, 16, dtype=F64)
    with torch.no_grad():
        for s in (1e-2, 3.0, 1e4):
            sb.assert_close(plain.logits(s * x), s**2 * plain.logits(x))
        for s in (3.0, 1e4):  # RMSNorm is scale invariant while mean(q^2) >> eps
            torch.testing.assert_close(normed.logits(s * x), normed.logits(x), rtol=1e-5, atol=1e-5)
        # for tiny activations eps takes over and the logits shrink towards 0
        assert normed.logits(1e-4 * x).abs().max() < 0.1 * normed.logits(x).abs().max()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_logits_stay_finite_with_qk_norm(dtype):
    torch.manual_seed(5)
    normed = QKNormSelfAttention(64, 4, norm="rms")
    plain = QKNormSelfAttention(64, 4, norm=None)
    plain.load_state_dict(normed.state_dict(), strict=False)
    x = 1000 * torch.randn(1, 8, 64)
    with torch.no_grad():
        ref = normed.logits(x)
        low = normed.to(dtype).logits(x.to(dtype))
        assert low.isfinite().all() and low.abs().max() <= logit_bound(normed) * 1.01
        sb.assert_close(low.float(), ref, dtype=dtype)
        out = normed(x.to(dtype))
        assert out.dtype == dtype and out.isfinite().all()
        if dtype == torch.float16:  # what the norm prevents: the plain logits overflow
            assert plain.half().logits(x.half()).isinf().any()


def test_gradcheck_float64():
    attn = make(6, 8, 2, "rms")
    x = torch.randn(1, 4, 8, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: attn(x), (x,))


def test_invalid_arguments_raise():
    with pytest.raises(ValueError, match="norm"):
        QKNormSelfAttention(8, 2, norm="batch")
    with pytest.raises(ValueError, match="divide"):
        QKNormSelfAttention(10, 3)


def test_norm_over_all_heads_together_is_bounded_h_times_looser():
    """OLMo 2's layout (the module docstring): RMSNorm over h * d_k at once.
    A head can carry the whole norm, so its logits reach h sqrt(d_k) max|g|."""
    h, d_k = 4, 8
    norm = nn.RMSNorm(h * d_k, eps=EPS, dtype=F64)
    with torch.no_grad():
        norm.weight.fill_(1.5)
    q = torch.zeros(h * d_k, dtype=F64)
    q[0] = 1e3  # all the energy in head 1, one coordinate
    u = norm(q).view(h, d_k)[0]
    logit = (u @ u) / math.sqrt(d_k)
    torch.testing.assert_close(logit, torch.tensor(h * math.sqrt(d_k) * 1.5**2, dtype=F64), rtol=1e-8, atol=0)
    # per head (this module), the same q gives at most sqrt(d_k) * 1.5**2
    per_head = nn.RMSNorm(d_k, eps=EPS, dtype=F64)
    with torch.no_grad():
        per_head.weight.fill_(1.5)
    w = per_head(q.view(h, d_k))[0]
    assert (w @ w) / math.sqrt(d_k) <= math.sqrt(d_k) * 1.5**2 * (1 + 1e-12)
