"""Multi-head latent attention (DeepSeek-V2): one small latent per token in
the cache, a decoupled RoPE key, and the absorbed form of the same layer."""

from snippets.rotary_position_embedding import apply_rope

BLOCKS = {
    "demo": [
        "snippets/rotary_position_embedding.py:code",
        "snippets/multi_head_latent_attention.py:code",
        "snippets/multi_head_latent_attention.py:demo",
    ],
    "cache_size": [
        "snippets/multi_head_latent_attention.py:cache_bytes",
        "snippets/multi_head_latent_attention.py:cache_demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    """MLA of DeepSeek-V2 (arXiv 2405.04434, section 2.1), in row vectors.

    The cache holds, per token, c_kv = x W^DKV (kv_rank numbers) and one
    rope key k_r = RoPE(x W^KR) (rope_dim numbers) shared by all heads.
    Head i attends with
        q_i = [q_c,i ; RoPE(q_r,i)]    k_i = [c_kv W^UK_i ; k_r]
        v_i = c_kv W^UV_i,             scale 1 / sqrt(head_dim + rope_dim).
    Left out here: the low-rank query compression (it saves activation
    memory in training, not cache) and the RMSNorm after the latent.
    Shapes: x (B, L, d_model) are L new tokens at `positions` (L,); the
    cache (c_kv, k_r) covers all S tokens, the new ones included.
    `attend`: boolean (L, S), True = may attend (SDPA convention).
    """

    def __init__(self, d_model, num_heads, head_dim, kv_rank, rope_dim, *,
                 rope_theta=10000.0):
        super().__init__()
        self.h, self.d_h, self.d_c, self.d_r = (num_heads, head_dim, kv_rank,
                                                rope_dim)
        self.rope_theta = rope_theta
        self.w_q = nn.Linear(d_model, num_heads * head_dim, bias=False)
        self.w_qr = nn.Linear(d_model, num_heads * rope_dim, bias=False)
        self.w_dkv = nn.Linear(d_model, kv_rank, bias=False)  # cached
        self.w_kr = nn.Linear(d_model, rope_dim, bias=False)  # cached
        self.w_uk = nn.Linear(kv_rank, num_heads * head_dim, bias=False)
        self.w_uv = nn.Linear(kv_rank, num_heads * head_dim, bias=False)
        self.w_o = nn.Linear(num_heads * head_dim, d_model, bias=False)

    def rope(self, x, positions):
        return apply_rope(x, positions, layout="interleaved",
                          rope_theta=self.rope_theta)

    def compress(self, x, positions):
        """x (B, S, d_model) -> what is cached: c_kv (B, S, kv_rank) and
        k_r (B, S, rope_dim), already rotated to its position."""
        return self.w_dkv(x), self.rope(self.w_kr(x), positions)

    def rope_queries(self, x, positions):
        b, length, _ = x.shape
        q_r = self.w_qr(x).view(b, length, self.h, self.d_r).transpose(1, 2)
        return self.rope(q_r, positions)  # (B, h, L, rope_dim)

    def naive(self, x, c_kv, k_r, positions, *, attend=None):
        """Up-project the whole cache to per-head keys and values, then
        attend as usual: (B, L, d_model)."""
        b, length, _ = x.shape
        s = c_kv.size(1)
        q_c = self.w_q(x).view(b, length, self.h, self.d_h).transpose(1, 2)
        q = torch.cat((q_c, self.rope_queries(x, positions)), dim=-1)
        k_c = self.w_uk(c_kv).view(b, s, self.h, self.d_h).transpose(1, 2)
        k_r = k_r[:, None].expand(-1, self.h, -1, -1)  # same for each head
        k = torch.cat((k_c, k_r), dim=-1)  # (B, h, S, head_dim + rope_dim)
        v = self.w_uv(c_kv).view(b, s, self.h, self.d_h).transpose(1, 2)
        # SDPA's default scale 1/sqrt(q.size(-1)) is eq. 18's
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        return self.w_o(heads.transpose(1, 2).reshape(b, length, -1))

    def absorbed_weights(self):
        """The algebra of the absorbed form, as matrices: W^UK folded into
        the query projection, W^UV into W^O: w_qk (h, d_model, kv_rank) and
        w_ov (h, kv_rank, d_model). Real code never builds them (DeepSeek-V3
        projects queries from a 1536-wide latent, so its w_qk alone would be
        128 x 1536 x 512 = 101 M numbers per layer); `absorbed` applies the
        factors in another order instead."""
        w_q = self.w_q.weight.view(self.h, self.d_h, -1)  # (h, d_h, d_model)
        w_uk = self.w_uk.weight.view(self.h, self.d_h, self.d_c)
        w_uv = self.w_uv.weight.view(self.h, self.d_h, self.d_c)
        w_o = self.w_o.weight.view(-1, self.h, self.d_h)  # (d_model, h, d_h)
        # q_c,i . (c W^UK_i) = (x W^Q_i W^UK_i^T) . c: a query in latent space
        w_qk = torch.einsum("hkm,hkc->hmc", w_q, w_uk)
        # (weights @ c) W^UV_i W^O_i: values and output in one matrix
        w_ov = torch.einsum("hkc,mhk->hcm", w_uv, w_o)
        return w_qk, w_ov

    def absorbed(self, x, c_kv, k_r, positions, *, attend=None):
        """The same layer, never expanding the cache: every head scores its
        query, moved into latent space, against the cached c_kv and k_r as
        they are, and sums c_kv itself as its value: (B, L, d_model).
        As in DeepSeek-V3's inference code, the factors stay apart and the
        products are reassociated: W^UK_i moves the d_h-wide query into
        latent space, W^UV_i maps the attended latent back to d_h."""
        b, length, _ = x.shape
        w_uk = self.w_uk.weight.view(self.h, self.d_h, self.d_c)
        w_uv = self.w_uv.weight.view(self.h, self.d_h, self.d_c)
        q_c = self.w_q(x).view(b, length, self.h, self.d_h).transpose(1, 2)
        # the naive form's scale 1/sqrt(d_h + d_r), not 1/sqrt(d_c + d_r);
        # applied to the queries first, so float16 scores overflow later
        scale = (self.d_h + self.d_r) ** -0.5
        q_lat = torch.einsum("bhld,hdc->bhlc", q_c, w_uk) * scale
        q_r = self.rope_queries(x, positions) * scale  # (B, h, L, d_r)
        # The cache has no head axis, and einsum multiplies all h * L
        # queries by it at once: no per-head key is ever formed. (One SDPA
        # call can do the same with the heads folded into the queries,
        # (B, 1, h * L, d) against one key head; k.expand(-1, h, -1, -1)
        # instead makes the CPU's math backend, taken when d_v != d_k,
        # scale that expanded key into a new (B, h, d_c + d_r, S) tensor.)
        scores = (torch.einsum("bhlc,bsc->bhls", q_lat, c_kv)
                  + torch.einsum("bhlr,bsr->bhls", q_r, k_r))  # (B, h, L, S)
        if attend is not None:
            scores = scores.masked_fill(~attend, float("-inf"))
        # softmax in at least float32, as SDPA does for half precision
        work = torch.promote_types(scores.dtype, torch.float32)
        weights = torch.softmax(scores.to(work), dim=-1)
        if attend is not None:  # a query with no key left: zeros, as SDPA
            weights = weights.masked_fill(~attend.any(-1, keepdim=True), 0.0)
        out = torch.einsum("bhls,bsc->bhlc", weights.to(c_kv.dtype), c_kv)
        heads = torch.einsum("bhlc,hdc->bhld", out, w_uv)  # (B, h, L, d_h)
        return self.w_o(heads.transpose(1, 2).reshape(b, length, -1))
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    d_model, h, d_h, d_c, d_r = 64, 4, 16, 32, 8
    mla = MultiHeadLatentAttention(d_model, h, d_h, d_c, d_r).double()
    B, T = 2, 7
    x = torch.randn(B, T, d_model, dtype=torch.float64)
    pos = torch.arange(T)
    causal = torch.ones(T, T, dtype=torch.bool).tril()

    c_kv, k_r = mla.compress(x, pos)  # the cache
    print("cached per token:", c_kv.size(-1), "+", k_r.size(-1), "numbers,",
          "MHA would cache", 2 * h * d_h)
    naive = mla.naive(x, c_kv, k_r, pos, attend=causal)
    absorbed = mla.absorbed(x, c_kv, k_r, pos, attend=causal)
    print("output shape:", tuple(absorbed.shape))
    print("absorbed form equals naive form:",
          torch.allclose(absorbed, naive, atol=1e-12))

    # Decoding the last token from the cache of the first T - 1 tokens.
    prev_c, prev_r = mla.compress(x[:, :-1], pos[:-1])
    new_c, new_r = mla.compress(x[:, -1:], pos[-1:])
    cache_c = torch.cat((prev_c, new_c), dim=1)
    cache_r = torch.cat((prev_r, new_r), dim=1)
    step = mla.absorbed(x[:, -1:], cache_c, cache_r, pos[-1:])
    print("decode step from the latent cache equals the full pass:",
          torch.allclose(step, naive[:, -1:], atol=1e-12))
# --8<-- [end:demo]


# --8<-- [start:cache_bytes]
import torch


def kv_cache_bytes_per_token(*, num_heads, head_dim, num_kv_heads, kv_rank,
                             rope_dim, dtype=torch.bfloat16):
    """Bytes one token adds to the cache of ONE layer (DeepSeek-V2, Table 1,
    elements times the element size): MHA caches 2 n_h d_h elements, GQA
    2 n_kv d_h, MQA 2 d_h, MLA d_c + d_h^R."""
    size = torch.empty((), dtype=dtype).element_size()
    return {
        "MHA": 2 * num_heads * head_dim * size,
        f"GQA, {num_kv_heads} KV heads": 2 * num_kv_heads * head_dim * size,
        "MQA": 2 * head_dim * size,
        "MLA": (kv_rank + rope_dim) * size,
    }
# --8<-- [end:cache_bytes]


# --8<-- [start:cache_demo]
if __name__ == "__main__":
    # DeepSeek-V2 (section 3.1.2): n_h = 128 heads of d_h = 128,
    # d_c = 512, d_h^R = 64, 60 layers. GQA with 8 KV heads for comparison.
    sizes = kv_cache_bytes_per_token(num_heads=128, head_dim=128,
                                     num_kv_heads=8, kv_rank=512,
                                     rope_dim=64, dtype=torch.bfloat16)
    print("bfloat16, bytes per token per layer:")
    for name, size in sizes.items():
        print(f"  {name:<18} {size:>6}")
    print(f"MHA / MLA: {sizes['MHA'] / sizes['MLA']:.1f}")
    print("MLA caches as much as GQA with", (512 + 64) / (2 * 128),
          "KV heads")
    print("60 layers, KiB per token: MLA", 60 * sizes["MLA"] / 1024,
          "MHA", 60 * sizes["MHA"] / 1024)
# --8<-- [end:cache_demo]
