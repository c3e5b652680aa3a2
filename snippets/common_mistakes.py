"""Common mistakes in attention code: each WRONG block runs and prints its
symptom, each FIXED block prints the verified result. Sections come in pairs
<name>_wrong/<name>_fixed.
"""

from snippets.masks import masked_attention  # used by fully_masked_fixed

MISTAKES = [
    "missing_import",
    "half_mask",
    "mask_convention",
    "batch_first",
    "mha_mask_shape",
    "view_transpose",
    "softmax_dim",
    "missing_scale",
    "eval_dropout",
    "fully_masked",
    "mha_fully_padded",
]

# Each mistake: a WRONG block and its FIXED block. The fixed version of fully
# masked rows reuses masks.py's masked_attention.
BLOCKS = {
    "missing_import_wrong": [
        "snippets/common_mistakes.py:missing_import_wrong",
    ],
    "missing_import_fixed": [
        "snippets/common_mistakes.py:missing_import_fixed",
    ],
    "half_mask_wrong": ["snippets/common_mistakes.py:half_mask_wrong"],
    "half_mask_fixed": ["snippets/common_mistakes.py:half_mask_fixed"],
    "mask_convention_wrong": [
        "snippets/common_mistakes.py:mask_convention_wrong",
    ],
    "mask_convention_fixed": [
        "snippets/common_mistakes.py:mask_convention_fixed",
    ],
    "batch_first_wrong": ["snippets/common_mistakes.py:batch_first_wrong"],
    "batch_first_fixed": ["snippets/common_mistakes.py:batch_first_fixed"],
    "mha_mask_shape_wrong": [
        "snippets/common_mistakes.py:mha_mask_shape_wrong",
    ],
    "mha_mask_shape_fixed": [
        "snippets/common_mistakes.py:mha_mask_shape_fixed",
    ],
    "view_transpose_wrong": [
        "snippets/common_mistakes.py:view_transpose_wrong",
    ],
    "view_transpose_fixed": [
        "snippets/common_mistakes.py:view_transpose_fixed",
    ],
    "softmax_dim_wrong": ["snippets/common_mistakes.py:softmax_dim_wrong"],
    "softmax_dim_fixed": ["snippets/common_mistakes.py:softmax_dim_fixed"],
    "missing_scale_wrong": ["snippets/common_mistakes.py:missing_scale_wrong"],
    "missing_scale_fixed": ["snippets/common_mistakes.py:missing_scale_fixed"],
    "eval_dropout_wrong": ["snippets/common_mistakes.py:eval_dropout_wrong"],
    "eval_dropout_fixed": ["snippets/common_mistakes.py:eval_dropout_fixed"],
    "fully_masked_wrong": ["snippets/common_mistakes.py:fully_masked_wrong"],
    "fully_masked_fixed": [
        "snippets/masks.py:code",
        "snippets/common_mistakes.py:fully_masked_fixed",
    ],
    "mha_fully_padded_wrong": [
        "snippets/common_mistakes.py:mha_fully_padded_wrong",
    ],
    "mha_fully_padded_fixed": [
        "snippets/common_mistakes.py:mha_fully_padded_fixed",
    ],
}


# --8<-- [start:missing_import_wrong]
if __name__ == "__main__":
    # A snippet copied without its import line, run the way a reader runs
    # it: in a fresh namespace where nothing has been imported yet.
    program = """
x = torch.randn(2, 3)
print(x.shape)
"""
    try:
        exec(program, {})
    except NameError as err:
        print("NameError:", err)
# --8<-- [end:missing_import_wrong]


# --8<-- [start:missing_import_fixed]
if __name__ == "__main__":
    # Every block on this site starts with its imports, so it runs in an
    # empty namespace.
    program = """
import torch

x = torch.randn(2, 3)
print("shape:", tuple(x.shape))
"""
    exec(program, {})
# --8<-- [end:missing_import_fixed]


# --8<-- [start:half_mask_wrong]
if __name__ == "__main__":
    import torch

    scores = torch.randn(3, 4, dtype=torch.float16)  # (L, S), half precision
    padding = torch.tensor([False, False, True, True])  # True = padded key
    try:
        scores = scores.masked_fill(padding, -1e9)  # float16 stops at 65504
        print("no error")
    except RuntimeError as err:
        print("RuntimeError:", err)
# --8<-- [end:half_mask_wrong]


# --8<-- [start:half_mask_fixed]
if __name__ == "__main__":
    import torch

    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        scores = torch.randn(3, 4, dtype=dtype)  # (L, S)
        padding = torch.tensor([False, False, True, True])  # True = padded
        # The most negative finite number of this dtype: representable by
        # construction.
        low = torch.finfo(dtype).min
        weights = torch.softmax(scores.masked_fill(padding, low), dim=-1)
        sums = weights.float().sum(-1)
        print(
            dtype,
            "finite:", bool(weights.isfinite().all()),
            "weight on padding:", weights[:, 2:].abs().max().item(),
            "rows sum to 1:", torch.allclose(sums, torch.ones(3), atol=1e-2),
        )
# --8<-- [end:half_mask_fixed]


# --8<-- [start:mask_convention_wrong]
if __name__ == "__main__":
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    # (batch, heads, L = S = 4, d_k)
    q, k, v = torch.randn(3, 1, 2, 4, 8).unbind(0)
    # key_padding_mask: True = ignore
    padding = torch.tensor([[False, False, False, True]])
    # the truth: attention with the padded key removed
    truth = F.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3])

    # SDPA reads True as "attend": this attends to the padding ONLY. No
    # error, no warning.
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=padding[:, None, None, :]
    )
    same = torch.allclose(out, truth, atol=1e-6)
    print("matches attention without the padded key:", same)
    print("max abs error:", f"{(out - truth).abs().max().item():.3f}")
# --8<-- [end:mask_convention_wrong]


# --8<-- [start:mask_convention_fixed]
if __name__ == "__main__":
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    # (batch, heads, L = S = 4, d_k)
    q, k, v = torch.randn(3, 1, 2, 4, 8).unbind(0)
    # key_padding_mask: True = ignore
    padding = torch.tensor([[False, False, False, True]])
    # the truth: attention with the padded key removed
    truth = F.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3])

    # Invert: SDPA wants True = attend, shaped (batch, 1, 1, S).
    attend = ~padding[:, None, None, :]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    same = torch.allclose(out, truth, atol=1e-6)
    print("matches attention without the padded key:", same)
# --8<-- [end:mask_convention_fixed]


# --8<-- [start:view_transpose_wrong]
if __name__ == "__main__":
    import torch

    torch.manual_seed(0)
    B, T, h, d_k = 2, 5, 4, 3
    # A fused projection's output; head i = features i*d_k .. (i+1)*d_k - 1.
    x = torch.randn(B, T, h * d_k)

    # Symptom 1: splitting with .view alone has the right shape and silently
    # mixes tokens.
    wrong = x.view(B, h, T, d_k)
    print("shape looks right:", tuple(wrong.shape))
    same = torch.equal(wrong[:, 0], x[:, :, :d_k])
    print("head 0 holds head 0's features:", same)

    # Symptom 2: merging heads with .view after .transpose raises (not
    # contiguous).
    heads = torch.randn(B, h, T, d_k)  # what attention returns per head
    try:
        heads.transpose(1, 2).view(B, T, h * d_k)
    except RuntimeError as err:
        print("RuntimeError:", str(err).split(".")[0])
# --8<-- [end:view_transpose_wrong]


# --8<-- [start:view_transpose_fixed]
if __name__ == "__main__":
    import torch

    torch.manual_seed(0)
    B, T, h, d_k = 2, 5, 4, 3
    # A fused projection's output; head i = features i*d_k .. (i+1)*d_k - 1.
    x = torch.randn(B, T, h * d_k)

    # split: view to (B, T, h, d_k), then swap
    heads = x.view(B, T, h, d_k).transpose(1, 2)
    same = torch.equal(heads[:, 0], x[:, :, :d_k])
    print("head 0 holds head 0's features:", same)
    # stands in for attention's per-head output: a new (B, h, T, d_k) tensor
    out = heads * 2.0
    # reshape copies when it must
    merged = out.transpose(1, 2).reshape(B, T, h * d_k)
    print("merged heads line up with the input:", torch.equal(merged, x * 2.0))
# --8<-- [end:view_transpose_fixed]


# --8<-- [start:softmax_dim_wrong]
if __name__ == "__main__":
    import math

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 4, 8).unbind(0)  # (batch, L = S = 4, d_k)
    scores = (q / math.sqrt(8)) @ k.transpose(-2, -1)  # (batch, L, S)
    weights = torch.softmax(scores, dim=-2)  # normalises over the QUERIES
    sums = weights.sum(dim=-1)[0].tolist()
    print("row sums:", " ".join(f"{s:.3f}" for s in sums))
    ref = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(weights @ v, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:softmax_dim_wrong]


# --8<-- [start:softmax_dim_fixed]
if __name__ == "__main__":
    import math

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 4, 8).unbind(0)  # (batch, L = S = 4, d_k)
    scores = (q / math.sqrt(8)) @ k.transpose(-2, -1)  # (batch, L, S)
    # over the keys: each query's row sums to 1
    weights = torch.softmax(scores, dim=-1)
    sums = weights.sum(dim=-1)[0].tolist()
    print("row sums:", " ".join(f"{s:.3f}" for s in sums))
    ref = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(weights @ v, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:softmax_dim_fixed]


# --8<-- [start:missing_scale_wrong]
if __name__ == "__main__":
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    # (batch, L = S = 4, d_k = 64)
    q, k, v = torch.randn(3, 1, 4, 64).unbind(0)
    # the scores grow like sqrt(d_k)
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    largest = weights.amax(dim=-1)[0].tolist()
    print("largest weight per query:", " ".join(f"{w:.3f}" for w in largest))
    ref = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(weights @ v, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:missing_scale_wrong]


# --8<-- [start:missing_scale_fixed]
if __name__ == "__main__":
    import math

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    # (batch, L = S = 4, d_k = 64)
    q, k, v = torch.randn(3, 1, 4, 64).unbind(0)
    # Dividing by sqrt(d_k) brings the scores back to unit variance: the
    # softmax stays soft. Dividing q first gives the same scores, and in
    # float16 q @ k^T cannot overflow before the division.
    weights = torch.softmax((q / math.sqrt(64)) @ k.transpose(-2, -1), dim=-1)
    largest = weights.amax(dim=-1)[0].tolist()
    print("largest weight per query:", " ".join(f"{w:.3f}" for w in largest))
    ref = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(weights @ v, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:missing_scale_fixed]


# --8<-- [start:eval_dropout_wrong]
if __name__ == "__main__":
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Attention(nn.Module):
        def __init__(self, dropout=0.1):
            super().__init__()
            self.dropout = dropout

        def forward(self, q, k, v):
            # A plain float: .eval() cannot switch it off, and SDPA applies
            # it whenever it is > 0.
            return F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout
            )

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 4, 8).unbind(0)
    model = Attention().eval()
    first, second = model(q, k, v), model(q, k, v)
    same = torch.equal(first, second)
    print("eval mode, two calls give the same output:", same)
    no_dropout = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(first, no_dropout, atol=1e-6)
    print("equals attention without dropout:", same)
# --8<-- [end:eval_dropout_wrong]


# --8<-- [start:eval_dropout_fixed]
if __name__ == "__main__":
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Attention(nn.Module):
        def __init__(self, dropout=0.1):
            super().__init__()
            self.dropout = dropout

        def forward(self, q, k, v):
            # Dropout only while training: nn.Module keeps self.training
            # for exactly this.
            p = self.dropout if self.training else 0.0
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p)

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 4, 8).unbind(0)
    model = Attention().eval()
    first, second = model(q, k, v), model(q, k, v)
    same = torch.equal(first, second)
    print("eval mode, two calls give the same output:", same)
    no_dropout = F.scaled_dot_product_attention(q, k, v)
    same = torch.allclose(first, no_dropout, atol=1e-6)
    print("equals attention without dropout:", same)
# --8<-- [end:eval_dropout_fixed]


# --8<-- [start:fully_masked_wrong]
if __name__ == "__main__":
    import math

    import torch

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 3, 4).unbind(0)  # (L = S = 3, d_k)
    attend = torch.tensor(  # query 0 may attend no key at all
        [[0, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool
    )
    scores = (q / math.sqrt(4)) @ k.T
    scores = scores.masked_fill(~attend, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v  # softmax of a row of -inf: NaN
    print("output of query 0:", out[0].tolist())
    print("NaN in output:", bool(out.isnan().any()))
# --8<-- [end:fully_masked_wrong]


# --8<-- [start:fully_masked_fixed]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 3, 4).unbind(0)  # (L = S = 3, d_k)
    attend = torch.tensor(  # query 0 may attend no key at all
        [[0, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool
    )
    # finite fill value, then zero the rows with no key
    out = masked_attention(q, k, v, attend=attend)
    print("output of query 0:", out[0].tolist())
    print("NaN in output:", bool(out.isnan().any()))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
    same = torch.allclose(out, ref, atol=1e-6)
    print("matches F.scaled_dot_product_attention:", same)
# --8<-- [end:fully_masked_fixed]


# --8<-- [start:batch_first_wrong]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4)  # batch_first=False: (L, N, E)
    x = torch.randn(2, 5, 16)  # meant as (batch=2 sentences, 5 tokens, E)
    out, _ = mha(x, x, x, need_weights=False)  # read as 5 sentences of 2
    print("output shape:", tuple(out.shape))  # the shape looks right

    # Sentence 0 must not depend on sentence 1: change sentence 1 only.
    y = x.clone()
    y[1] = torch.randn(5, 16)
    out_y, _ = mha(y, y, y, need_weights=False)
    same = torch.allclose(out[0], out_y[0], atol=1e-6)
    print("sentence 0 unaffected by sentence 1:", same)
# --8<-- [end:batch_first_wrong]


# --8<-- [start:batch_first_fixed]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    # Say which axis is the batch: (N, L, E) = (batch, tokens, E).
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 5, 16)  # (batch=2 sentences, 5 tokens, E)
    out, _ = mha(x, x, x, need_weights=False)
    print("output shape:", tuple(out.shape))

    y = x.clone()
    y[1] = torch.randn(5, 16)
    out_y, _ = mha(y, y, y, need_weights=False)
    same = torch.allclose(out[0], out_y[0], atol=1e-6)
    print("sentence 0 unaffected by sentence 1:", same)
# --8<-- [end:batch_first_fixed]


# --8<-- [start:mha_mask_shape_wrong]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    N, L, E, H = 2, 4, 16, 4
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    x = torch.randn(N, L, E)
    # One mask per sequence, nn.MultiheadAttention's convention (True =
    # ignore): causal, and sequence 1 has only 2 real tokens.
    causal = torch.ones(L, L, dtype=torch.bool).triu(1)
    padding = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1]], dtype=torch.bool)
    ignore = causal | padding[:, None, :]  # (N, L, S)
    # The truth: each sequence alone, with its own (L, S) mask.
    truth = torch.cat([
        mha(x[b:b + 1], x[b:b + 1], x[b:b + 1], attn_mask=ignore[b],
            need_weights=False)[0]
        for b in range(N)
    ])

    # Symptom 1: (N, L, S) would broadcast over heads in SDPA; MHA raises.
    try:
        mha(x, x, x, attn_mask=ignore, need_weights=False)
    except RuntimeError as err:
        print("RuntimeError:", err)
    # Symptom 2: .repeat tiles the masks head-major (index h * N + b), MHA
    # reads them batch-major (b * H + h): no error, wrong masks.
    tiled = ignore.repeat(H, 1, 1)  # (N * H, L, S)
    out, _ = mha(x, x, x, attn_mask=tiled, need_weights=False)
    print("matches each sequence with its own mask:",
          torch.allclose(out, truth, atol=1e-6))
# --8<-- [end:mha_mask_shape_wrong]


# --8<-- [start:mha_mask_shape_fixed]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    N, L, E, H = 2, 4, 16, 4
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    x = torch.randn(N, L, E)
    # One mask per sequence, nn.MultiheadAttention's convention (True =
    # ignore): causal, and sequence 1 has only 2 real tokens.
    causal = torch.ones(L, L, dtype=torch.bool).triu(1)
    padding = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1]], dtype=torch.bool)
    ignore = causal | padding[:, None, :]  # (N, L, S)
    # The truth: each sequence alone, with its own (L, S) mask.
    truth = torch.cat([
        mha(x[b:b + 1], x[b:b + 1], x[b:b + 1], attn_mask=ignore[b],
            need_weights=False)[0]
        for b in range(N)
    ])

    # (N * H, L, S) in MHA's order, b * H + h: each mask once per head.
    per_head = ignore.repeat_interleave(H, dim=0)
    out, _ = mha(x, x, x, attn_mask=per_head, need_weights=False)
    print("matches each sequence with its own mask:",
          torch.allclose(out, truth, atol=1e-6))
    # Shared by every sequence, or only padding: pass (L, S) and
    # key_padding_mask (N, S), and let MHA expand them.
    out, _ = mha(x, x, x, attn_mask=causal, key_padding_mask=padding,
                 need_weights=False)
    print("(L, S) mask + key_padding_mask, same result:",
          torch.allclose(out, truth, atol=1e-6))
# --8<-- [end:mha_mask_shape_fixed]


# --8<-- [start:mha_fully_padded_wrong]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 3, 16)  # (batch, tokens, E)
    # True = padding; sequence 1 is nothing but padding.
    padding = torch.tensor([[False, False, True], [True, True, True]])

    out, _ = mha(x, x, x, key_padding_mask=padding)  # need_weights=True
    print("need_weights=True, NaN in sequence 1:",
          bool(out[1].isnan().all()))
    print("loss:", out.sum().item())  # one empty sequence poisons the batch
    mha.eval()
    with torch.no_grad():  # inference fast path: NaN without weights too
        out, _ = mha(x, x, x, key_padding_mask=padding, need_weights=False)
    print("fast path, NaN in sequence 1:", bool(out[1].isnan().all()))
# --8<-- [end:mha_fully_padded_wrong]


# --8<-- [start:mha_fully_padded_fixed]
if __name__ == "__main__":
    import torch
    from torch import nn

    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 3, 16)  # (batch, tokens, E)
    # True = padding; sequence 1 is nothing but padding.
    padding = torch.tensor([[False, False, True], [True, True, True]])

    # Let an empty sequence attend its first key, so that every softmax
    # has a key, then zero what it computed.
    empty = padding.all(dim=-1)  # (batch,)
    safe = padding.clone()
    safe[empty, 0] = False
    out, _ = mha(x, x, x, key_padding_mask=safe)
    out = out.masked_fill(empty[:, None, None], 0.0)
    print("NaN anywhere:", bool(out.isnan().any()))
    print("empty sequence gives zeros:", bool((out[1] == 0).all()))
    alone, _ = mha(x[:1], x[:1], x[:1], key_padding_mask=padding[:1])
    print("sequence 0 unchanged:", torch.allclose(out[0], alone[0], atol=1e-6))
    mha.eval()
    with torch.no_grad():  # the fast path is safe with this mask too
        out, _ = mha(x, x, x, key_padding_mask=safe, need_weights=False)
    print("fast path, NaN anywhere:", bool(out.isnan().any()))
# --8<-- [end:mha_fully_padded_fixed]
