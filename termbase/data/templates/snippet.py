"""{title}: TODO(termbase) one line on what this module shows."""

# The module's blocks: each is a complete program that a page shows, made of
# these sections.
BLOCKS = {{
    "demo": [
        "snippets/{module}.py:code",
        "snippets/{module}.py:demo",
    ],
}}

# --8<-- [start:code]
import torch


def {function}(x):
    """TODO(termbase): shapes in, shapes out."""
    return x
# --8<-- [end:code]


# --8<-- [start:demo]
if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    print("output shape:", tuple({function}(x).shape))
# --8<-- [end:demo]
