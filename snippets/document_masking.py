"""Document masking: several sequences packed into one row of a batch.

Packing fills a row with whole documents instead of padding each one. A
block-diagonal causal mask keeps every document to itself, and positions
that restart at 0 for each document make the row compute exactly what
each document would compute alone.
"""

BLOCKS = {
    "demo": [
        "snippets/document_masking.py:code",
        "snippets/document_masking.py:demo",
    ],
}

# --8<-- [start:code]
import torch


def document_ids(lengths, total_length):
    """Lengths of the documents packed into one row -> (total_length,)
    the document of each position, 0, 0, 0, 1, 1, 2, ...; positions past
    sum(lengths) are padding and get -1."""
    lengths = torch.as_tensor(lengths)  # a tensor keeps its device
    if (lengths < 1).any() or lengths.sum() > total_length:
        raise ValueError("need lengths >= 1 that fit into total_length")
    docs = torch.arange(len(lengths), device=lengths.device)
    ids = torch.repeat_interleave(docs, lengths)
    padding = torch.full((total_length - len(ids),), -1,
                         device=lengths.device)
    return torch.cat([ids, padding])


def document_positions(doc_ids):
    """(..., T) document ids, each document one run of equal ids ->
    (..., T) position of every token within its document: 0, 1, 2, 0, ..."""
    idx = torch.arange(doc_ids.size(-1), device=doc_ids.device)
    idx = idx.expand_as(doc_ids)
    starts = torch.ones_like(doc_ids, dtype=torch.bool)
    starts[..., 1:] = doc_ids[..., 1:] != doc_ids[..., :-1]
    # Index of the first token of the current run, carried to the right.
    first = torch.where(starts, idx, 0).cummax(dim=-1).values
    return idx - first


def document_mask(doc_ids, *, causal=True):
    """(..., T) document ids -> (..., T, T) boolean, True = may attend:
    query i sees key j if both are in the same document (and j <= i when
    causal). Padding (-1) counts as one more document: real tokens never
    see it, and no row is left without a key."""
    same = doc_ids[..., :, None] == doc_ids[..., None, :]
    if not causal:
        return same
    t = doc_ids.size(-1)
    return same & torch.ones(t, t, dtype=torch.bool,
                             device=doc_ids.device).tril()


def document_mask_mod(doc_ids, *, causal=True):
    """The same rule as a FlexAttention mask_mod over (B, T) document ids:
    (b, h, q_idx, kv_idx) -> bool, True = may attend."""

    def same_document(b, h, q_idx, kv_idx):
        return doc_ids[b, q_idx] == doc_ids[b, kv_idx]

    def causal_same_document(b, h, q_idx, kv_idx):
        return same_document(b, h, q_idx, kv_idx) & (kv_idx <= q_idx)

    return causal_same_document if causal else same_document
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    import torch.nn.functional as F
    from torch import nn

    ids = document_ids([3, 2, 4], total_length=12)  # 3 documents, 3 pads
    positions = document_positions(ids)
    print("document ids:", ids.tolist())
    print("positions:   ", positions.tolist())
    mask = document_mask(ids)
    print("mask (1 = may attend):")
    print(mask.int())

    # A small layer with learned absolute positions, as in GPT-2: the
    # positions matter, so they must restart for each document.
    torch.manual_seed(0)
    d = 16
    embed_positions = nn.Embedding(12, d)
    to_qkv = nn.Linear(d, 3 * d)

    def layer(x, positions, attend):  # x: (T, d) -> (T, d)
        q, k, v = to_qkv(x + embed_positions(positions)).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attend)

    x = torch.randn(12, d)  # stands in for the embeddings of the row
    causal = torch.ones(12, 12, dtype=torch.bool).tril()
    with torch.no_grad():
        packed = layer(x, positions, mask)
        wrong_positions = layer(x, torch.arange(12), mask)
        wrong_mask = layer(x, positions, causal)
        alone, start = [], 0
        for n in [3, 2, 4]:  # each document on its own, positions 0..n-1
            alone.append(layer(x[start : start + n], torch.arange(n),
                               causal[:n, :n]))
            start += n
    alone = torch.cat(alone)  # (9, d): the real tokens, padding left out
    real = ids >= 0
    print("each document equals running it alone:",
          torch.allclose(packed[real], alone, atol=1e-6))
    print("with positions 0..11 instead:",
          torch.allclose(wrong_positions[real], alone, atol=1e-6))
    print("with a plain causal mask instead:",
          torch.allclose(wrong_mask[real], alone, atol=1e-6))
    mask_mod = document_mask_mod(ids[None])  # a batch of one row
    idx = torch.arange(12)
    print("mask_mod gives the same mask:",
          torch.equal(mask_mod(0, 0, idx[:, None], idx[None, :]), mask))
# --8<-- [end:demo]
