"""Prefill and decode: the prompt in chunks, then one token per step.

A prompt is prefilled into a KV cache chunk by chunk, each chunk masked
causally and aligned to the lower right (its queries come after the
cached keys); then tokens are decoded one at a time. Every output equals
one causal pass of F.scaled_dot_product_attention over the whole sequence.
The second block measures why the phases differ: FLOPs per byte read.
"""

BLOCKS = {
    "demo": [
        "snippets/prefill_and_decode.py:code",
        "snippets/prefill_and_decode.py:demo",
    ],
    "intensity": [
        "snippets/prefill_and_decode.py:intensity",
        "snippets/prefill_and_decode.py:intensity_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


def chunk_mask(length, offset):
    """(length, offset + length) bool, True = may attend: new query i is
    position offset + i and sees keys 0 .. offset + i (lower right)."""
    rows = torch.arange(length)[:, None] + offset  # positions of queries
    return torch.arange(offset + length)[None, :] <= rows


def generate(q, k, v, *, prompt, chunk):
    """Attention outputs for every position of q, k, v (B, H, T, d), as a
    server computes them: the first `prompt` positions are prefilled in
    chunks of `chunk`, the rest decoded one at a time. -> (B, H, T, d_v)
    """
    k_cache, v_cache = k[..., :0, :], v[..., :0, :]  # empty: (B, H, 0, d)
    steps = [(a, min(a + chunk, prompt)) for a in range(0, prompt, chunk)]
    steps += [(t, t + 1) for t in range(prompt, q.size(-2))]  # decode
    outs = []
    for start, stop in steps:
        # Append this step's keys and values: the cache now holds 0..stop.
        k_cache = torch.cat([k_cache, k[..., start:stop, :]], dim=-2)
        v_cache = torch.cat([v_cache, v[..., start:stop, :]], dim=-2)
        mask = chunk_mask(stop - start, offset=start)  # (L, stop)
        outs.append(F.scaled_dot_product_attention(
            q[..., start:stop, :], k_cache, v_cache, attn_mask=mask))
    return torch.cat(outs, dim=-2)
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 13, 16).unbind(0)  # (B, H, T, d_k)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # 10 prompt tokens in chunks of 4 (4 + 4 + 2), then 3 decode steps.
    out = generate(q, k, v, prompt=10, chunk=4)
    print("chunked prefill + decode equals one causal pass:",
          torch.allclose(out, full, atol=1e-5))
    print("mask of 2 new queries after 4 cached keys:")
    for row in chunk_mask(2, offset=4).int().tolist():
        print(" ", row)
    wrong = F.scaled_dot_product_attention(
        q[..., 4:6, :], k[..., :6, :], v[..., :6, :], is_causal=True)
    print("is_causal=True on that chunk equals it:",
          torch.allclose(wrong, full[..., 4:6, :], atol=1e-5))
# --8<-- [end:demo]


# --8<-- [start:intensity]
import torch
from torch.utils.flop_counter import FlopCounterMode


def arithmetic_intensity(layer, x):
    """FLOPs per byte moved when layer (a nn.Linear) runs on x: FLOPs as
    FlopCounterMode counts them, bytes of the weights read plus the input
    read and the output written (each once, as a fused kernel would)."""
    with FlopCounterMode(display=False) as counter:
        y = layer(x)
    moved = sum(p.nbytes for p in layer.parameters())
    moved += x.nbytes + y.nbytes
    return counter.get_total_flops() / moved
# --8<-- [end:intensity]


# --8<-- [start:intensity_demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d = 1024
    layer = torch.nn.Linear(d, d, bias=False, dtype=torch.bfloat16)
    with torch.no_grad():
        for tokens in (1, 16, 256, 2048):  # decode step ... long prefill
            x = torch.randn(tokens, d, dtype=torch.bfloat16)
            ratio = arithmetic_intensity(layer, x)
            print(f"{tokens:5d} tokens: {ratio:6.1f} FLOPs per byte")
# --8<-- [end:intensity_demo]
