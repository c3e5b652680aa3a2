"""The data model and the checks: what `python -m termbase check|status|export` needs.

Nothing here imports MkDocs or torch, so a contributor's check starts in a fraction of a second
and the rules are the same wherever they run (the command, the build, the tests).
"""
