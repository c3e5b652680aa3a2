"""The attention-entropy figure: the entropy of one layer's weights against a factor that scales
its input, without a bound on the logits, with QK-norm and with soft-capping, over the floors
that the two bounds guarantee.

Every number comes from the entry's snippets (snippets/attention_entropy.py, qk_norm.py,
logit_soft_capping.py); the plot is drawn by hand on the shared inch canvas with the Frame of
variants.py, so the dark variant swaps its colours like every other figure's.
"""

from __future__ import annotations

import torch

from figures import MUTED, figure, text
from figures.variants import FIRST, SECOND, Frame
from snippets.attention_entropy import entropy_floor, entropy_from_logits  # noqa: E402
from snippets.logit_soft_capping import soft_cap  # noqa: E402
from snippets.qk_norm import QKNormSelfAttention, logit_bound  # noqa: E402

THIRD = "#2ca02c"  # soft-capping: the first head colour, green
CAP = 5.0
T = 32


def entropy_against_scale(scales):
    """Mean entropy over the queries and heads of one layer (d_model 64, 4 heads, T = 32) as
    its input grows: plain, QK-norm (unit gains, c = 4) and soft-capping at 5; and the floors.
    In float64 and rounded to 4 decimals (a thousandth of a point on the page): float32's last
    digits differ between CPUs (AVX2, AVX-512), and the committed SVG must not."""
    torch.manual_seed(0)
    normed = QKNormSelfAttention(64, 4).double()
    plain = QKNormSelfAttention(64, 4, norm=None).double()
    plain.load_state_dict(normed.state_dict(), strict=False)
    x = torch.randn(1, T, 64).double()
    rows = []
    with torch.no_grad():
        c_norm = float(logit_bound(normed))
        for s in scales:
            z = plain.logits(s * x)
            rows.append(tuple(round(h.mean().item(), 4) for h in (
                entropy_from_logits(z), entropy_from_logits(normed.logits(s * x)),
                entropy_from_logits(soft_cap(z, CAP)))))
    return rows, entropy_floor(c_norm, T), entropy_floor(CAP, T)


@figure("attention-entropy", (7.8, 4.2))
def attention_entropy_figure(ax):
    """Mean entropy against the input scale s (log x), three curves, two dashed floors, log T."""
    scales = [2 ** (e / 2) for e in range(-6, 15)]  # 1/8 ... 128
    rows, floor_norm, floor_cap = entropy_against_scale(scales)
    plain, normed, capped = ([r[i] for r in rows] for i in range(3))
    assert min(normed) >= floor_norm and min(capped) >= floor_cap
    top = torch.log(torch.tensor(float(T))).item()
    f = Frame(ax, 0.9, 0.7, 4.9, 3.0, (1 / 8, 128), (0, 3.6), xlog=True)
    f.axes([(2.0**e, f"$2^{{{e}}}$") for e in range(-3, 8, 2)], [(v, f"${v}$") for v in (0, 1, 2, 3)], size=9)
    f.line([scales[0], scales[-1]], [top, top], MUTED, lw=1.0, ls=(0, (1, 2)))
    f.line([scales[0], scales[-1]], [floor_norm, floor_norm], SECOND, lw=1.0, ls=(0, (4, 3)))
    f.line([scales[0], scales[-1]], [floor_cap, floor_cap], THIRD, lw=1.0, ls=(0, (4, 3)))
    f.line(scales, plain, FIRST)
    f.line(scales, normed, SECOND)
    f.line(scales, capped, THIRD)
    right = f.x0 + f.w + 0.1
    text(ax, right, f.y(top), r"$\log T$", size=11, color=MUTED, ha="left")
    text(ax, right, f.y(normed[-1]) + 0.12, r"$\hat q_i \cdot \hat k_j$", size=11, color=SECOND, ha="left")
    text(ax, right, f.y(capped[-1]) - 0.1, r"$c\,\tanh(\cdot / c)$", size=11, color=THIRD, ha="left")
    text(ax, right, f.y(plain[-1]) + 0.4, r"$q_i \cdot k_j$", size=11, color=FIRST, ha="left")
    text(ax, right, f.y(floor_norm) + 0.08, r"$H_{\min}(c)$", size=10, color=MUTED, ha="left")
    text(ax, f.x0 + f.w / 2, f.y0 - 0.5, "$s$", size=12)
    text(ax, f.x0 + f.w / 2, 3.95, r"$X \rightarrow sX,\ \ T = 32$", size=11, color=MUTED)
    text(ax, f.x0 - 0.55, f.y0 + f.h / 2, "$H$", size=12)
