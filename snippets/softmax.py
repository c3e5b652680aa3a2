"""Softmax as attention uses it: over the keys, numerically stable, each row
sums to 1."""

BLOCKS = {
    "demo": [
        "snippets/softmax.py:code",
        "snippets/softmax.py:demo",
    ],
}

# --8<-- [start:code]
import torch


def softmax(scores, dim=-1):
    """exp(s_j) / sum_j exp(s_j) along dim (the keys, for attention scores
    (..., L, S)).

    Subtracting the row maximum first changes nothing mathematically (the
    factor exp(-max) cancels) but keeps exp() from overflowing: the largest
    exponent becomes exp(0) = 1. Half-precision scores are computed in
    float32 and rounded at the end, as torch.softmax does: in float16, the
    sum of a row of more than 65,504 similar scores would be inf.
    """
    half = scores.dtype in (torch.float16, torch.bfloat16)
    work = scores.float() if half else scores
    shifted = work - work.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(scores.dtype)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    # (L=2 queries, S=3 keys)
    scores = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0]])
    # exp(1000) = inf in float32
    naive = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
    weights = softmax(scores)
    print("naive second row:", naive[1].tolist())  # inf / inf = nan
    for row in weights.tolist():  # the same weights for both rows
        print("stable weights:", " ".join(f"{w:.4f}" for w in row))
    ones = torch.ones(2)
    print("rows sum to 1:", torch.allclose(weights.sum(dim=-1), ones))
    same = torch.allclose(weights, torch.softmax(scores, dim=-1))
    print("matches torch.softmax:", same)
# --8<-- [end:demo]
