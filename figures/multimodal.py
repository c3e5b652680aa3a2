"""Figure of multimodal RoPE (M-RoPE): which axis (time, height, width) each pair of a head
reads in the sectioned and the interleaved layout, and the three position ids of a sequence
with text and an image. Every number comes from snippets/multimodal_rope.py; no words (the
strips are numbered, and each page says which number is which layout)."""

from __future__ import annotations

from matplotlib.patches import Rectangle

from figures import BOX, HEAD, INK, LINE, MUTED, ON_DARK, PAPER, WEIGHTS, figure, text
from snippets.multimodal_rope import mrope_axes, mrope_position_ids  # noqa: E402

# strips 1, 2, 3: Qwen2-VL's sections, then Qwen3-VL's default sections, sectioned and
# interleaved
MROPE_STRIPS = [([16, 24, 24], False), ([24, 20, 20], False), ([24, 20, 20], True)]
# 3 text tokens, an image of 4 x 6 patches (2 x 3 tokens), 2 text tokens: the demo's sequence
MROPE_SEQUENCE = [("text", 3), ("vision", (1, 4, 6)), ("text", 2)]
AXIS_COLOR = [HEAD[0], HEAD[1], HEAD[2]]  # t, h, w
AXIS_LABEL = ["$t$", "$h$", "$w$"]
IMAGE_CELL = WEIGHTS(0.7)  # an image token: dark enough for white text in both schemes


@figure("multimodal-rope", (8.6, 4.0))
def multimodal_rope(ax):
    """Top: 64 pairs (head_dim 128) as cells coloured by the axis they read: 1 sectioned
    [16, 24, 24] (Qwen2-VL), 2 sectioned [24, 20, 20], 3 interleaved [24, 20, 20] (t h w
    repeated, the last four pairs t). Bottom: the position ids (t, h, w) of three text tokens,
    an image of 2 x 3 tokens and two text tokens; image cells blue, text cells grey; right: the image's six tokens
    where they sit in the picture, row h and column w."""
    cell_w, cell_h, x0 = 0.085, 0.27, 0.75
    for i, (section, interleaved) in enumerate(MROPE_STRIPS):
        y = 3.45 - i * 0.38
        axes = mrope_axes(section, interleaved).tolist()
        for c, a in enumerate(axes):
            ax.add_patch(Rectangle((x0 + c * cell_w, y), cell_w, cell_h, fc=AXIS_COLOR[a],
                                   ec=PAPER, lw=0.4, clip_on=False))
        ax.add_patch(Rectangle((x0, y), 64 * cell_w, cell_h, fc="none", ec=LINE, lw=0.8,
                               clip_on=False))
        text(ax, x0 - 0.2, y + cell_h / 2, f"{i + 1}", size=11, ha="right")
        text(ax, x0 + 64 * cell_w + 0.15, y + cell_h / 2,
             "[" + ", ".join(str(s) for s in section) + "]", size=10, color=MUTED, ha="left")
    y_ticks = 3.45 - 2 * 0.38 - 0.16
    for c in (1, 8, 16, 24, 32, 40, 48, 56, 64):
        text(ax, x0 + (c - 0.5) * cell_w, y_ticks, f"{c}", size=9, color=MUTED, va="top")
    text(ax, x0 + 32 * cell_w, y_ticks - 0.25, "$c$", size=11, va="top")
    # the key: one colour per axis
    kx, ky = 7.55, 3.5
    for a in range(3):
        ax.add_patch(Rectangle((kx, ky - 0.38 * a), 0.22, 0.22, fc=AXIS_COLOR[a], ec=PAPER,
                               lw=0.4, clip_on=False))
        text(ax, kx + 0.35, ky - 0.38 * a + 0.11, AXIS_LABEL[a], size=12, ha="left")

    # bottom: the position ids of the demo's sequence
    ids = mrope_position_ids(MROPE_SEQUENCE).tolist()
    size, tx, y_top = 0.4, 0.75, 1.55
    kinds = [kind for kind, n in MROPE_SEQUENCE
             for _ in range(n if kind == "text" else n[0] * n[1] * n[2] // 4)]
    for r, row in enumerate(ids):
        text(ax, tx - 0.2, y_top - (r + 0.5) * size, AXIS_LABEL[r], size=12,
             color=AXIS_COLOR[r], ha="right")
        for j, v in enumerate(row):
            fc, ink = (BOX, INK) if kinds[j] == "text" else (IMAGE_CELL, ON_DARK)
            x, y = tx + j * size, y_top - (r + 1) * size
            ax.add_patch(Rectangle((x, y), size, size, fc=fc, ec=LINE, lw=0.6, clip_on=False))
            text(ax, x + size / 2, y + size / 2, f"{v}", size=10, color=ink)
    for j in range(len(kinds)):
        text(ax, tx + (j + 0.5) * size, y_top + 0.08, f"$x_{{{j + 1}}}$", size=10,
             color=MUTED, va="bottom")
    # the image's tokens where they sit in the picture: row h, column w
    gx, gy, g = 6.25, 1.45, 0.5
    image = [j for j, kind in enumerate(kinds) if kind == "vision"]
    for j in image:
        row, col = ids[1][j] - ids[1][image[0]], ids[2][j] - ids[2][image[0]]
        x, y = gx + col * g, gy - (row + 1) * g
        ax.add_patch(Rectangle((x, y), g, g, fc=IMAGE_CELL, ec=PAPER, lw=1.2, clip_on=False))
        text(ax, x + g / 2, y + g / 2, f"$x_{{{j + 1}}}$", size=10, color=ON_DARK)
    text(ax, gx + 1.5 * g, gy + 0.12, AXIS_LABEL[2], size=12, color=AXIS_COLOR[2], va="bottom")
    text(ax, gx - 0.12, gy - g, AXIS_LABEL[1], size=12, color=AXIS_COLOR[1], ha="right")
