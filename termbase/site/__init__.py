"""What MkDocs runs: the `termbase` plugin (plugin.py) and what its events call."""
