"""Contributor commands that are not checks: scaffolding an entry, drawing the figures,
testing one entry quickly."""
