"""The site's own machinery: term base, build hooks, checker and command-line tool.

`python -m termbase check|new|status|export`; MkDocs loads `termbase/hooks.py`.
"""
