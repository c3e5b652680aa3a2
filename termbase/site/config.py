"""The `termbase` plugin's options in mkdocs.yml, typed and validated the MkDocs way."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from termbase.core.project import DEFAULTS, validate_languages


class TermbaseConfig(base.Config):
    # Language codes; the first built at the site root is `default_language`, every other one
    # at /<code>/. Adding a language is a line here plus its data (see the README).
    languages = c.ListOfItems(c.Type(str), default=list(DEFAULTS["languages"]))
    default_language = c.Type(str, default=DEFAULTS["default_language"])
    # Executed notebooks and code blocks (termbase/run/cache.py), relative to mkdocs.yml.
    cache_dir = c.Type(str, default=DEFAULTS["cache_dir"])
    # The term base, sources, interface strings, style guides and templates.
    data_dir = c.Type(str, default=DEFAULTS["data_dir"])
    # Seconds a language's build may take before it is stopped and named as the one that hung.
    language_timeout = c.Type((int, float), default=DEFAULTS["language_timeout"])

    def validate(self):
        failed, warnings = super().validate()
        problems = validate_languages(self.get("languages"), self.get("default_language"))
        failed += [("languages", base.ValidationError(problem)) for problem in problems]
        return failed, warnings
