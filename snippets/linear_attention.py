"""Linear attention: a positive feature map in place of the softmax.

Katharopoulos et al. 2020 (arXiv 2006.16236), feature map elu(x) + 1. The
non-causal form never builds the T x T matrix; the causal form is an RNN
with a (d_k, d_v) state, equal to the masked parallel form.
"""

BLOCKS = {
    "demo": [
        "snippets/linear_attention.py:code",
        "snippets/linear_attention.py:demo",
    ],
    "cost": [
        "snippets/linear_attention.py:cost",
        "snippets/linear_attention.py:cost_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


def feature_map(x):
    """elu(x) + 1, elementwise: positive, so every similarity is > 0."""
    return F.elu(x) + 1


def linear_attention(q, k, v, *, causal=False, eps=1e-6):
    """Parallel form of linear attention.

    q: (..., T, d_k), k: (..., S, d_k), v: (..., S, d_v) -> (..., T, d_v)
    Output i = sum_j sim(i, j) v_j / sum_j sim(i, j), with
    sim(i, j) = phi(q_i) . phi(k_j). No 1/sqrt(d_k): there is no exp.
    causal=True: query i uses keys 0..i (needs T == S). eps keeps the
    denominator away from 0 when phi is 0: elu(x) + 1 = (e^x - 1) + 1
    rounds to exactly 0 below about x = -17 in float32 (-37 in float64).
    The sums run over all keys: half-precision inputs are computed in
    float32 (in float16 the denominator reaches inf after about a thousand
    keys, and every output becomes 0) and the result is rounded back.
    """
    dtype = q.dtype
    work = torch.promote_types(dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    phi_q, phi_k = feature_map(q), feature_map(k)
    if causal:
        if q.size(-2) != k.size(-2):
            raise ValueError("causal linear attention needs T == S")
        # The training form: the T x T similarities, masked. O(T^2 d).
        sim = (phi_q @ phi_k.transpose(-2, -1)).tril()  # (..., T, T)
        return ((sim @ v) / (sim.sum(dim=-1, keepdim=True) + eps)).to(dtype)
    # Associativity: phi(Q) (phi(K)^T V), never a T x S matrix. O(T d^2).
    kv = phi_k.transpose(-2, -1) @ v  # (..., d_k, d_v)
    z = phi_k.sum(dim=-2).unsqueeze(-1)  # (..., d_k, 1): the normaliser
    return ((phi_q @ kv) / (phi_q @ z + eps)).to(dtype)  # (..., T, d_v)


def linear_attention_recurrent(q, k, v, *, eps=1e-6):
    """Causal linear attention as an RNN, one token at a time.

    q, k: (..., T, d_k), v: (..., T, d_v) -> (..., T, d_v)
    State: S_t = S_{t-1} + phi(k_t) v_t^T (d_k x d_v), z_t = z_{t-1} +
    phi(k_t); output_t = phi(q_t)^T S_t / (phi(q_t)^T z_t). The state has
    a fixed size: decoding costs O(d_k d_v) per token, whatever t is.
    Half-precision inputs are computed in float32, as above.
    """
    dtype = q.dtype
    work = torch.promote_types(dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    phi_q, phi_k = feature_map(q), feature_map(k)
    state = q.new_zeros(*q.shape[:-2], q.size(-1), v.size(-1))
    z = q.new_zeros(*q.shape[:-2], q.size(-1))
    outputs = []
    for t in range(q.size(-2)):
        k_t, v_t, q_t = phi_k[..., t, :], v[..., t, :], phi_q[..., t, :]
        state = state + k_t[..., :, None] * v_t[..., None, :]  # outer
        z = z + k_t
        num = (q_t[..., None, :] @ state).squeeze(-2)  # (..., d_v)
        den = (q_t * z).sum(dim=-1, keepdim=True)  # (..., 1)
        outputs.append(num / (den + eps))
    return torch.stack(outputs, dim=-2).to(dtype)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    # float64: the two forms sum in different orders
    q, k, v = torch.randn(3, 2, 4, 10, 8, dtype=torch.float64).unbind(0)

    # Non-causal: compare with the explicit T x T similarity matrix.
    sim = feature_map(q) @ feature_map(k).transpose(-2, -1)  # (2, 4, 10, 10)
    weights = sim / sim.sum(dim=-1, keepdim=True)
    same = torch.allclose(linear_attention(q, k, v), weights @ v)
    print("non-causal: phi(Q) (phi(K)^T V) equals the T x T form:", same)

    parallel = linear_attention(q, k, v, causal=True)
    recurrent = linear_attention_recurrent(q, k, v)
    same = torch.allclose(parallel, recurrent)
    print("causal: recurrent (RNN) form equals the parallel form:", same)
    print("output shape:", tuple(recurrent.shape))
    # Token t depends on tokens 0..t only: changing the last one
    # leaves every earlier output as it was.
    v2 = v.clone()
    v2[..., -1, :] += 1.0
    changed = linear_attention_recurrent(q, k, v2)
    print("earlier outputs unchanged:", torch.equal(changed[..., :-1, :],
                                                   recurrent[..., :-1, :]))
# --8<-- [end:demo]


# --8<-- [start:cost]
def multiply_adds(T, d_k, d_v, *, form):
    """Multiply-adds in the matrix products of one head, T queries/keys.

    "softmax": Q K^T (T*T*d_k) and weights @ V (T*T*d_v).
    "linear": phi(K)^T V (T*d_k*d_v), phi(Q) @ that (T*d_k*d_v) and the
    normaliser phi(Q) @ z (T*d_k). Elementwise work (exp, elu, the sum
    giving z) is left out of both counts.
    """
    if form == "softmax":
        return T * T * (d_k + d_v)
    if form == "linear":
        return 2 * T * d_k * d_v + T * d_k
    raise ValueError(f"form must be 'softmax' or 'linear', not {form!r}")
# --8<-- [end:cost]


# --8<-- [start:cost_demo]
if __name__ == "__main__":
    d = 64  # d_k = d_v = 64
    print(f"multiply-adds per head, d_k = d_v = {d}:")
    print(f"{'T':>6} {'softmax':>15} {'linear':>13} {'ratio':>8}")
    for T in (64, 256, 1024, 4096, 16384):
        soft = multiply_adds(T, d, d, form="softmax")
        lin = multiply_adds(T, d, d, form="linear")
        print(f"{T:>6} {soft:>15,} {lin:>13,} {soft / lin:>8.2f}")
    # softmax grows with T^2 d, linear with T d^2: they cross at T ~ d.
    cheaper = next(T for T in range(1, 10 * d)
                   if multiply_adds(T, d, d, form="linear")
                   < multiply_adds(T, d, d, form="softmax"))
    print("linear form needs fewer multiply-adds from T =", cheaper)
# --8<-- [end:cost_demo]
