"""Code that readers copy from the site.

One module per concept. Each module marks sections with pymdownx.snippets
markers (``# --8<-- [start:name]`` / ``# --8<-- [end:name]``); pages embed
sections, never write Python inline. A block shown on a page is a list of
sections that together form a complete program (imports included) that
prints something a reader can check. Imports between modules sit outside the
sections, so a copied block never needs this package. Every line fits in 79
characters.
"""
