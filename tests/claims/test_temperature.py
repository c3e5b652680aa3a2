"""Claims cited by the attention-temperature entry: what SDPA's `scale` can hold (torch 2.13.0,
CPU, any path: the argument is checked before a kernel is chosen)."""

import pytest
import torch
import torch.nn.functional as F

from tests.claims import claim


@claim("sdpa-scale-one-float")
def test_sdpa_scale_is_one_float_for_every_query():
    """The op's schema types `scale` as an optional float: one number for every query, head and
    batch. A tensor of one temperature per query is refused with a TypeError; a 0-d tensor is
    read as the float it holds. A temperature per query must go into q (or a score_mod)."""
    schema = torch.ops.aten.scaled_dot_product_attention.default._schema
    types = {argument.name: str(argument.type) for argument in schema.arguments}
    assert types["scale"] == "Optional[float]"
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 4, 8, generator=gen, dtype=torch.float64).unbind(0)
    per_query = torch.linspace(0.5, 2.0, 4, dtype=torch.float64)[:, None]  # (L, 1)
    with pytest.raises(TypeError, match="scale"):
        F.scaled_dot_product_attention(q, k, v, scale=per_query)
    zero_dim = F.scaled_dot_product_attention(q, k, v, scale=torch.tensor(0.3))
    torch.testing.assert_close(zero_dim, F.scaled_dot_product_attention(q, k, v, scale=0.3))
    # the same temperatures in q: row i of the scores times its own number
    out = F.scaled_dot_product_attention(q * per_query, k, v)
    scores = (q @ k.transpose(-2, -1)) * per_query / 8**0.5
    torch.testing.assert_close(out, torch.softmax(scores, dim=-1) @ v)
