"""snippets/torch_mha_weights.py: weights move both ways without changing any number."""

import pytest
import torch
from torch import nn

import snippets.torch_mha_weights as mod
from snippets.multi_head_attention import MultiHeadAttention
from snippets.torch_mha_weights import load_from_torch, load_into_torch
from tests import snippet_blocks as sb

EXPECTED_OUTPUT = {
    "demo": [
        "packed in_proj -> ours, matches: True",
        "separate q/k/v -> ours, matches: True",
        "ours -> nn.MultiheadAttention, matches: True",
    ]
}
LAYOUTS = {"packed": (None, None), "separate-kdim": (5, None), "separate-both": (5, 7)}


test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_pytorch_storage_layout(layout):
    kdim, vdim = LAYOUTS[layout]
    theirs = nn.MultiheadAttention(8, 2, kdim=kdim, vdim=vdim)
    packed = kdim is None and vdim is None
    assert (theirs.in_proj_weight is not None) == packed
    assert theirs.in_proj_bias.shape == (24,)  # the bias is packed either way


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_from_torch_then_back_is_exact(layout, batch_first):
    kdim, vdim = LAYOUTS[layout]
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(8, 2, kdim=kdim, vdim=vdim, batch_first=batch_first)
    ours = load_from_torch(MultiHeadAttention(8, 2, kdim, vdim), theirs)
    fresh = load_into_torch(ours, nn.MultiheadAttention(8, 2, kdim=kdim, vdim=vdim, batch_first=batch_first))
    original, copied = theirs.state_dict(), fresh.state_dict()
    assert original.keys() == copied.keys()
    for name in original:
        assert torch.equal(original[name], copied[name]), name

    query = torch.randn(2, 3, 8)
    key, value = torch.randn(2, 4, kdim or 8), torch.randn(2, 4, vdim or 8)
    args = (query, key, value) if batch_first else tuple(t.transpose(0, 1) for t in (query, key, value))
    expected, _ = theirs(*args, need_weights=False)
    if not batch_first:
        expected = expected.transpose(0, 1)
    sb.assert_close(ours(query, key, value), expected)


def test_into_torch_overwrites_every_parameter():
    torch.manual_seed(1)
    ours = MultiHeadAttention(8, 2, kdim=6, vdim=6)
    theirs = nn.MultiheadAttention(8, 2, kdim=6, vdim=6)
    with torch.no_grad():
        for p in theirs.parameters():
            p.fill_(float("nan"))
    load_into_torch(ours, theirs)
    assert all(p.isfinite().all() for p in theirs.parameters())


@pytest.mark.parametrize(
    "options", [{"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True}], ids=lambda o: next(iter(o))
)
def test_unsupported_options_are_refused(options):
    theirs = nn.MultiheadAttention(8, 2, **options)
    with pytest.raises(ValueError, match="not supported"):
        load_from_torch(MultiHeadAttention(8, 2), theirs)
