"""Multi-head cross-attention: decoder queries attend over a padded encoder
sequence."""

from snippets.multi_head_attention import MultiHeadAttention
from snippets.torch_mha_weights import load_into_torch  # used by the demo

BLOCKS = {
    "demo": [
        "snippets/scaled_dot_product_attention.py:code",
        "snippets/multi_head_attention.py:code",
        "snippets/torch_mha_weights.py:code",
        "snippets/cross_attention.py:code",
        "snippets/cross_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
from torch import nn


class CrossAttention(MultiHeadAttention):
    """Queries from the decoder (length L), keys and values from the encoder
    (length S).

    x: (B, L, d_model), memory_key: (B, S, kdim), memory_value: (B, S, vdim)
    -> (B, L, d_model)
    key_padding_mask: optional (B, S) boolean, keyword-only, True = padding
    (nn.MultiheadAttention's convention, the opposite of the parent's
    attend). No causal mask: every decoder position may read the whole
    source.
    """

    def forward(self, x, memory_key, memory_value, *, key_padding_mask=None):
        attend = None
        if key_padding_mask is not None:
            # Flip to "True = attend" and broadcast over heads and queries:
            # (B, 1, 1, S).
            attend = ~key_padding_mask[:, None, None, :]
        return super().forward(x, memory_key, memory_value, attend=attend)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    # The encoder's width (24) differs from the decoder's (16).
    d_model, num_heads, enc_dim = 16, 4, 24
    decoder_x = torch.randn(2, 3, d_model)  # (batch, L=3 target tokens, d)
    encoder_out = torch.randn(2, 7, enc_dim)  # (batch, S=7 source tokens, d)
    source_lengths = torch.tensor([7, 4])  # the second source is padded
    # (batch, S), True = pad
    padding = torch.arange(7)[None, :] >= source_lengths[:, None]

    ours = CrossAttention(d_model, num_heads, kdim=enc_dim, vdim=enc_dim)
    ref = nn.MultiheadAttention(
        d_model, num_heads, kdim=enc_dim, vdim=enc_dim, batch_first=True
    )
    load_into_torch(ours, ref)

    out = ours(decoder_x, encoder_out, encoder_out, key_padding_mask=padding)
    expected, _ = ref(
        decoder_x, encoder_out, encoder_out,
        key_padding_mask=padding, need_weights=False,
    )
    # (2, 3, 16): one vector per target token
    print("output shape:", tuple(out.shape))
    same = torch.allclose(out, expected, atol=1e-6)
    print("matches nn.MultiheadAttention:", same)
    # Padding really is ignored: changing padded encoder positions changes
    # nothing.
    noisy = encoder_out.clone()
    noisy[1, 4:] = 100.0
    again = ours(decoder_x, noisy, noisy, key_padding_mask=padding)
    print("padded positions ignored:", torch.allclose(out, again, atol=1e-6))
# --8<-- [end:demo]
