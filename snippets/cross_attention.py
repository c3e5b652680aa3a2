"""Multi-head cross-attention: decoder queries attend over a padded encoder sequence."""

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
    """Queries from the decoder (length L), keys and values from the encoder (length S).

    x: (B, L, d_model), memory_key: (B, S, kdim), memory_value: (B, S, vdim) -> (B, L, d_model)
    key_padding_mask: optional (B, S) boolean, True = padding (nn.MultiheadAttention's
    convention). No causal mask: every decoder position may read the whole source.
    """

    def forward(self, x, memory_key, memory_value, key_padding_mask=None):
        attend = None
        if key_padding_mask is not None:
            # Flip to "True = attend" and broadcast over heads and queries: (B, 1, 1, S).
            attend = ~key_padding_mask[:, None, None, :]
        return super().forward(x, memory_key, memory_value, attend)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, num_heads, enc_dim = 16, 4, 24  # the encoder's width differs from the decoder's
    decoder_x = torch.randn(2, 3, d_model)  # (batch, L=3 target tokens, d_model)
    encoder_out = torch.randn(2, 7, enc_dim)  # (batch, S=7 source tokens, enc_dim)
    source_lengths = torch.tensor([7, 4])  # the second source sentence is padded
    padding = torch.arange(7)[None, :] >= source_lengths[:, None]  # (batch, S), True = pad

    ours = CrossAttention(d_model, num_heads, kdim=enc_dim, vdim=enc_dim)
    ref = nn.MultiheadAttention(d_model, num_heads, kdim=enc_dim, vdim=enc_dim, batch_first=True)
    load_into_torch(ours, ref)

    out = ours(decoder_x, encoder_out, encoder_out, key_padding_mask=padding)
    expected, _ = ref(
        decoder_x, encoder_out, encoder_out, key_padding_mask=padding, need_weights=False
    )
    print("output shape:", tuple(out.shape))  # (2, 3, 16): one vector per target token
    print("matches nn.MultiheadAttention:", torch.allclose(out, expected, atol=1e-6))
    # Padding really is ignored: changing padded encoder positions changes nothing.
    noisy = encoder_out.clone()
    noisy[1, 4:] = 100.0
    unchanged = torch.allclose(out, ours(decoder_x, noisy, noisy, padding), atol=1e-6)
    print("padded positions ignored:", unchanged)
# --8<-- [end:demo]
