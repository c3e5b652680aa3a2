"""snippets/native_sparse_attention.py: each branch's selection as a FlexAttention
block mask against SDPA with the dense boolean mask, the gated NSA output against
a hand-written loop over heads and queries, NSA's block selection against its
rules (forced blocks, one choice per GQA group, top-n), and MoBA against an
independent transcription of MoonshotAI's naive reference, with top-k = number of
blocks against dense causal attention."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import create_block_mask, create_mask

import snippets.native_sparse_attention as mod
from snippets.native_sparse_attention import (
    BRANCHES,
    NativeSparseAttention,
    blocks_to_tokens,
    chosen_blocks_mod,
    compressed_mask,
    compressed_mod,
    eager_flex,
    moba_select,
    window_mask,
    window_mod,
)
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "keys of the last query: {'cmp': 15, 'slc': 20, 'win': 8}",
        "flex block masks give the SDPA result: True",
        "MoBA, top 2 of 4 blocks, flex equals SDPA: True",
        "MoBA with top_k = 4 blocks is dense causal: True",
    ],
}
PROPERTY_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)
F64 = torch.float64
T, D_MODEL, H, G, D_K = 32, 16, 4, 2, 8

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@pytest.fixture(scope="module")
def layer():
    """One NSA layer in float64, its branches, and FlexAttention's block
    masks for them, built once (FlexAttention runs eagerly on the CPU)."""
    torch.manual_seed(3)
    nsa = NativeSparseAttention(D_MODEL, H, G, D_K).double()
    x = torch.randn(T, D_MODEL, dtype=F64)
    with torch.no_grad():
        q, kvs, masks, gates = nsa.prepare(x)
    mods = {"cmp": compressed_mod(nsa.block, nsa.stride),
            "slc": chosen_blocks_mod(nsa.chosen, nsa.sel_block, H // G),
            "win": window_mod(nsa.window)}
    blocks = {c: create_block_mask(mods[c], None, H, T, kvs[c][0].size(-2),
                                   device="cpu", BLOCK_SIZE=4)
              for c in BRANCHES}
    return nsa, x, q, kvs, masks, gates, mods, blocks


@pytest.mark.filterwarnings("ignore:flex_attention called without")
@pytest.mark.parametrize("branch", BRANCHES)
def test_each_branch_block_mask_equals_sdpa_with_the_dense_mask(layer, branch):
    nsa, x, q, kvs, masks, gates, mods, blocks = layer
    S = kvs[branch][0].size(-2)
    dense = masks[branch].expand(H, T, S)
    # the mask_mod, evaluated everywhere, is the dense mask
    assert torch.equal(create_mask(mods[branch], 1, H, T, S,
                                   device="cpu")[0], dense)
    sdpa = F.scaled_dot_product_attention(q, *kvs[branch], attn_mask=dense,
                                          enable_gqa=True)
    sb.assert_close(eager_flex(q, *kvs[branch], blocks[branch]), sdpa)


def test_block_mask_tiles_hold_exactly_the_selected_blocks(layer):
    """With tiles as wide as a selection block, the block mask lists, for
    each tile row of 4 queries, the blocks any of them selected."""
    nsa, x, q, kvs, masks, gates, mods, blocks = layer
    listed = torch.zeros(H, T // 4, T // 4, dtype=torch.bool)
    for kind in ("kv", "full_kv"):
        num = getattr(blocks["slc"], f"{kind}_num_blocks")[0]
        idx = getattr(blocks["slc"], f"{kind}_indices")[0]
        for r in range(H):
            for row in range(T // 4):
                listed[r, row, idx[r, row, :num[r, row]].long()] = True
    tiles = masks["slc"].unflatten(1, (T // 4, 4)).unflatten(3, (T // 4, 4))
    assert torch.equal(listed, tiles.any(4).any(2))


def reference_nsa(nsa, x):
    """NSA written out query by query and head by head, from the equations
    on this page (the overlap rule, not the paper's eq. (9)): compressed
    keys phi(k[i*d : i*d + l]), weights p_cmp, their sums over the
    compressed blocks that overlap a selection block and over a GQA group,
    block 0 and the two local blocks forced, top-n, a window of w keys,
    sigmoid gates."""
    W = nsa.wkv.weight.view(6, G, D_K, D_MODEL)
    kv = torch.einsum("bgcm,tm->bgtc", W, x)  # (6, G, T, d_k)
    q = (x @ nsa.wq.weight.T).view(T, H, D_K)
    gates = torch.sigmoid(nsa.gate(x)).view(T, 3, H)
    l, d, l2, n, w = nsa.block, nsa.stride, nsa.sel_block, nsa.top_n, \
        nsa.window
    C = (T - l) // d + 1
    k_cmp = [[nsa.phi((kv[0, g, c * d:c * d + l] + nsa.pos[0]).flatten())
              for c in range(C)] for g in range(G)]
    v_cmp = [[nsa.phi_v((kv[1, g, c * d:c * d + l] + nsa.pos[1]).flatten())
              for c in range(C)] for g in range(G)]

    def attend(qv, keys, values):
        if not keys:
            return torch.zeros(D_K, dtype=F64)
        weights = (torch.stack(keys) @ qv / math.sqrt(D_K)).softmax(0)
        return weights @ torch.stack(values)

    out = torch.zeros(H, T, D_K, dtype=F64)
    for t in range(T):
        seen = [c for c in range(C) if c * d + l - 1 <= t]
        own, num_blocks = t // l2, -(-T // l2)
        for g in range(G):
            heads = range(g * H // G, (g + 1) * H // G)
            score = [0.0] * num_blocks
            for r in heads:
                qk = [float(q[t, r] @ k_cmp[g][c]) / math.sqrt(D_K)
                      for c in seen]
                p = torch.tensor(qk, dtype=F64).softmax(0).tolist()
                for c, pc in zip(seen, p):
                    for j in range(num_blocks):  # blocks c overlaps
                        if c * d // l2 <= j <= (c * d + l - 1) // l2:
                            score[j] += pc
            forced = {0, own, own - 1} & set(range(own + 1))
            rest = sorted((j for j in range(own + 1) if j not in forced),
                          key=lambda j: -score[j])
            chosen = sorted(forced) + rest[:max(0, n - len(forced))]
            slc = [s for j in chosen for s in range(j * l2, (j + 1) * l2)
                   if s <= t]
            win = range(max(0, t - w + 1), t + 1)
            for r in heads:
                parts = [
                    attend(q[t, r], [k_cmp[g][c] for c in seen],
                           [v_cmp[g][c] for c in seen]),
                    attend(q[t, r], [kv[2, g, s] for s in slc],
                           [kv[3, g, s] for s in slc]),
                    attend(q[t, r], [kv[4, g, s] for s in win],
                           [kv[5, g, s] for s in win])]
                out[r, t] = sum(gates[t, b, r] * parts[b] for b in range(3))
    return out


def test_gated_output_equals_the_hand_written_sum_of_branches(layer):
    nsa, x, *_ = layer
    with torch.no_grad():
        sb.assert_close(nsa(x)[0], reference_nsa(nsa, x))


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**16), top_n=st.integers(3, 9))
def test_property_nsa_selection_rules(seed, top_n):
    torch.manual_seed(seed)
    nsa = NativeSparseAttention(D_MODEL, H, G, D_K, top_n=top_n).double()
    with torch.no_grad():
        _, _, masks, _ = nsa.prepare(torch.randn(T, D_MODEL, dtype=F64))
    chosen, own = nsa.chosen, torch.arange(T) // nsa.sel_block
    assert torch.equal(chosen.sum(-1), (own + 1).clamp(max=top_n).expand(G, T))
    for t in range(T):  # block 0 and the two local blocks, never a later one
        o = own[t].item()
        assert chosen[:, t, 0].all() and chosen[:, t, o].all()
        assert o == 0 or chosen[:, t, o - 1].all()
        assert not chosen[:, t, o + 1:].any()
    # one choice per GQA group: heads 0, 1 share group 0; heads 2, 3 group 1
    assert torch.equal(masks["slc"][0], masks["slc"][1])
    assert torch.equal(masks["slc"][2], masks["slc"][3])


def test_compressed_branch_counts_and_empty_rows(layer):
    nsa, x, q, kvs, masks, gates, mods, blocks = layer
    assert kvs["cmp"][0].shape == (1, G, (T - 4) // 2 + 1, D_K)
    # queries 1 to 3 (indices 0-2) precede the first complete block of 4:
    # no compressed key, and a zero output from SDPA and from flex alike
    assert masks["cmp"].sum(-1)[:5].tolist() == [0, 0, 0, 1, 1]
    sdpa = F.scaled_dot_product_attention(q, *kvs["cmp"],
                                          attn_mask=masks["cmp"],
                                          enable_gqa=True)
    assert (sdpa[..., :3, :] == 0).all()
    assert torch.equal(compressed_mask(6, 2, 4, 2),
                       torch.tensor([[0, 0]] * 3 + [[1, 0]] * 2 + [[1, 1]],
                                    dtype=torch.bool))


def test_window_mask_is_the_last_w_keys():
    mask = window_mask(6, 3)
    assert mask.sum(-1).tolist() == [1, 2, 3, 3, 3, 3]
    assert mask[5].nonzero().flatten().tolist() == [3, 4, 5]


def moba_naive(q, k, v, block, top_k):
    """An independent transcription of moba_attn_varlen_naive (MoonshotAI/
    MoBA, moba/moba_naive.py): gate = q . block means, future blocks -inf,
    the own block +inf, topk, an additive -inf mask, then a causal softmax."""
    h, T_, d = q.shape
    n = math.ceil(T_ / block)
    means = torch.stack([k[:, i * block:(i + 1) * block].mean(1)
                         for i in range(n)], 1)  # (h, n, d)
    gate = torch.einsum("hsd,hnd->hsn", q, means)
    for i in range(n):
        gate[:, :(i + 1) * block, i] = -math.inf
        gate[:, i * block:(i + 1) * block, i] = math.inf
    idx = gate.topk(min(top_k, n), dim=-1).indices
    attend = torch.zeros_like(gate, dtype=torch.bool).scatter(-1, idx, True)
    add = torch.zeros_like(gate).masked_fill(~attend, -math.inf)
    add = add.repeat_interleave(block, -1)[..., :T_]
    add = add.masked_fill(~torch.ones(T_, T_, dtype=torch.bool).tril(),
                          -math.inf)
    return ((q @ k.transpose(1, 2)) / math.sqrt(d) + add).softmax(-1) @ v


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**16), blocks=st.integers(1, 5),
       block=st.integers(1, 4), top_k=st.integers(1, 6),
       ragged=st.integers(0, 3))
def test_property_moba_equals_the_reference_code(seed, blocks, block, top_k,
                                                 ragged):
    length = max(1, blocks * block - ragged % block)
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 2, length, 4, generator=gen, dtype=F64)
    chosen = moba_select(q, k, block, top_k)
    own = torch.arange(length) // block
    assert torch.equal(chosen.sum(-1), (own + 1).clamp(max=top_k).expand(2, -1))
    assert chosen[:, torch.arange(length), own].all()  # its own block
    ours = F.scaled_dot_product_attention(
        q, k, v, attn_mask=blocks_to_tokens(chosen, block, length))
    sb.assert_close(ours, moba_naive(q, k, v, block, top_k))


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**16), blocks=st.integers(1, 5),
       block=st.integers(1, 4), surplus=st.integers(0, 2))
def test_property_moba_with_every_block_is_dense_causal(seed, blocks, block,
                                                        surplus):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 3, blocks * block, 4, generator=gen, dtype=F64)
    chosen = moba_select(q, k, block, top_k=blocks + surplus)
    mask = blocks_to_tokens(chosen, block, blocks * block)
    assert torch.equal(mask[0], torch.ones_like(mask[0]).tril())
    sb.assert_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        F.scaled_dot_product_attention(q, k, v, is_causal=True))


@pytest.mark.filterwarnings("ignore:flex_attention called without")
def test_moba_as_a_block_mask(layer):
    *_, q, kvs, masks, gates, mods, blocks = layer
    q = q[0]
    k, v = kvs["slc"][0][0], kvs["slc"][1][0]  # two (G, T, d_k) heads
    k, v = k.repeat_interleave(H // G, 0), v.repeat_interleave(H // G, 0)
    chosen = moba_select(q, k, block=8, top_k=2)
    block_mask = create_block_mask(chosen_blocks_mod(chosen, 8), None, H, T,
                                   T, device="cpu", BLOCK_SIZE=8)
    sb.assert_close(eager_flex(q[None], k[None], v[None], block_mask)[0],
                    moba_naive(q, k, v, 8, 2))


def overlap_rule(C, N, block, stride, sel_block):
    """This page's rule as a (C, N) matrix: compressed block c, keys
    c*stride .. c*stride + block - 1, counts once for every selection block
    J, keys J*sel_block .. (J + 1)*sel_block - 1, that it overlaps."""
    W = torch.zeros(C, N)
    for c in range(C):
        for J in range(N):
            lo, hi = c * stride, c * stride + block - 1
            if lo <= (J + 1) * sel_block - 1 and hi >= J * sel_block:
                W[c, J] = 1
    return W


def equation_9(C, N, block, stride, sel_block):
    """The paper's eq. (9), transcribed with indices from 0 (l = block,
    d = stride, l' = sel_block): p_slc[j] = sum over m < l'/d and n < l/d
    of p_cmp[l'/d * j - m - n], indices outside 0 .. C - 1 dropped."""
    W = torch.zeros(C, N)
    for j in range(N):
        for m in range(sel_block // stride):
            for n in range(block // stride):
                c = sel_block // stride * j - m - n
                if 0 <= c < C:
                    W[c, j] += 1
    return W


@pytest.mark.parametrize("block, stride, sel_block",
                         [(4, 4, 4), (64, 64, 64), (4, 2, 4), (32, 16, 64)])
def test_the_overlap_rule_is_equation_9_only_when_l_d_and_b_are_equal(
        block, stride, sel_block):
    """The page's overlap rule and the paper's eq. (9) weigh the same
    compressed scores only when l = d = b; with the paper's 32/16/64, eq. (9)
    takes compressed blocks 4j-4 .. 4j with multiplicities 1, 2, 2, 2, 1,
    the overlap rule blocks 4j-1 .. 4j+3 once each."""
    C, N = 40, 10
    ours = overlap_rule(C, N, block, stride, sel_block)
    paper = equation_9(C, N, block, stride, sel_block)
    same = block == stride == sel_block
    assert torch.equal(ours, paper) == same
    if (block, stride, sel_block) == (32, 16, 64):
        j = 5
        assert paper[:, j].nonzero().flatten().tolist() == [16, 17, 18, 19, 20]
        assert paper[16:21, j].tolist() == [1, 2, 2, 2, 1]
        assert ours[:, j].nonzero().flatten().tolist() == [19, 20, 21, 22, 23]
        assert ours[19:24, j].tolist() == [1, 1, 1, 1, 1]


def test_fewer_tokens_than_a_compressed_block_is_refused_with_the_reason():
    nsa = NativeSparseAttention(16, 4, 2, 8, block=4)
    with pytest.raises(ValueError, match="3 tokens: fewer than a block of 4"):
        nsa(torch.randn(3, 16))
    assert nsa(torch.randn(4, 16)).shape == (1, 4, 4, 8)
