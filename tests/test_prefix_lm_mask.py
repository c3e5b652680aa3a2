"""snippets/prefix_lm_mask.py: the mask against a loop and in attention."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import snippets.prefix_lm_mask as mod
from snippets.prefix_lm_mask import prefix_lm_mask, prefix_lm_mask_mod
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "prefix of 4 in 8 tokens (1 = may attend):",
        "tensor([[1, 1, 1, 1, 0, 0, 0, 0],",
        "        [1, 1, 1, 1, 0, 0, 0, 0],",
        "        [1, 1, 1, 1, 0, 0, 0, 0],",
        "        [1, 1, 1, 1, 0, 0, 0, 0],",
        "        [1, 1, 1, 1, 1, 0, 0, 0],",
        "        [1, 1, 1, 1, 1, 1, 0, 0],",
        "        [1, 1, 1, 1, 1, 1, 1, 0],",
        "        [1, 1, 1, 1, 1, 1, 1, 1]], dtype=torch.int32)",
        "keys per query: [4, 4, 4, 4, 5, 6, 7, 8]",
        "t1 and t2 see the first 4 tokens, t4 the first 6: True",
        "equals the mask built by hand: True",
        "the prefix ignores the target: True",
        "position 0 sees prefix position 3 (bidirectional): True",
        "mask_mod gives the same masks: True",
    ]
}
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
F64 = torch.float64


test_layout, test_block_runs_from_empty_dir = sb.module_tests(
    mod, EXPECTED_OUTPUT
)


def loop_mask(prefix_lengths, length):
    mask = torch.zeros(len(prefix_lengths), length, length, dtype=torch.bool)
    for b, prefix in enumerate(prefix_lengths):
        for i in range(length):
            for j in range(length):
                in_prefix = i < prefix and j < prefix  # both directions
                mask[b, i, j] = in_prefix or j <= i or j < prefix
    return mask


@pytest.mark.parametrize("length", [1, 2, 5, 8])
def test_mask_equals_a_loop_for_every_prefix_length(length):
    prefixes = list(range(length + 1))
    mask = prefix_lm_mask(torch.tensor(prefixes), length)
    assert torch.equal(mask, loop_mask(prefixes, length))
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    assert torch.equal(mask[0], causal)  # prefix 0: a causal LM
    assert torch.equal(mask[1], causal)  # key 0 is visible anyway
    assert mask[length].all()  # all prefix: bidirectional, like BERT


def test_mask_mod_elementwise_and_under_vmap():
    prefixes = torch.tensor([0, 3, 6, 2])
    mask = prefix_lm_mask(prefixes, 6)
    mask_mod = prefix_lm_mask_mod(prefixes)
    for b in range(4):
        for q in range(6):
            for kv in range(6):
                assert bool(mask_mod(b, 0, q, kv)) == bool(mask[b, q, kv])
    fn = mask_mod  # vmapped over (b, h, q_idx, kv_idx) like create_mask
    for dims in [(None, None, None, 0), (None, None, 0, None),
                 (None, 0, None, None), (0, None, None, None)]:
        fn = torch.vmap(fn, in_dims=dims)
    idx = torch.arange
    assert torch.equal(fn(idx(4), idx(2), idx(6), idx(6)),
                       mask[:, None].expand(4, 2, 6, 6))


def test_unilm_example():
    # "[SOS] t1 t2 [EOS] t3 t4 t5 [EOS]": t1 and t2 see the first four
    # tokens, t4 only the first six (Dong et al. 2019, UniLM).
    seen = prefix_lm_mask(torch.tensor([4]), 8)[0].sum(-1)
    assert seen[1] == seen[2] == 4 and seen[5] == 6


def test_arguments_are_validated():
    with pytest.raises(ValueError):
        prefix_lm_mask(torch.tensor([5]), 4)
    with pytest.raises(ValueError):
        prefix_lm_mask(torch.tensor([-1]), 4)
    assert prefix_lm_mask([2, 3], 4).shape == (2, 4, 4)  # a list works too


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    prefixes=st.lists(st.integers(0, 7), min_size=1, max_size=3),
    heads=st.integers(1, 2),
    d_k=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_property_sdpa_with_the_mask_equals_attention_row_by_row(
    prefixes, heads, d_k, seed
):
    length = 7
    gen = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, len(prefixes), heads, length, d_k,
                          generator=gen, dtype=F64).unbind(0)
    attend = prefix_lm_mask(torch.tensor(prefixes), length)[:, None]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    for b, prefix in enumerate(prefixes):
        for i in range(length):
            keys = max(i + 1, prefix)  # keys 0 .. keys - 1 are visible
            scores = q[b, :, i : i + 1] @ k[b, :, :keys].transpose(-2, -1)
            weights = (scores / d_k**0.5).softmax(-1)
            sb.assert_close(out[b, :, i : i + 1], weights @ v[b, :, :keys])


@PROPERTY_SETTINGS
@given(prefix=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_property_who_depends_on_whom(prefix, seed):
    length = 6
    torch.manual_seed(seed)
    x = torch.randn(1, 1, length, 3, dtype=F64, requires_grad=True)
    attend = prefix_lm_mask(torch.tensor([prefix]), length)[:, None]
    out = F.scaled_dot_product_attention(x, x, x, attn_mask=attend)
    for i in range(length):
        (grad,) = torch.autograd.grad(out[0, 0, i].sum(), x,
                                      retain_graph=True)
        reached = grad[0, 0].abs().sum(-1) > 0
        # a prefix token depends on the whole prefix; a target token on
        # the prefix and the tokens up to itself; nobody on later targets
        expected = [j < max(prefix, i + 1) for j in range(length)]
        assert reached.tolist() == expected


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_with_the_mask(dtype):
    gen = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 2, 2, 9, 8, generator=gen).unbind(0)
    attend = prefix_lm_mask(torch.tensor([3, 6]), 9)[:, None]
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    low = F.scaled_dot_product_attention(q.to(dtype), k.to(dtype),
                                         v.to(dtype), attn_mask=attend)
    assert low.isfinite().all()
    sb.assert_close(low.float(), ref, dtype=dtype)


def test_the_mask_is_made_where_the_prefix_lengths_are():
    prefix = torch.tensor([3, 0, 6])
    expected = prefix_lm_mask(prefix, 6)
    with sb.stray_tensors_on_meta():
        mask = prefix_lm_mask(prefix, 6)
    assert mask.device == prefix.device and torch.equal(mask, expected)
