"""The delta rule: linear attention whose state is corrected, not summed.

DeltaNet (Schlag et al. 2021; Yang et al. 2024, arXiv 2406.06484) updates a
matrix state S (d_k x d_v) so that k_t S moves toward v_t; Gated DeltaNet
(arXiv 2412.06464) first decays the state by a scalar alpha_t per head, Kimi
Delta Attention (arXiv 2510.26692) by one alpha per key channel. All three are
one recurrence with a decay a_t = exp(g_t), g_t <= 0, broadcast over d_k:
    S_t = (I - beta_t k_t^T k_t) diag(a_t) S_{t-1} + beta_t k_t^T v_t
    o_t = q_t S_t
(row vectors, as on this site). Training computes it chunk by chunk.
"""

BLOCKS = {
    "demo": [
        "snippets/delta_rule.py:code",
        "snippets/delta_rule.py:demo",
    ],
}

# --8<-- [start:code]
import torch


def at_least_float32(*xs):
    """The inputs in float32 or wider (the widest of them). The state sums
    over the whole sequence, which drifts in bfloat16, and on the CPU
    solve_triangular has no float16 or bfloat16 kernel: both functions work
    at this precision, and return the output in v's dtype, the state in
    the working precision."""
    work = torch.float32
    for x in xs:
        work = torch.promote_types(work, x.dtype)
    return [x.to(work) for x in xs]


def delta_rule_recurrent(q, k, v, beta, g):
    """Token by token. q, k: (B, h, T, d_k), v: (B, h, T, d_v),
    beta: (B, h, T) in (0, 1], g: log-decay <= 0, (B, h, T, 1) for one
    decay per head (Gated DeltaNet), (B, h, T, d_k) per key channel (Kimi),
    zeros for none (DeltaNet). -> o: (B, h, T, d_v), final state S."""
    dtype = v.dtype
    q, k, v, beta, g = at_least_float32(q, k, v, beta, g)
    B, h, T, d_k = k.shape
    S = k.new_zeros(B, h, d_k, v.size(-1))  # the state: (B, h, d_k, d_v)
    out = []
    for t in range(T):
        k_t, v_t = k[:, :, t], v[:, :, t]  # (B, h, d_k), (B, h, d_v)
        S = g[:, :, t].exp().unsqueeze(-1) * S  # decay each key row
        old = (k_t.unsqueeze(-1) * S).sum(-2)  # k_t S: what S gives now
        new = beta[:, :, t, None] * (v_t - old)  # the correction
        S = S + k_t.unsqueeze(-1) * new.unsqueeze(-2)  # + k_t^T new
        out.append((q[:, :, t].unsqueeze(-1) * S).sum(-2))  # q_t S_t
    return torch.stack(out, dim=2).to(dtype), S


def delta_rule_chunked(q, k, v, beta, g, chunk):
    """The same, `chunk` tokens at a time (the last chunk may be shorter):
    inside a chunk every token at once, with one triangular solve; the
    state is carried from chunk to chunk."""
    dtype = v.dtype
    q, k, v, beta, g = at_least_float32(q, k, v, beta, g)
    B, h, T, d_k = k.shape
    g = g.expand(B, h, T, d_k)
    S = k.new_zeros(B, h, d_k, v.size(-1))
    out = []
    for s in range(0, T, chunk):
        c = slice(s, s + chunk)
        qc, kc, vc, bc = q[:, :, c], k[:, :, c], v[:, :, c], beta[:, :, c]
        G = g[:, :, c].cumsum(dim=2)  # log of the decay since the start
        n = kc.size(2)
        past = torch.ones(n, n, dtype=torch.bool, device=k.device).tril()
        # decay[t, s] = exp(G_t - G_s) for s <= t: (B, h, n, n, d_k)
        diff = (G.unsqueeze(3) - G.unsqueeze(2)).masked_fill(
            ~past[..., None], float("-inf"))
        decay = diff.exp()
        KK = torch.einsum("bhtc,bhtsc,bhsc->bhts", kc, decay, kc)
        QK = torch.einsum("bhtc,bhtsc,bhsc->bhts", qc, decay, kc)
        # The corrections u_t of the chunk solve one lower-triangular
        # system: (I + diag(beta) strict(KK)) U = diag(beta) (V - K~ S).
        A = torch.eye(n, dtype=k.dtype, device=k.device) + (
            bc.unsqueeze(-1) * KK.tril(-1))
        rhs = bc.unsqueeze(-1) * (vc - (kc * G.exp()) @ S)
        U = torch.linalg.solve_triangular(A, rhs, upper=False)
        out.append((qc * G.exp()) @ S + QK @ U)  # (B, h, n, d_v)
        last = G[:, :, -1:]  # the decay over the whole chunk
        S = last.exp().transpose(-2, -1) * S + (
            kc * (last - G).exp()).transpose(-2, -1) @ U
    return torch.cat(out, dim=2).to(dtype), S
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, h, T, d_k, d_v = 1, 2, 10, 4, 3
    q, k = F.normalize(torch.randn(2, B, h, T, d_k, dtype=torch.float64),
                       dim=-1).unbind(0)  # unit keys, as in the models
    v = torch.randn(B, h, T, d_v, dtype=torch.float64)
    beta = torch.rand(B, h, T, dtype=torch.float64)
    decays = {
        "DeltaNet": torch.zeros(B, h, T, 1, dtype=torch.float64),
        "Gated DeltaNet": -torch.rand(B, h, T, 1, dtype=torch.float64),
        "Kimi (per channel)": -torch.rand(B, h, T, d_k,
                                          dtype=torch.float64),
    }
    for name, g in decays.items():
        o, S = delta_rule_recurrent(q, k, v, beta, g)
        same = all(
            torch.allclose(o, oc) and torch.allclose(S, Sc)
            for oc, Sc in (delta_rule_chunked(q, k, v, beta, g, c)
                           for c in (1, 3, 4, 10)))
        print(f"{name}: chunks of 1, 3, 4, 10 = recurrence:", same)

    # beta = 1 with a unit key writes v_t exactly: k_t S_t = v_t.
    ones = torch.ones(B, h, T, dtype=torch.float64)
    _, S = delta_rule_recurrent(q, k, v, ones, decays["DeltaNet"])
    print("beta = 1: last key reads back its value:",
          torch.allclose(k[:, :, -1:] @ S, v[:, :, -1:]))
# --8<-- [end:demo]
