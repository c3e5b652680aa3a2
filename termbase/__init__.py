"""The site's own machinery: term base, checker, MkDocs plugin and command-line tool.

`python -m termbase check|new|test|status|export|figures|notebooks`; MkDocs loads the plugin
`termbase/site/plugin.py` (registered in pyproject.toml), not a hooks file.
"""
