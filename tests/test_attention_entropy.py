"""snippets/attention_entropy.py: the entropy of uniform and one-hot rows, the entropy of
F.scaled_dot_product_attention's weights against the formula, the floor under bounded logits
(QK-norm, soft-capping; random and adversarial inputs; the floor is tight and its minimising k
is not always 1), and the entropy falling as the logit scale grows (dH/dt = -t Var_a(z))."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.attention_entropy as mod
from snippets.attention_entropy import attention_entropy, entropy_floor, entropy_from_logits, sdpa_weights
from snippets.logit_soft_capping import soft_cap
from snippets.qk_norm import QKNormSelfAttention, logit_bound
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "uniform over 8 keys: 2.0794 = log 8 = 2.0794",
        "one-hot: 0.0000",
        "entropy of SDPA's weights = the direct formula: True",
        "query 1 sees one key, entropy 0: True",
        "mean entropy per head: 0.879 0.897 0.865 0.957",
        "scale  mean entropy",
        " 0.25        1.2957",
        "  0.5        1.2416",
        "    1        1.0796",
        "    2        0.7639",
        "    4        0.4266",
        "    8        0.1911",
    ],
    "floors": [
        "  scale   plain  qk-norm  soft-cap",
        "      1  3.2111   2.5813    3.2254",
        "     10  0.0000   2.5813    2.0478",
        "    100  0.0000   2.5813    2.1985",
        "   1000  0.0000   2.5813    2.1985",
        "floor, c = 4: 0.0927   c = 5: 0.0155",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_every_line_fits_79_characters():
    lines = (sb.SNIPPETS / "attention_entropy.py").read_text().splitlines()
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []


@pytest.mark.parametrize("s", [1, 2, 7, 128])
def test_uniform_is_log_s_and_one_hot_is_zero(s):
    uniform = torch.full((s,), 1 / s, dtype=F64)
    torch.testing.assert_close(attention_entropy(uniform), torch.tensor(math.log(s), dtype=F64))
    for j in range(min(s, 5)):
        one_hot = F.one_hot(torch.tensor(j), s).to(F64)
        assert attention_entropy(one_hot).item() == 0.0
        assert not math.copysign(1.0, attention_entropy(one_hot).item()) < 0  # no -0.0
    # equal logits: the uniform row, from the logits too
    torch.testing.assert_close(entropy_from_logits(torch.full((s,), 3.0, dtype=F64)),
                               torch.tensor(math.log(s), dtype=F64))


def test_entropy_lies_between_0_and_log_s():
    gen = torch.Generator().manual_seed(1)
    for s in (2, 5, 40):
        z = 10 * torch.randn(200, s, generator=gen, dtype=F64)
        h = entropy_from_logits(z)
        assert (h >= 0).all() and (h <= math.log(s) + 1e-12).all()


def reference_entropy(scores):
    """-sum p log p with the softmax written out in float64; masked keys (-inf) skipped."""
    z = scores.double()
    p = torch.exp(z - z.amax(-1, keepdim=True))
    p = p / p.sum(-1, keepdim=True)
    terms = torch.where(p > 0, -p * torch.log(p), torch.zeros_like(p))
    return terms.sum(-1)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_sdpa_weights_entropy_equals_the_direct_formula(masked, dtype):
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(2, 3, 5, 8, generator=gen, dtype=dtype)
    k = torch.randn(2, 3, 7, 8, generator=gen, dtype=dtype)
    attend = torch.rand(5, 7, generator=gen) > 0.4 if masked else None
    if attend is not None:
        attend[:, 0] = True  # every query sees one key at least
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(8)
    if attend is not None:
        scores = scores.masked_fill(~attend, -math.inf)
    weights = sdpa_weights(q, k, attend=attend)
    torch.testing.assert_close(weights, scores.softmax(-1))  # SDPA with v = I returns A
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(attention_entropy(weights).double(), reference_entropy(scores), **tol)
    torch.testing.assert_close(entropy_from_logits(scores).double(), reference_entropy(scores), **tol)
    if attend is not None:  # S counts the visible keys only: a uniform row is log(visible)
        flat = sdpa_weights(torch.zeros_like(q), k, attend=attend)
        torch.testing.assert_close(attention_entropy(flat), attend.sum(-1).to(dtype).log().expand_as(flat[..., 0]),
                                   **tol)


def test_sdpa_weights_with_its_own_scale_and_causal_mask():
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 1, 2, 6, 4, generator=gen, dtype=F64).unbind(0)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    weights = sdpa_weights(q, k, attend=causal, scale=0.3)
    torch.testing.assert_close(weights, (0.3 * q @ k.transpose(-2, -1)).masked_fill(~causal, -math.inf).softmax(-1))
    assert attention_entropy(weights)[..., 0].abs().max() == 0.0


def brute_floor(c, s):
    """Every corner of [-c, c]^s: the minimum entropy over them."""
    best = math.inf
    for bits in range(1, 2 ** s):
        z = torch.tensor([c if bits >> j & 1 else -c for j in range(s)], dtype=F64)
        best = min(best, entropy_from_logits(z).item())
    return best


BOX_HALF_WIDTHS = (0.05, 0.3, 1.0, 2.5, 6.0)


@pytest.mark.parametrize("s", [2, 3, 5, 8])
def test_floor_is_the_least_entropy_over_the_box(s):
    """The floor equals the best corner, and no point of the box found by descent goes below it.
    Every c descends at once: z = c u with u in [-1, 1]^s, and Adam's step on u (lr 0.05) is a
    step of 0.05 c on z, since Adam's step does not depend on the scale of the gradient."""
    c = torch.tensor(BOX_HALF_WIDTHS, dtype=F64).view(-1, 1, 1)  # (C, 1, 1)
    floors = torch.tensor([entropy_floor(ci, s) for ci in BOX_HALF_WIDTHS], dtype=F64)
    for ci, floor in zip(BOX_HALF_WIDTHS, floors.tolist()):
        assert floor == pytest.approx(brute_floor(ci, s), rel=1e-12, abs=1e-15), ci
    gen = torch.Generator().manual_seed(4)
    u = (torch.rand(len(BOX_HALF_WIDTHS), 256, s, generator=gen, dtype=F64) * 2 - 1).requires_grad_()
    opt = torch.optim.Adam([u], lr=0.05)
    for _ in range(200):
        opt.zero_grad()
        entropy_from_logits(c * u).sum().backward()
        opt.step()
        with torch.no_grad():
            u.clamp_(-1, 1)
    with torch.no_grad():
        least = entropy_from_logits(c * u).amin(-1)  # (C,): the lowest point descent found per c
    assert (least >= floors - 1e-12).all(), (least, floors)
    assert (least <= floors + 0.05 * floors.clamp(min=1e-3)).all(), "descent got nowhere near the floor"


def test_one_logit_at_the_top_is_not_always_the_minimum():
    """For small c the worst case puts several logits at +c: the one-at-the-top formula
    log(1 + (S-1) e^{-2c}) + 2c (S-1) / (e^{2c} + S - 1) is then above the true floor and would
    be no lower bound at all; for large c it is the floor."""
    def one_top(c, s):
        return math.log(1 + (s - 1) * math.exp(-2 * c)) + 2 * c * (s - 1) / (math.exp(2 * c) + s - 1)
    z = torch.tensor([0.5] * 4 + [-0.5] * 16, dtype=F64)  # c = 0.5, S = 20, 4 at the top
    assert entropy_from_logits(z).item() < one_top(0.5, 20) - 0.05
    assert entropy_floor(0.5, 20) < one_top(0.5, 20)
    assert entropy_floor(3.0, 20) == pytest.approx(one_top(3.0, 20), rel=1e-12)


@pytest.mark.parametrize("s", [2, 10, 1000])
def test_floor_is_above_the_min_entropy_bound_and_positive(s):
    """The largest weight is at most e^{2c} / (e^{2c} + S - 1), so H >= -log of it, > 0."""
    for c in (0.1, 1.0, 5.0, 10.0):
        weaker = math.log1p((s - 1) * math.exp(-2 * c))
        assert entropy_floor(c, s) >= weaker - 1e-15 and weaker > 0
        z = torch.full((s,), -c, dtype=F64)
        z[0] = c
        torch.testing.assert_close(z.softmax(-1).max(), torch.tensor(math.exp(2 * c) / (math.exp(2 * c) + s - 1),
                                                                      dtype=F64))
    assert entropy_floor(0.0, s) == pytest.approx(math.log(s))


def make_qk_norm(seed, d_model, heads, adversarial_gain):
    torch.manual_seed(seed)
    attn = QKNormSelfAttention(d_model, heads).double()
    with torch.no_grad():
        attn.q_norm.weight.uniform_(-2.0, 2.0)
        attn.k_norm.weight.uniform_(-2.0, 2.0)
        if adversarial_gain:
            attn.q_norm.weight[0] = attn.k_norm.weight[0] = adversarial_gain
    return attn


@PROPERTY_SETTINGS
@given(heads=st.integers(1, 3), d_k=st.integers(1, 8), length=st.integers(2, 24),
       log_scale=st.floats(-2, 8), gain=st.sampled_from([0.0, 3.0, 10.0]), seed=st.integers(0, 2**16))
def test_property_qk_norm_entropy_never_below_the_floor(heads, d_k, length, log_scale, gain, seed):
    attn = make_qk_norm(seed, heads * d_k, heads, gain)
    x = 10**log_scale * torch.randn(1, length, heads * d_k, dtype=F64)
    with torch.no_grad():
        c = logit_bound(attn).item()
        h = entropy_from_logits(attn.logits(x))
    assert h.min().item() >= entropy_floor(c, length) - 1e-9


def test_qk_norm_adversarial_inputs_come_close_to_the_floor():
    """One key along the coordinate of the largest gain product, the others opposite it: the logits
    sit at +c and -c, and the query's entropy is the floor's one-at-the-top value (large c)."""
    d_k, length = 8, 16
    attn = make_qk_norm(0, d_k, 1, 10.0)
    gains = (attn.q_norm.weight * attn.k_norm.weight).abs()
    i = int(gains.argmax())
    q_dir = torch.zeros(d_k, dtype=F64)
    q_dir[i] = 1e3
    with torch.no_grad():
        q = attn.q_norm(q_dir)
        keys = torch.zeros(length, d_k, dtype=F64)
        keys[:, i] = -1e3
        keys[0, i] = 1e3
        k = attn.k_norm(keys)
        z = (q @ k.T) / math.sqrt(d_k)
        c = logit_bound(attn).item()
    assert z.abs().max().item() <= c
    h = entropy_from_logits(z).item()
    floor = entropy_floor(c, length)
    assert floor <= h <= floor + 1e-6


@PROPERTY_SETTINGS
@given(cap=st.floats(0.1, 50.0), length=st.integers(2, 40), log_scale=st.floats(-2, 6), seed=st.integers(0, 2**16))
def test_property_soft_capped_entropy_never_below_the_floor(cap, length, log_scale, seed):
    gen = torch.Generator().manual_seed(seed)
    z = 10**log_scale * torch.randn(3, length, length, generator=gen, dtype=F64)
    z[0, :, 0] = 1e12  # adversarial: one huge logit per row, the rest very negative
    z[0, :, 1:] = -1e12
    h = entropy_from_logits(soft_cap(z, cap))
    assert h.min().item() >= entropy_floor(cap, length) - 1e-9
    if cap > 3:  # the adversarial row reaches the floor (one logit at the top is the worst case)
        assert h[0].min().item() == pytest.approx(entropy_floor(cap, length), rel=1e-6, abs=1e-9)


def test_without_a_bound_the_entropy_collapses():
    """The same logits, scaled up, with no norm or cap: every row with a unique maximum
    goes to 0, far below any floor with c fixed."""
    gen = torch.Generator().manual_seed(5)
    z = torch.randn(64, 32, generator=gen, dtype=F64)
    assert entropy_from_logits(1e6 * z).max().item() < 1e-6
    assert entropy_from_logits(soft_cap(1e6 * z, 5.0)).min().item() >= entropy_floor(5.0, 32)


@PROPERTY_SETTINGS
@given(s=st.integers(2, 30), seed=st.integers(0, 2**16), masked=st.booleans())
def test_property_entropy_falls_as_the_logit_scale_grows(s, seed, masked):
    """H(t z) is non-increasing in t >= 0, dH/dt = -t Var_a(z) (autograd), strictly decreasing
    unless the visible logits are all equal; t -> 0 gives log S, t -> inf log(#maxima)."""
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(s, generator=gen, dtype=F64) * 3
    if masked:
        z[s // 2:] = -math.inf
    visible = z.isfinite().sum().item()

    def scaled(t):  # t * z on the visible keys; a masked key stays -inf (0 * -inf is NaN)
        return torch.where(z.isfinite(), t * z, -math.inf)

    ts = torch.linspace(0, 20, 81, dtype=F64)
    h = torch.stack([entropy_from_logits(scaled(t)) for t in ts])
    assert (h[1:] < h[:-1] + 1e-12).all()
    if visible > 1:  # strictly, where rounding has not yet taken H to 0
        alive = h[:-1] > 1e-6
        assert (h[1:][alive] < h[:-1][alive]).all() and alive[:4].all()
    assert h[0].item() == pytest.approx(math.log(visible))
    finite = torch.where(z.isfinite(), z, 0.0)
    for t in (0.3, 1.0, 2.5):
        tt = torch.tensor(t, dtype=F64, requires_grad=True)
        entropy_from_logits(torch.where(z.isfinite(), tt * finite, -math.inf)).backward()
        p = scaled(t).softmax(-1)
        var = (p * finite**2).sum() - (p * finite).sum() ** 2
        torch.testing.assert_close(tt.grad, -t * var, rtol=1e-8, atol=1e-10)


def test_equal_logits_do_not_move_with_the_scale_and_negative_scales_raise_it_back():
    z = torch.full((6,), 2.0, dtype=F64)
    for t in (0.0, 1.0, 50.0):
        torch.testing.assert_close(entropy_from_logits(t * z), torch.tensor(math.log(6), dtype=F64))
    gen = torch.Generator().manual_seed(6)
    z = torch.randn(6, generator=gen, dtype=F64)
    # for t < 0 the entropy grows with t up to log S at t = 0: the statement is about t >= 0
    assert entropy_from_logits(-2.0 * z) < entropy_from_logits(-1.0 * z) < entropy_from_logits(0.0 * z)


def test_two_maxima_keep_log_2_at_any_scale():
    z = torch.tensor([1.0, 1.0, 0.0, -1.0], dtype=F64)
    torch.testing.assert_close(entropy_from_logits(1e4 * z), torch.tensor(math.log(2), dtype=F64))


def test_sdpa_weights_makes_its_identity_on_the_inputs_device():
    """Under stray_tensors_on_meta a tensor made without `device=` lands on 'meta': the
    identity that reads the weights back must be made on q's device (on a GPU the old line
    made it on the CPU and SDPA refused the mix)."""
    gen = torch.Generator().manual_seed(9)
    q, k = torch.randn(2, 2, 5, 8, generator=gen, dtype=torch.float64).unbind(0)
    expected = sdpa_weights(q, k)
    with sb.stray_tensors_on_meta():
        got = sdpa_weights(q, k)
    sb.assert_same_device_and_values(got, expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_entropy_from_large_half_precision_logits_stays_close(dtype):
    """Scores near 100 in half precision: logsumexp and sum a*z are both about 100 and nearly
    equal; computed in float32 after subtracting the row maximum, the entropy of the
    half-precision scores stays within 1e-3 nats of the float64 entropy of the same numbers."""
    gen = torch.Generator().manual_seed(10)
    scores = (100 + 8 * torch.randn(4, 16, 64, generator=gen, dtype=torch.float64)).to(dtype)
    exact = entropy_from_logits(scores.double())
    got = entropy_from_logits(scores)
    assert got.dtype == torch.float32  # float64 stays float64

    assert (got.double() - exact).abs().max() < 1e-3


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_weights_over_many_keys_give_the_float32_entropy(dtype):
    """The page: for a diagnostic the entropy is computed in float32; from half-precision
    weights over 2048 keys the function still does, within a thousandth of a nat of float64."""
    torch.manual_seed(3)
    weights = torch.softmax(torch.randn(4, 2048, dtype=torch.float64), dim=-1)
    reference = attention_entropy(weights)
    half = attention_entropy(weights.to(dtype))
    assert half.dtype == torch.float32
    assert (half.double() - reference).abs().max() < 2e-3
