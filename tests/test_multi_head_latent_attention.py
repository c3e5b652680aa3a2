"""snippets/multi_head_latent_attention.py: the naive form against the
paper's equations written per head, the absorbed form against the naive one
(float64), decoding from the latent cache, and the cache sizes."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

import snippets.multi_head_latent_attention as mod
from snippets.multi_head_latent_attention import (
    MultiHeadLatentAttention,
    kv_cache_bytes_per_token,
)
from snippets.rotary_position_embedding import apply_rope
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "cached per token: 32 + 8 numbers, MHA would cache 128",
        "output shape: (2, 7, 64)",
        "absorbed form equals naive form: True",
        "decode step from the latent cache equals the full pass: True",
    ],
    "cache_size": [
        "bfloat16, bytes per token per layer:",
        "  MHA                 65536",
        "  GQA, 8 KV heads      4096",
        "  MQA                   512",
        "  MLA                  1152",
        "MHA / MLA: 56.9",
        "MLA caches as much as GQA with 2.25 KV heads",
        "60 layers, KiB per token: MLA 67.5 MHA 3840.0",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None,
                             derandomize=True)
F64 = torch.float64

test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT)


def make(seed, d_model=24, h=3, d_h=8, d_c=6, d_r=4, dtype=F64):
    torch.manual_seed(seed)
    return MultiHeadLatentAttention(d_model, h, d_h, d_c, d_r).to(dtype)


def inputs(seed, b, t, d_model, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(b, t, d_model, generator=gen, dtype=dtype)


def paper_equations(mla, x, attend):
    """Eqs. 9-11 and 14-19 of arXiv 2405.04434 in row vectors, one head and
    one query at a time (without the query compression, eqs. 12-13)."""
    b, t, _ = x.shape
    h, d_h, d_r = mla.h, mla.d_h, mla.d_r
    pos = torch.arange(t)

    def rope(z):
        return apply_rope(z, pos, layout="interleaved")

    c_kv = x @ mla.w_dkv.weight.T  # eq. 9
    k_c = c_kv @ mla.w_uk.weight.T  # eq. 10, (b, t, h * d_h)
    v_c = c_kv @ mla.w_uv.weight.T  # eq. 11
    q_c = x @ mla.w_q.weight.T  # (b, t, h * d_h)
    q_r = rope((x @ mla.w_qr.weight.T).view(b, t, h, d_r).transpose(1, 2))
    k_r = rope(x @ mla.w_kr.weight.T)  # eq. 15: one key, (b, t, d_r)
    o = torch.zeros(b, t, h * d_h, dtype=x.dtype)
    for i in range(h):
        cols = slice(i * d_h, (i + 1) * d_h)
        for s in range(t):
            q_ti = torch.cat((q_c[:, s, cols], q_r[:, i, s]), -1)  # eq. 16
            keys = [j for j in range(t) if attend[s, j]]
            k_ji = torch.cat((k_c[:, keys, cols], k_r[:, keys]), -1)  # eq. 17
            scores = torch.einsum("bd,bjd->bj", q_ti, k_ji)
            weights = torch.softmax(scores / math.sqrt(d_h + d_r), -1)
            o[:, s, cols] = torch.einsum("bj,bjd->bd", weights,
                                         v_c[:, keys, cols])  # eq. 18
    return o @ mla.w_o.weight.T  # eq. 19


@pytest.mark.parametrize("mask", ["causal", "none"])
def test_naive_form_follows_the_papers_equations(mask):
    mla = make(0)
    x = inputs(0, 2, 6, 24)
    attend = torch.ones(6, 6, dtype=torch.bool)
    if mask == "causal":
        attend = attend.tril()
    c_kv, k_r = mla.compress(x, torch.arange(6))
    naive = mla.naive(x, c_kv, k_r, torch.arange(6), attend=attend)
    sb.assert_close(naive, paper_equations(mla, x, attend))


@PROPERTY_SETTINGS
@given(h=st.integers(1, 4), d_h=st.integers(1, 6), d_c=st.integers(1, 8),
       half_r=st.integers(1, 3), length=st.integers(1, 5),
       extra=st.integers(0, 4), mask=st.sampled_from(["none", "causal",
                                                      "random"]),
       seed=st.integers(0, 2**16))
def test_property_absorbed_equals_naive(h, d_h, d_c, half_r, length, extra,
                                        mask, seed):
    d_model, source = 10, length + extra
    mla = make(seed, d_model, h, d_h, d_c, 2 * half_r)
    everything = inputs(seed, 2, source, d_model)
    c_kv, k_r = mla.compress(everything, torch.arange(source))
    x, pos = everything[:, extra:], torch.arange(extra, source)
    attend = None
    if mask == "causal":  # the new queries are the last `length` positions
        attend = torch.ones(length, source, dtype=torch.bool).tril(extra)
    elif mask == "random":
        gen = torch.Generator().manual_seed(seed)
        attend = torch.rand(length, source, generator=gen) < 0.5
        attend[:, 0] = True
    naive = mla.naive(x, c_kv, k_r, pos, attend=attend)
    absorbed = mla.absorbed(x, c_kv, k_r, pos, attend=attend)
    assert absorbed.shape == (2, length, d_model)
    sb.assert_close(absorbed, naive)


class _Reads(TorchDispatchMode):
    """For every aten operator: its name, the storages of its tensor inputs,
    and its result."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {a.untyped_storage().data_ptr() for a in args
                  if isinstance(a, torch.Tensor)}
        self.calls.append((str(func), inputs, out))
        return out


@pytest.mark.parametrize("length", [1, 3])
def test_absorbed_form_never_copies_the_cache_or_forms_per_head_keys(length):
    """Decoding (L = 1) and a short prefill: every operator that reads the
    cache (c_kv or k_r) is a view of it or a matrix product whose result has
    h * L rows (scores or outputs), so no copy of the cache is made and
    nothing as large as h per-head keys (B, h, S, d_c + d_r) ever exists."""
    h, S, d_c, d_r = 8, 40, 32, 8
    mla = make(8, d_model=16, h=h, d_h=4, d_c=d_c, d_r=d_r)
    x = inputs(8, 2, S, 16)
    pos = torch.arange(S)
    c_kv, k_r = mla.compress(x, pos)
    cache = {c_kv.untyped_storage().data_ptr(),
             k_r.untyped_storage().data_ptr()}
    attend = torch.ones(length, S, dtype=torch.bool).tril(S - length)
    with torch.no_grad(), _Reads() as reads:
        out = mla.absorbed(x[:, -length:], c_kv, k_r, pos[-length:],
                           attend=attend)
    views = ("aten.view", "aten.unsqueeze", "aten.permute", "aten.transpose",
             "aten.slice", "aten.expand", "aten._unsafe_view")
    per_head_key = 2 * h * S * (d_c + d_r)
    readers = [(name, result) for name, ins, result in reads.calls
               if ins & cache]
    assert readers and any(name == "aten.bmm.default" for name, _ in readers)
    for name, result in readers:
        if name.startswith(views):
            assert result.untyped_storage().data_ptr() in cache, name
        else:
            assert name == "aten.bmm.default", name
            assert result.size(1) == h * length  # (B, h * L, S or d_c)
    assert all(not isinstance(r, torch.Tensor) or r.numel() < per_head_key
               for _, _, r in reads.calls)
    naive = mla.naive(x[:, -length:], c_kv, k_r, pos[-length:], attend=attend)
    sb.assert_close(out, naive)


@pytest.mark.parametrize("length", [1, 3])
def test_absorbed_form_is_one_sdpa_call_with_the_heads_folded_into_the_queries(length):
    """The absorbed form is multi-query attention: with the h heads folded into the query axis,
    (B, 1, h * L, d_c + d_r) against the cache as one key head (B, 1, S, d_c + d_r) and the
    latent as one value head (B, 1, S, d_c), one SDPA call (the mask repeated per head, the
    naive form's scale) gives what `absorbed` gives (the page's \"When it is used\" section says so)."""
    h, S, d_h, d_c, d_r = 4, 12, 8, 6, 4
    mla = make(9, d_model=16, h=h, d_h=d_h, d_c=d_c, d_r=d_r)
    x = inputs(9, 2, S, 16)
    pos = torch.arange(S)
    c_kv, k_r = mla.compress(x, pos)
    attend = torch.ones(length, S, dtype=torch.bool).tril(S - length)
    xq, b = x[:, -length:], x.size(0)
    w_uk = mla.w_uk.weight.view(h, d_h, d_c)
    w_uv = mla.w_uv.weight.view(h, d_h, d_c)
    q_c = mla.w_q(xq).view(b, length, h, d_h).transpose(1, 2)
    q = torch.cat([torch.einsum("bhld,hdc->bhlc", q_c, w_uk), mla.rope_queries(xq, pos[-length:])], dim=-1)
    q = q.reshape(b, 1, h * length, d_c + d_r)  # the heads folded into the queries
    k = torch.cat([c_kv, k_r], dim=-1).unsqueeze(1)  # (B, 1, S, d_c + d_r): the cache itself
    v = c_kv.unsqueeze(1)  # (B, 1, S, d_c)
    with torch.no_grad():
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=attend.repeat(h, 1), scale=(d_h + d_r) ** -0.5)
        heads = torch.einsum("bhlc,hdc->bhld", out.view(b, h, length, d_c), w_uv)
        folded = mla.w_o(heads.transpose(1, 2).reshape(b, length, -1))
        sb.assert_close(folded, mla.absorbed(xq, c_kv, k_r, pos[-length:], attend=attend))


def test_absorbed_form_gives_zeros_to_a_query_with_no_key_like_sdpa():
    mla = make(9)
    x = inputs(9, 1, 4, 24)
    c_kv, k_r = mla.compress(x, torch.arange(4))
    attend = torch.tensor([[True, True, False, False],
                           [False, False, False, False]])
    out = mla.absorbed(x[:, 2:], c_kv, k_r, torch.arange(2, 4), attend=attend)
    naive = mla.naive(x[:, 2:], c_kv, k_r, torch.arange(2, 4), attend=attend)
    assert out.isfinite().all()
    sb.assert_close(out, naive)
    sb.assert_close(out[:, 1], torch.zeros(1, 24, dtype=F64))


def test_reassociated_form_equals_the_merged_matrices():
    """absorbed() applies W^UK and W^UV as factors; the merged w_qk and
    w_ov of absorbed_weights() give the same scores and output."""
    mla = make(10)
    x = inputs(10, 2, 5, 24)
    pos = torch.arange(5)
    c_kv, k_r = mla.compress(x, pos)
    w_qk, w_ov = mla.absorbed_weights()
    scale = (8 + 4) ** -0.5
    scores = (torch.einsum("blm,hmc,bsc->bhls", x, w_qk, c_kv)
              + torch.einsum("bhlr,bsr->bhls", mla.rope_queries(x, pos),
                             k_r)) * scale
    merged = torch.einsum("bhls,bsc,hcm->blm", scores.softmax(-1), c_kv,
                          w_ov)
    sb.assert_close(mla.absorbed(x, c_kv, k_r, pos), merged)


def test_absorbed_weights_are_the_products_of_the_projections():
    mla = make(1)
    w_qk, w_ov = mla.absorbed_weights()
    assert w_qk.shape == (3, 24, 6) and w_ov.shape == (3, 6, 24)
    for i in range(3):
        rows = slice(i * 8, (i + 1) * 8)
        # row vectors: q_c,i = x W_q,i^T, k_c,i = c W_uk,i^T
        sb.assert_close(w_qk[i],
                        mla.w_q.weight[rows].T @ mla.w_uk.weight[rows])
        sb.assert_close(w_ov[i], mla.w_uv.weight[rows].T
                        @ mla.w_o.weight[:, rows].T)


def test_token_by_token_decoding_from_the_latent_cache():
    mla = make(2)
    x = inputs(2, 2, 8, 24)
    pos = torch.arange(8)
    c_kv, k_r = mla.compress(x, pos)
    full = mla.naive(x, c_kv, k_r, pos,
                     attend=torch.ones(8, 8, dtype=torch.bool).tril())
    cache_c = cache_r = None
    for t in range(8):
        new_c, new_r = mla.compress(x[:, t:t + 1], pos[t:t + 1])
        cache_c = new_c if cache_c is None else torch.cat((cache_c, new_c), 1)
        cache_r = new_r if cache_r is None else torch.cat((cache_r, new_r), 1)
        assert cache_c.shape == (2, t + 1, 6)  # d_c per token, no heads
        assert cache_r.shape == (2, t + 1, 4)  # d_h^R per token, shared
        step = mla.absorbed(x[:, t:t + 1], cache_c, cache_r, pos[t:t + 1])
        sb.assert_close(step, full[:, t:t + 1])


def test_output_does_not_change_when_every_position_shifts():
    """RoPE only in the decoupled part, and only relative positions count."""
    mla = make(3)
    x = inputs(3, 1, 5, 24)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    outs = []
    for start in (0, 1000):
        pos = torch.arange(start, start + 5)
        c_kv, k_r = mla.compress(x, pos)
        outs.append(mla.absorbed(x, c_kv, k_r, pos, attend=causal))
    sb.assert_close(outs[1], outs[0])


def test_content_keys_and_values_of_all_heads_live_in_a_kv_rank_dimensional_space():
    """The joint compression: every head's content keys and values are
    c_kv times a matrix, so stacked over many tokens their rank is d_c."""
    mla = make(4, d_model=32, h=4, d_h=8, d_c=5)
    x = inputs(4, 1, 40, 32)
    c_kv, _ = mla.compress(x, torch.arange(40))
    keys = mla.w_uk(c_kv)[0]  # (40, h * d_h) = (40, 32)
    values = mla.w_uv(c_kv)[0]
    assert torch.linalg.matrix_rank(keys) == 5
    assert torch.linalg.matrix_rank(torch.cat((keys, values), -1)) == 5


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_absorbed_form(dtype):
    mla = make(5, d_model=64, h=4, d_h=16, d_c=32, d_r=8, dtype=torch.float32)
    x = inputs(5, 2, 12, 64, dtype=torch.float32)
    pos = torch.arange(12)
    causal = torch.ones(12, 12, dtype=torch.bool).tril()
    c_kv, k_r = mla.compress(x, pos)
    exact = mla.naive(x, c_kv, k_r, pos, attend=causal)
    low = mla.to(dtype)
    c_kv, k_r = low.compress(x.to(dtype), pos)
    out = low.absorbed(x.to(dtype), c_kv, k_r, pos, attend=causal)
    assert out.dtype == dtype and out.isfinite().all()
    sb.assert_close(out.float(), exact, dtype=dtype)


def test_gradcheck_of_the_absorbed_form():
    mla = make(6, d_model=6, h=2, d_h=2, d_c=3, d_r=2)
    x = inputs(6, 1, 3, 6).requires_grad_()
    pos = torch.arange(3)
    causal = torch.ones(3, 3, dtype=torch.bool).tril()

    def layer(x):
        c_kv, k_r = mla.compress(x, pos)
        return mla.absorbed(x, c_kv, k_r, pos, attend=causal)

    assert torch.autograd.gradcheck(layer, (x,))


def test_cache_sizes_for_deepseek_v2_by_hand():
    # arXiv 2405.04434, section 3.1.2: n_h = 128, d_h = 128, d_c = 512,
    # d_h^R = 64. bfloat16: 2 bytes per element.
    sizes = kv_cache_bytes_per_token(num_heads=128, head_dim=128,
                                     num_kv_heads=8, kv_rank=512,
                                     rope_dim=64)
    assert sizes == {"MHA": 2 * 128 * 128 * 2,  # 65536
                     "GQA, 8 KV heads": 2 * 8 * 128 * 2,  # 4096
                     "MQA": 2 * 128 * 2,  # 512
                     "MLA": (512 + 64) * 2}  # 1152
    # Table 1's caption: d_c = 4 d_h and d_h^R = d_h / 2, so MLA caches
    # 4.5 d_h elements, as much as GQA with 2.25 groups (2 * 2.25 * d_h).
    assert 512 == 4 * 128 and 64 == 128 // 2
    assert (512 + 64) == 2 * 2.25 * 128


def test_cache_sizes_against_module_tensors_at_deepseek_v2_widths():
    """An independent count: the bytes the site's modules really cache for
    one token, built at DeepSeek-V2's widths on the meta device (shapes and
    dtypes, no memory): MLA's compress(), and the KV cache of causal
    self-attention with 128, 8 and 1 key/value heads of width 128."""
    from snippets.kv_cache import CachedCausalSelfAttention, KVCache

    def nbytes(*tensors):
        return sum(t.nelement() * t.element_size() for t in tensors)

    bf16, meta = torch.bfloat16, torch.device("meta")
    sizes = kv_cache_bytes_per_token(num_heads=128, head_dim=128,
                                     num_kv_heads=8, kv_rank=512,
                                     rope_dim=64)
    with meta:
        mla = MultiHeadLatentAttention(5120, 128, 128, 512, 64).to(bf16)
        c_kv, k_r = mla.compress(torch.empty(1, 1, 5120, dtype=bf16),
                                 torch.arange(1))
        counted = {"MLA": nbytes(c_kv, k_r)}
        for name, kv_heads in (("MHA", 128), ("GQA, 8 KV heads", 8),
                               ("MQA", 1)):
            layer = CachedCausalSelfAttention(128 * 128, 128,
                                              kv_heads).to(bf16)
            cache = KVCache()
            layer(torch.empty(1, 1, 128 * 128, dtype=bf16), cache)
            counted[name] = nbytes(cache.k, cache.v)
    assert counted == sizes


def test_cache_sizes_reduce_to_each_other():
    common = dict(num_heads=16, head_dim=64, kv_rank=256, rope_dim=32)
    mha = kv_cache_bytes_per_token(num_kv_heads=16, **common)
    assert mha["GQA, 16 KV heads"] == mha["MHA"]
    mqa = kv_cache_bytes_per_token(num_kv_heads=1, **common)
    assert mqa["GQA, 1 KV heads"] == mqa["MQA"]
    wide = kv_cache_bytes_per_token(num_kv_heads=4, dtype=torch.float32,
                                    **common)
    narrow = kv_cache_bytes_per_token(num_kv_heads=4, **common)
    assert all(wide[name] == 2 * narrow[name] for name in wide)


def test_the_cache_is_what_the_module_actually_keeps():
    mla = make(7, d_model=24, h=3, d_h=8, d_c=6, d_r=4)
    c_kv, k_r = mla.compress(inputs(7, 1, 5, 24), torch.arange(5))
    per_token = c_kv.size(-1) + k_r.size(-1)
    sizes = kv_cache_bytes_per_token(num_heads=3, head_dim=8,
                                     num_kv_heads=3, kv_rank=6, rope_dim=4,
                                     dtype=F64)
    assert sizes["MLA"] == per_token * 8
    assert sizes["MHA"] == 2 * 3 * 8 * 8


def _flops(form, mla, length, source, device="cpu"):
    """FLOPs of one call of `form` for `length` queries over `source` cached
    tokens (B = 1), on SDPA's math backend, as FlopCounterMode counts them
    (from the shapes, so a module on the meta device counts the same)."""
    x = torch.zeros(1, length, mla.w_q.in_features, device=device)
    c_kv = torch.zeros(1, source, mla.d_c, device=device)
    k_r = torch.zeros(1, source, mla.d_r, device=device)
    pos = torch.arange(source - length, source, device=device)
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as count:
        getattr(mla, form)(x, c_kv, k_r, pos)
    return count.get_total_flops()


@pytest.mark.parametrize("length", [1, 3])
def test_multiply_adds_per_cached_token_at_deepseek_v2_widths(length):
    """The page's arithmetic, counted: one more cached token costs the naive
    form d_c h (d_k + d_v) multiply-adds to expand it plus h (d_k + d_r + d_v)
    per query, and the absorbed form h (2 d_c + d_r) per query (two FLOPs
    per multiply-add)."""
    h, d_k, d_c, d_r = 128, 128, 512, 64  # DeepSeek-V2 (d_v = d_k)
    with torch.device("meta"):
        mla = MultiHeadLatentAttention(16, h, d_k, d_c, d_r)
    mla = mla.to_empty(device="cpu")
    extra = {form: _flops(form, mla, length, 9) - _flops(form, mla, length, 8)
             for form in ("naive", "absorbed")}
    assert extra["naive"] == 2 * (512 * 32_768 + length * 40_960)
    assert extra["absorbed"] == 2 * length * 139_264
    assert 139_264 / 40_960 == pytest.approx(3.4)


def _deepseek_v2_on_meta():
    with torch.device("meta"):
        return MultiHeadLatentAttention(16, 128, 128, 512, 64)


def test_absorbed_form_pays_the_up_projections_once_per_query():
    """The absorbed form's own cost, counted: one more query costs it, beyond
    what it costs the naive form, the dearer pairs (98,304 more multiply-adds
    per cached token) plus W_UK and W_UV, 2 h d_k d_c multiply-adds, exactly
    as large as expanding one cached token in the naive form."""
    mla, source = _deepseek_v2_on_meta(), 9
    per_query = {form: _flops(form, mla, 2, source, "meta")
                 - _flops(form, mla, 1, source, "meta")
                 for form in ("naive", "absorbed")}
    gap = per_query["absorbed"] - per_query["naive"]
    assert gap == 2 * (source * (139_264 - 40_960) + 2 * 128 * 128 * 512)
    assert 2 * 128 * 128 * 512 == 512 * 32_768 == 16_777_216


@pytest.mark.parametrize("queries", [170, 171])
def test_the_naive_form_is_cheaper_per_cached_token_from_171_queries(queries):
    """The page's break-even, counted: for a chunk of Q queries, one more
    cached token costs the naive form 16,777,216 + 40,960 Q multiply-adds and
    the absorbed form 139,264 Q; the naive form is the cheaper from Q = 171."""
    mla, source = _deepseek_v2_on_meta(), 1024
    per_token = {form: _flops(form, mla, queries, source + 1, "meta")
                 - _flops(form, mla, queries, source, "meta")
                 for form in ("naive", "absorbed")}
    assert per_token["naive"] == 2 * (16_777_216 + queries * 40_960)
    assert per_token["absorbed"] == 2 * queries * 139_264
    assert (per_token["naive"] < per_token["absorbed"]) == (queries >= 171)
    assert 16_777_216 / 98_304 == pytest.approx(170.67, abs=0.01)
