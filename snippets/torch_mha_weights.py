"""Move weights between torch.nn.MultiheadAttention and the site's
MultiHeadAttention."""

from snippets.multi_head_attention import MultiHeadAttention

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/torch_mha_weights.py:code",
        "snippets/torch_mha_weights.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


def _check_supported(theirs):
    # These options add parameters or key positions that MultiHeadAttention
    # does not model.
    if theirs.in_proj_bias is None:
        raise ValueError("nn.MultiheadAttention(bias=False) is not supported")
    if theirs.bias_k is not None:
        raise ValueError("add_bias_kv=True is not supported")
    if theirs.add_zero_attn:
        raise ValueError("add_zero_attn=True is not supported")


def _torch_projection_weights(theirs):
    """(W_q^T, W_k^T, W_v^T) of an nn.MultiheadAttention, as Linear weights,
    whatever its storage."""
    if theirs.in_proj_weight is not None:
        # kdim == vdim == embed_dim: one packed (3E, E) weight, rows in
        # q, k, v order.
        return theirs.in_proj_weight.chunk(3, dim=0)
    # kdim or vdim differ: three weights of shapes (E, E), (E, kdim),
    # (E, vdim).
    return theirs.q_proj_weight, theirs.k_proj_weight, theirs.v_proj_weight


@torch.no_grad()
def load_from_torch(ours, theirs):
    """Copy an nn.MultiheadAttention's parameters into our
    MultiHeadAttention."""
    _check_supported(theirs)
    weights = _torch_projection_weights(theirs)
    # the bias stays packed (3E) in both layouts
    biases = theirs.in_proj_bias.chunk(3)
    linears = (ours.w_q, ours.w_k, ours.w_v)
    for linear, w, b in zip(linears, weights, biases):
        linear.weight.copy_(w)
        linear.bias.copy_(b)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


@torch.no_grad()
def load_into_torch(ours, theirs):
    """Copy our MultiHeadAttention's parameters into an
    nn.MultiheadAttention."""
    _check_supported(theirs)
    linears = (ours.w_q, ours.w_k, ours.w_v)
    for target, linear in zip(_torch_projection_weights(theirs), linears):
        # chunks of in_proj_weight are views: this writes through
        target.copy_(linear.weight)
    biases = [linear.bias for linear in linears]
    theirs.in_proj_bias.copy_(torch.cat(biases))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)
    return theirs
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    E, H = 16, 4
    query = torch.randn(2, 3, E)  # (batch, L, E)
    memory = torch.randn(2, 7, 12)  # (batch, S, kdim=12): width differs from E

    # Same width: PyTorch packs W_q, W_k, W_v into in_proj_weight (3E, E).
    theirs = nn.MultiheadAttention(E, H, batch_first=True)
    ours = load_from_torch(MultiHeadAttention(E, H), theirs)
    expected, _ = theirs(query, query, query, need_weights=False)
    same = torch.allclose(ours(query, query, query), expected, atol=1e-6)
    print("packed in_proj -> ours, matches:", same)

    # kdim/vdim differ: q_proj_weight, k_proj_weight, v_proj_weight; the
    # bias is still packed.
    theirs = nn.MultiheadAttention(E, H, kdim=12, vdim=12, batch_first=True)
    ours = load_from_torch(MultiHeadAttention(E, H, kdim=12, vdim=12), theirs)
    expected, _ = theirs(query, memory, memory, need_weights=False)
    same = torch.allclose(ours(query, memory, memory), expected, atol=1e-6)
    print("separate q/k/v -> ours, matches:", same)

    # And back: fresh random weights of ours into a fresh MultiheadAttention.
    ours = MultiHeadAttention(E, H, kdim=12, vdim=12)
    fresh = nn.MultiheadAttention(E, H, kdim=12, vdim=12, batch_first=True)
    theirs = load_into_torch(ours, fresh)
    expected, _ = theirs(query, memory, memory, need_weights=False)
    same = torch.allclose(ours(query, memory, memory), expected, atol=1e-6)
    print("ours -> nn.MultiheadAttention, matches:", same)
# --8<-- [end:demo]
