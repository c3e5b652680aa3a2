"""FlashAttention's tiling with an online softmax, in plain PyTorch.

Exact attention computed one (query block, key block) tile at a time:
each query row keeps a running maximum and a running sum and rescales its
output accumulator, so the L x S score matrix never exists (Dao et al.
2022, after Milakov and Gimelshein 2018). This shows the algorithm; the
speed of the real kernel comes from keeping the tiles in on-chip memory.
"""

BLOCKS = {
    "demo": [
        "snippets/flash_attention.py:code",
        "snippets/flash_attention.py:demo",
    ],
    "memory": [
        "snippets/flash_attention.py:code",
        "snippets/flash_attention.py:memory",
        "snippets/flash_attention.py:memory_demo",
    ],
}

# --8<-- [start:code]
import math

import torch


def online_softmax(x, *, block_size):
    """softmax over the last dim of x, reading it block_size columns at a
    time: one pass for the maximum m and the sum l = sum(exp(x - m)) of
    each row together, one more to normalise. Same result as torch.softmax,
    also where a row's first blocks are all -inf (masked); a row that is
    -inf everywhere has no softmax and gives NaN, as torch.softmax does.
    """
    # float32 statistics for half inputs (float64 stays float64).
    work = torch.promote_types(x.dtype, torch.float32)
    m = torch.full(x.shape[:-1], -math.inf, dtype=work, device=x.device)
    l = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
    for start in range(0, x.size(-1), block_size):
        block = x[..., start : start + block_size].to(work)
        m_new = torch.maximum(m, block.amax(dim=-1))
        # What was summed under the old maximum is rescaled to the new one.
        # Subtracting -inf would give exp(-inf + inf) = NaN: see finite_or_0.
        m_sub = finite_or_0(m_new)
        new_terms = torch.exp(block - m_sub[..., None]).sum(dim=-1)
        l = l * torch.exp(m - m_sub) + new_terms
        m = m_new
    out = torch.exp(x.to(work) - m[..., None]) / l[..., None]
    return out.to(x.dtype)


def finite_or_0(m):
    """The running maximum to subtract: m, or 0 while m is still -inf (no
    visible value yet). Then exp(-inf - 0) = 0 and the row's sums stay 0,
    the guard real kernels use (FlashAttention-2, FlexAttention)."""
    return torch.where(m == -math.inf, 0.0, m)


def flash_attention(q, k, v, *, causal=False, attn_mask=None, block_q=64,
                    block_k=64):
    """softmax(q k^T / sqrt(d_k)) v, one tile of block_q x block_k scores
    at a time. q: (..., L, d_k), k: (..., S, d_k), v: (..., S, d_v)
    -> (..., L, d_v). causal=True: query i sees keys 0..i (upper-left, like
    F.scaled_dot_product_attention's is_causal). attn_mask: a bool tensor
    that broadcasts to (..., L, S), True where the query may see the key.
    A query that sees no key at all gets zeros.
    """
    if block_q < 1 or block_k < 1 or k.size(-2) == 0:
        raise ValueError("need block sizes >= 1 and at least one key")
    num_queries, num_keys = q.size(-2), k.size(-2)
    # float32 statistics for half inputs (float64 stays float64), and q is
    # scaled before the product: q @ k^T itself may overflow in float16.
    work = torch.promote_types(q.dtype, torch.float32)
    scale = q.size(-1) ** -0.5
    dev = q.device  # every tensor made here follows the inputs' device
    out = torch.empty(*q.shape[:-1], v.size(-1), dtype=q.dtype, device=dev)
    if attn_mask is not None:
        attn_mask = attn_mask.expand(*q.shape[:-1], num_keys)
    for i in range(0, num_queries, block_q):
        q_i = q[..., i : i + block_q, :].to(work) * scale  # (..., Bq, d_k)
        last = i + q_i.size(-2)  # one past this block's last row
        rows = torch.arange(i, last, device=dev)
        m = torch.full(q_i.shape[:-1], -math.inf, dtype=work, device=dev)
        l = torch.zeros(q_i.shape[:-1], dtype=work, device=dev)  # (..., Bq)
        acc = torch.zeros(*q_i.shape[:-1], v.size(-1), dtype=work,
                          device=dev)  # (..., Bq, d_v)
        # Causal: key tiles right of this block's last row are all masked.
        stop = min(num_keys, last) if causal else num_keys
        for j in range(0, stop, block_k):
            k_j = k[..., j : j + block_k, :].to(work)  # (..., Bk, d_k)
            v_j = v[..., j : j + block_k, :].to(work)  # (..., Bk, d_v)
            s = q_i @ k_j.transpose(-2, -1)  # (..., Bq, Bk): one tile only
            if causal:
                cols = torch.arange(j, j + k_j.size(-2), device=dev)
                s = s.masked_fill(cols[None, :] > rows[:, None], -math.inf)
            if attn_mask is not None:
                seen = attn_mask[..., i:last, j : j + k_j.size(-2)]
                s = s.masked_fill(~seen, -math.inf)
            m_new = torch.maximum(m, s.amax(dim=-1))
            # A row whose tiles so far were all masked has m_new = -inf:
            # subtract 0 instead, so its p and l stay 0 rather than NaN.
            m_sub = finite_or_0(m_new)
            p = torch.exp(s - m_sub[..., None])  # (..., Bq, Bk)
            alpha = torch.exp(m - m_sub)  # rescales the old sum and output
            l = alpha * l + p.sum(dim=-1)
            acc = alpha[..., None] * acc + p @ v_j
            m = m_new
        # A row with no visible key ends with l = 0 and acc = 0: output 0.
        l = torch.where(l == 0, 1.0, l)
        out[..., i : i + block_q, :] = (acc / l[..., None]).to(q.dtype)
    return out
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    q = torch.randn(2, 4, 100, 16)  # (B, H, L, d_k): 100 queries
    k, v = torch.randn(2, 2, 4, 75, 16).unbind(0)  # 75 keys and values
    # 32 and 24 divide neither 100 nor 75: the last tiles are smaller.
    for causal in (False, True):
        ours = flash_attention(q, k, v, causal=causal, block_q=32, block_k=24)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        print(f"causal={causal}: equals F.scaled_dot_product_attention:",
              torch.allclose(ours, ref, atol=1e-5))
    q64, k64, v64 = q.double(), k.double(), v.double()
    ours = flash_attention(q64, k64, v64, causal=True, block_q=7, block_k=5)
    ref = F.scaled_dot_product_attention(q64, k64, v64, is_causal=True)
    print("float64, tiles of 7 x 5, to 1e-12:",
          torch.allclose(ours, ref, rtol=0, atol=1e-12))

    # A sliding window of 8 keys: the first key tiles of late rows are all
    # masked, and rows 82 to 99 see no key at all (SDPA gives them zeros).
    rows, cols = torch.arange(100)[:, None], torch.arange(75)
    window = (cols <= rows) & (cols > rows - 8)
    ours = flash_attention(q, k, v, attn_mask=window, block_q=32, block_k=24)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=window)
    print("window of 8, masked tiles and rows:", torch.allclose(ours, ref,
                                                                atol=1e-5))

    x = torch.randn(3, 10) * 30  # large logits: the max subtraction matters
    x[0, :5] = -math.inf  # row 0: its first block of 4 is fully masked
    same = torch.allclose(online_softmax(x, block_size=4), x.softmax(-1))
    print("online_softmax equals torch.softmax:", same)
# --8<-- [end:demo]


# --8<-- [start:memory]
import weakref

from torch.overrides import TorchFunctionMode


def naive_attention(q, k, v):
    """The textbook version: materialises all L x S scores, then weights.
    q is scaled first, so that q @ k^T cannot overflow in float16."""
    scores = (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)  # (..., L, S)
    return torch.softmax(scores, dim=-1) @ v


class TensorBytes(TorchFunctionMode):
    """Counts the bytes of the tensors created inside `with TensorBytes()`
    while they are alive: `peak` is the most at any moment, `largest` the
    biggest single tensor.

    Every torch call in the block passes through __torch_function__; a
    result whose storage is new is counted until Python frees it (weakref
    finalizers fire at once, by reference counting). So the numbers are
    exact and the same on every run. They leave out scratch memory inside
    kernels and the allocator's own overhead, which are not tensors.
    """

    def __init__(self):
        super().__init__()
        self.live = self.peak = self.largest = 0
        self.counted = set()  # ids of storages being counted

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        given = {id(t.untyped_storage())
                 for t in _tensors([args, list(kwargs.values())])}
        for t in _tensors(out):
            storage = t.untyped_storage()
            if id(storage) in given or id(storage) in self.counted:
                continue  # a view of an input or an already counted tensor
            size = storage.nbytes()
            self.counted.add(id(storage))
            self.live += size
            self.peak = max(self.peak, self.live)
            self.largest = max(self.largest, size)
            weakref.finalize(storage, self._freed, id(storage), size)
        return out

    def _freed(self, key, size):
        self.counted.discard(key)
        self.live -= size


def _tensors(x):
    """The tensors in a (nested) tuple or list."""
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _tensors(item)]
    return []


def tensor_bytes(fn, *args, **kwargs):
    """(peak, largest) bytes of the tensors fn(*args, **kwargs) creates."""
    with TensorBytes() as counter:
        fn(*args, **kwargs)  # the result is dropped at once
    return counter.peak, counter.largest
# --8<-- [end:memory]


# --8<-- [start:memory_demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    n, d_k, block = 1024, 64, 64
    q, k, v = torch.randn(3, 1, 1, n, d_k).unbind(0)  # (B, H, T, d_k)
    kib = 1024
    print(f"L = S = {n}, d_k = {d_k}, float32, tiles of {block} x {block}")
    print(f"all scores, L x S x 4 bytes: {n * n * 4 // kib} KiB;"
          f" one tile: {block * block * 4 // kib} KiB")
    naive_peak, naive_largest = tensor_bytes(naive_attention, q, k, v)
    tiled_peak, tiled_largest = tensor_bytes(
        flash_attention, q, k, v, block_q=block, block_k=block
    )
    print(f"peak tensor bytes, naive: {naive_peak // kib} KiB,"
          f" tiled: {tiled_peak // kib} KiB")
    print(f"largest tensor, naive: {naive_largest // kib} KiB,"
          f" tiled: {tiled_largest // kib} KiB (the output)")
    print(f"tiled needs {naive_peak / tiled_peak:.1f} times less")
# --8<-- [end:memory_demo]
