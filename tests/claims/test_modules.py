"""Claims about nn.Linear and nn.Dropout (torch 2.13.0, CPU)."""

import torch
from torch import nn

from tests.claims import claim


@claim("linear-weight-out-in")
def test_linear_weight_is_w_transposed():
    torch.manual_seed(0)
    linear = nn.Linear(3, 5)  # x @ W with W (d_in=3, d_out=5)
    assert linear.weight.shape == (5, 3)
    x = torch.randn(2, 3)
    assert torch.allclose(linear(x), x @ linear.weight.T + linear.bias)


@claim("dropout-module-off-in-eval")
def test_dropout_module_is_the_identity_in_eval():
    dropout = nn.Dropout(0.5)
    x = torch.ones(100)
    torch.manual_seed(0)
    assert not torch.equal(dropout(x), x)  # training mode: zeros and 2x
    dropout.eval()
    assert torch.equal(dropout(x), x)
