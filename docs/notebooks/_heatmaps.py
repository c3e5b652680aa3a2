"""The heatmaps shared by the notebooks: `# --8<-- "docs/notebooks/_heatmaps.py:code"`.

Not a notebook itself (the leading underscore): termbase/core/notebook_source.py embeds it into the
notebooks' code cells, and executing the notebooks is its test.
"""

# --8<-- [start:code]
import matplotlib.pyplot as plt


def plot_heads(weights, queries, keys):
    """One heatmap per head. weights: (h, L, S); row i = how query i spreads over the S keys.

    queries, keys: the token strings labelling the rows and the columns.
    """
    weights = weights.detach().float()
    num_heads = weights.shape[0]
    size = (1.9 * num_heads + 0.8, 0.3 * weights.shape[1] + 0.6)  # inches
    fig, axes = plt.subplots(1, num_heads, figsize=size, sharey=True, squeeze=False)
    for head, ax in enumerate(axes[0]):
        image = ax.imshow(weights[head], vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(rf"$\mathrm{{head}}_{{{head + 1}}}$")
        ax.set_xticks(range(len(keys)), keys, rotation=90)
        ax.set_yticks(range(len(queries)), queries)
        ax.tick_params(length=0)
        for row in range(weights.shape[1]):
            for col in range(weights.shape[2]):
                value = weights[head, row, col].item()
                # Light text on viridis' dark end, dark text on its bright end.
                ink = "white" if value < 0.6 else "black"
                label = f"{value:.2f}".lstrip("0")  # .42
                ax.text(col, row, label, ha="center", va="center", fontsize=6.5, color=ink)
    fig.colorbar(image, ax=axes[0].tolist(), fraction=0.02, pad=0.02)
    plt.show()
# --8<-- [end:code]
