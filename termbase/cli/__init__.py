"""Contributor commands that are not checks: scaffolding an entry, testing one entry quickly,
the Colab notebooks. The figures' drawings are content and live in figures/ at the project's
root; `python -m termbase figures` runs them."""
