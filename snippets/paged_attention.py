"""PagedAttention's block table: a KV cache in fixed-size blocks of a pool.

Kwon et al. 2023 (vLLM): the keys and values of each sequence live in
blocks of B tokens, anywhere in a shared pool; a per-sequence block table
says which physical block holds which B tokens.
"""

BLOCKS = {
    "demo": [
        "snippets/paged_attention.py:code",
        "snippets/paged_attention.py:demo",
    ],
}

# --8<-- [start:code]
import torch
import torch.nn.functional as F


class BlockPool:
    """Physical KV blocks shared by all sequences, for one attention layer.

    k, v: (num_blocks, block_size, H_kv, d_k). Block b holds the keys and
    values of block_size consecutive tokens of whichever sequence owns it.
    """

    def __init__(self, num_blocks, block_size, num_kv_heads, d_k, *,
                 dtype=torch.float32, device=None):
        if num_blocks < 1 or block_size < 1:
            raise ValueError("need at least one block of at least one token")
        shape = (num_blocks, block_size, num_kv_heads, d_k)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.free = list(range(num_blocks))  # ids of the unowned blocks

    def allocate(self, count):
        """Hand out count free block ids (lowest first)."""
        if count > len(self.free):
            free = len(self.free)
            raise RuntimeError(f"want {count} KV blocks, {free} are free")
        taken, self.free = self.free[:count], self.free[count:]
        return taken

    def release(self, block_ids):
        """Give blocks back; a block that is already free, or not in the
        pool, is refused: releasing it twice would hand it out twice."""
        block_ids = list(block_ids)
        owned = set(range(self.num_blocks)) - set(self.free)
        if len(set(block_ids)) < len(block_ids) or set(block_ids) - owned:
            raise ValueError(f"blocks {block_ids} are not all allocated")
        self.free = sorted(self.free + block_ids)


class PagedSequence:
    """One sequence's KV cache: a block table into a shared BlockPool.

    block_table[j] is the physical block that holds the sequence's tokens
    j*B .. j*B + B - 1 (B = block size); only the last block can be partly
    filled, so at most B - 1 slots per sequence are unused.
    """

    def __init__(self, pool):
        self.pool = pool
        self.block_table = []  # logical block j -> physical block id
        self.length = 0  # tokens stored

    def append(self, k, v):
        """k, v: (T_new, H_kv, d_k), keys and values of the next tokens."""
        if k.shape != v.shape or k.shape[1:] != self.pool.k.shape[2:]:
            raise ValueError(f"k, v: {tuple(k.shape)}, {tuple(v.shape)}")
        size = self.pool.block_size
        end = self.length + k.size(0)
        missing = -(-end // size) - len(self.block_table)  # ceil division
        self.block_table += self.pool.allocate(max(missing, 0))  # on demand
        dev = self.pool.k.device  # the block table goes where the pool is
        pos = torch.arange(self.length, end, device=dev)  # new positions
        table = torch.tensor(self.block_table, dtype=torch.long, device=dev)
        block, slot = table[pos // size], pos % size  # where each one goes
        self.pool.k[block, slot] = k
        self.pool.v[block, slot] = v
        self.length = end

    def gather(self):
        """-> k, v: (length, H_kv, d_k), the sequence's keys and values in
        order, read through the block table."""
        table = torch.tensor(self.block_table, dtype=torch.long,
                             device=self.pool.k.device)
        k = self.pool.k[table].flatten(0, 1)[: self.length]
        v = self.pool.v[table].flatten(0, 1)[: self.length]
        return k, v

    def filled(self):
        """Tokens held by each block of the table (the paper's #filled)."""
        size, n = self.pool.block_size, self.length
        return [min(size, n - j * size) for j in range(len(self.block_table))]

    def free(self):
        """The sequence is done: its blocks go back to the pool."""
        self.pool.release(self.block_table)
        self.block_table, self.length = [], 0


def paged_attention(q, seq):
    """q: (H, L, d_k), the queries of the sequence's last L tokens (their
    keys already appended) -> (H, L, d_k). H may be a multiple of H_kv.

    A real PagedAttention kernel reads each block in place; gather() copies
    them into one tensor, which is simpler to read but not what saves time.
    """
    k, v = (t.transpose(0, 1) for t in seq.gather())  # (H_kv, S, d_k)
    num_new, num_keys = q.size(-2), k.size(-2)
    # Lower-right causal: the L queries are the last L of the S positions.
    attend = torch.ones(num_new, num_keys, dtype=torch.bool, device=q.device)
    attend = attend.tril(diagonal=num_keys - num_new)
    return F.scaled_dot_product_attention(
        q.to(k.dtype), k, v, attn_mask=attend, enable_gqa=True
    )
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    pool = BlockPool(num_blocks=8, block_size=4, num_kv_heads=2, d_k=8)
    seqs = {name: PagedSequence(pool) for name in "ABC"}
    plain = {name: [] for name in "ABC"}  # the same K/V kept contiguous

    def append(name, num_tokens):
        k, v = torch.randn(2, num_tokens, 2, 8).unbind(0)  # (T, H_kv, d_k)
        seqs[name].append(k, v)
        plain[name].append((k, v))

    def check(name):
        k, v = (torch.cat(parts) for parts in zip(*plain[name]))
        same = all(map(torch.equal, seqs[name].gather(), (k, v)))
        q = torch.randn(4, 1, 8)  # 4 query heads share 2 KV heads
        ref = F.scaled_dot_product_attention(
            q, k.transpose(0, 1), v.transpose(0, 1), enable_gqa=True
        )
        out = paged_attention(q, seqs[name])
        return same, torch.allclose(out, ref, atol=1e-6)

    append("A", 7)  # a prompt of 7 tokens: blocks of 4 and 3 tokens
    append("B", 3)
    for _ in range(2):  # two decoding steps, interleaved
        append("A", 1)
        append("B", 1)
    for name in "AB":
        table, filled = seqs[name].block_table, seqs[name].filled()
        print(f"sequence {name}: block table {table}, filled {filled}")
    results = [check("A"), check("B")]
    seqs["B"].free()  # B is done: C reuses its blocks
    plain["B"] = []
    append("C", 6)
    print(f"sequence C: block table {seqs['C'].block_table},"
          f" filled {seqs['C'].filled()}")
    print("free blocks:", pool.free)
    results += [check("A"), check("C")]
    print("gathered K/V equal the contiguous ones:",
          all(same for same, _ in results))
    print("paged attention equals SDPA on the contiguous K/V:",
          all(close for _, close in results))
# --8<-- [end:demo]
