"""Claims about torch.softmax and exp (torch 2.13.0, CPU)."""

import torch

from tests.claims import claim


@claim("softmax-all-inf-nan")
def test_softmax_of_all_minus_inf_is_nan():
    row = torch.full((2, 3), float("-inf"))
    assert torch.softmax(row, dim=-1).isnan().all()
    assert torch.softmax(row.half(), dim=-1).isnan().all()


@claim("softmax-naive-overflows")
def test_naive_softmax_overflows_in_float32():
    scores = torch.tensor([1000.0, 1001.0, 1002.0])
    assert scores.exp().isinf().all()
    assert (scores.exp() / scores.exp().sum()).isnan().all()  # inf / inf


@claim("softmax-stable-large-scores")
def test_torch_softmax_is_shift_invariant_and_finite():
    small = torch.tensor([1.0, 2.0, 3.0])
    weights = torch.softmax(small + 1000.0, dim=-1)
    assert weights.isfinite().all()
    assert torch.allclose(weights, torch.softmax(small, dim=-1))


@claim("softmax-dim-normalises")
def test_softmax_normalises_along_its_dim():
    scores = torch.randn(4, 5, generator=torch.Generator().manual_seed(0))  # (L, S)
    over_keys = torch.softmax(scores, dim=-1)
    over_queries = torch.softmax(scores, dim=-2)
    assert torch.allclose(over_keys.sum(-1), torch.ones(4))  # rows
    assert torch.allclose(over_queries.sum(-2), torch.ones(5))  # columns
    assert not torch.allclose(over_queries.sum(-1), torch.ones(4))


@claim("cross-entropy-takes-logits")
def test_cross_entropy_applies_log_softmax_to_logits():
    logits = torch.tensor([[2.0, 1.0, 0.0], [0.5, -1.0, 3.0]])
    target = torch.tensor([0, 2])
    loss = torch.nn.functional.cross_entropy(logits, target)
    by_hand = -torch.log_softmax(logits, dim=-1)[[0, 1], target].mean()
    assert torch.allclose(loss, by_hand)
    assert torch.allclose(torch.nn.CrossEntropyLoss()(logits, target), by_hand)
    # A softmax in front is a different (wrong) loss, not the same one.
    twice = torch.nn.functional.cross_entropy(torch.softmax(logits, dim=-1), target)
    assert not torch.allclose(twice, loss, atol=1e-2)


@claim("log-softmax-no-underflow")
def test_log_softmax_is_finite_where_softmax_log_is_minus_inf():
    logits = torch.tensor([0.0, -200.0])  # e^-200 underflows float32
    assert torch.softmax(logits, dim=-1)[1] == 0
    assert torch.softmax(logits, dim=-1).log()[1] == float("-inf")
    assert torch.allclose(torch.log_softmax(logits, dim=-1), torch.tensor([0.0, -200.0]))


@claim("softmax-half-long-row")
def test_torch_softmax_of_a_long_float16_row_is_right():
    """torch.softmax of 70,000 similar float16 scores: every weight within 1 % of float64's,
    where the sum of their exponentials in float16 is inf (past 65,504)."""
    gen = torch.Generator().manual_seed(3)
    scores = (torch.randn(1, 70_000, generator=gen) * 0.01).half()
    assert (scores - scores.max()).exp().sum().isinf()
    weights = torch.softmax(scores, dim=-1)
    assert weights.dtype == torch.float16
    assert torch.allclose(weights.double(), torch.softmax(scores.double(), dim=-1), rtol=1e-2, atol=0)
