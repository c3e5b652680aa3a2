"""snippets/efficient_multi_head_attention.py against torch.nn.MultiheadAttention."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import snippets.efficient_multi_head_attention as mod
from snippets.efficient_multi_head_attention import EfficientSelfAttention
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {"demo": ["output shape: (4, 10, 64)", "matches nn.MultiheadAttention: True"]}


def pair(d_model, num_heads, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    ours = EfficientSelfAttention(d_model, num_heads).to(dtype).eval()
    ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True).to(dtype).eval()
    with torch.no_grad():
        ours.qkv.weight.copy_(ref.in_proj_weight)
        ours.qkv.bias.copy_(ref.in_proj_bias)
        ours.out.weight.copy_(ref.out_proj.weight)
        ours.out.bias.copy_(ref.out_proj.bias)
    return ours, ref


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(batch=st.integers(1, 3), tokens=st.integers(1, 7), heads=st.sampled_from([1, 2, 4]),
       head_dim=st.sampled_from([1, 3, 8]), causal=st.booleans())
def test_matches_torch_mha(batch, tokens, heads, head_dim, causal):
    ours, ref = pair(heads * head_dim, heads, torch.float64)
    x = torch.randn(batch, tokens, heads * head_dim, dtype=torch.float64)
    ignore = torch.ones(tokens, tokens, dtype=torch.bool).triu(1) if causal else None
    expected, _ = ref(x, x, x, attn_mask=ignore, need_weights=False)
    sb.assert_close(ours(x, is_causal=causal), expected)


def test_key_padding_with_the_attend_convention():
    ours, ref = pair(16, 4)
    x = torch.randn(2, 5, 16)
    padding = torch.tensor([[False] * 5, [False, False, False, True, True]])  # MHA: True = ignore
    expected, _ = ref(x, x, x, key_padding_mask=padding, need_weights=False)
    attend = ~padding[:, None, None, :]  # SDPA: True = attend, broadcast over heads and queries
    sb.assert_close(ours(x, attend=attend), expected)


def test_dropout_is_off_in_eval_and_on_in_training():
    ours, _ = pair(16, 4)
    ours.dropout = 0.5
    x = torch.randn(2, 5, 16)
    assert torch.equal(ours(x), ours(x))
    ours.train()
    assert not torch.equal(ours(x), ours(x))


def test_gradcheck():
    ours, _ = pair(6, 2, torch.float64)
    x = torch.randn(2, 3, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: ours(t, is_causal=True), (x,))


def test_mask_and_is_causal_together_are_refused():
    ours, _ = pair(8, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(ValueError, match="not both"):
        ours(x, attend=torch.ones(3, 3, dtype=torch.bool), is_causal=True)
    with pytest.raises(TypeError):  # keyword-only
        ours(x, None, True)
    with pytest.raises(ValueError, match="divisible"):
        EfficientSelfAttention(10, 3)
