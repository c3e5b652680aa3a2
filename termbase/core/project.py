"""The project: where its parts are, and the settings declared once in mkdocs.yml.

The languages, the default language and the cache folder are options of the `termbase`
plugin in mkdocs.yml. The plugin (termbase/site/config.py), the checker, the tests and the
benchmarks all read them from there, through `Project`, with the same validation.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

PACKAGE = Path(__file__).resolve().parent.parent
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")
DEFAULTS = {"languages": ["en"], "default_language": "en", "cache_dir": ".termbase-cache",
            "data_dir": "termbase/data", "language_timeout": 900}


class ConfigError(ValueError):
    """A setting of the termbase plugin in mkdocs.yml is wrong: `mkdocs.yml:<line>: ... - fix`."""


def validate_languages(languages, default) -> list[str]:
    """What is wrong with a `languages` / `default_language` pair, as `problem - fix` texts."""
    problems = []
    if not isinstance(languages, list) or not languages:
        return ["`languages` must be a non-empty list of language codes - write e.g. [en, es, da]"]
    for code in languages:
        if not isinstance(code, str) or not LANGUAGE_CODE.fullmatch(code):
            problems.append(f"language code {code!r} is not 2-3 lowercase letters - use ISO 639-1, e.g. 'de'")
    if len(set(languages)) != len(languages):
        problems.append("a language is listed twice - list each code once")
    if default not in languages:
        problems.append(f"default_language {default!r} is not in languages - add it or pick one of them")
    return problems


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's own tags (!ENV, !relative, !!python/name:...) read as plain values."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        values = loader.construct_sequence(node)
        return values[-1] if node.tag == "!ENV" and values else values
    return loader.construct_mapping(node)


_Loader.add_multi_constructor("!", _untagged)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _untagged)


@dataclass(frozen=True)
class Project:
    root: Path
    languages: tuple[str, ...]
    default_language: str
    cache_dir: Path
    data_dir: Path
    language_timeout: float
    docs_dir: Path | None = None  # mkdocs.yml's `docs_dir`; None: MkDocs' default, docs/

    @property
    def docs(self) -> Path:
        return self.docs_dir or self.root / "docs"

    @property
    def snippets(self) -> Path:
        return self.root / "snippets"

    @property
    def tests(self) -> Path:
        return self.root / "tests"

    @property
    def terms_dir(self) -> Path:
        return self.data_dir / "terms"

    @property
    def other_languages(self) -> tuple[str, ...]:
        return tuple(lang for lang in self.languages if lang != self.default_language)

    def shown(self, path: Path | str) -> str:
        """A path as messages show it: relative to the project root."""
        path = Path(path)
        for root in (self.root, self.root.resolve()):
            try:
                return path.relative_to(root).as_posix()
            except ValueError:
                continue
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    @classmethod
    def from_options(cls, root: Path, options: dict) -> Project:
        merged = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
        problems = validate_languages(merged["languages"], merged["default_language"])
        if problems:
            raise ConfigError(f"{root / 'mkdocs.yml'}:1: termbase plugin: " + "; ".join(problems))
        return cls(
            root=root,
            languages=tuple(merged["languages"]),
            default_language=merged["default_language"],
            cache_dir=(root / merged["cache_dir"]).resolve(),
            data_dir=(root / merged["data_dir"]).resolve(),
            language_timeout=float(merged["language_timeout"]),
            docs_dir=(root / _docs_dir(root)).resolve(),
        )


def _docs_dir(root: Path) -> str:
    """mkdocs.yml's `docs_dir` (MkDocs' default: docs)."""
    config_file = root / "mkdocs.yml"
    if not config_file.is_file():
        return "docs"
    return str(_mkdocs_config(config_file, config_file.stat().st_mtime_ns).get("docs_dir") or "docs")


def plugin_options(config_file: Path) -> tuple[dict, int]:
    """The `termbase` plugin's options in mkdocs.yml, and the line they start on."""
    text = config_file.read_text(encoding="utf-8")
    try:
        config = yaml.load(text, Loader=_Loader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"{config_file}:{mark.line + 1 if mark else 1}: invalid YAML: "
                          f"{getattr(exc, 'problem', exc)} - fix the YAML syntax") from None
    for entry in config.get("plugins") or []:
        if entry == "termbase" or (isinstance(entry, dict) and "termbase" in entry):
            options = entry["termbase"] if isinstance(entry, dict) else {}
            line = next((n for n, t in enumerate(text.splitlines(), 1) if re.match(r"\s*-\s*termbase\b", t)), 1)
            if options is not None and not isinstance(options, dict):
                raise ConfigError(f"{config_file}:{line}: termbase plugin options are not a mapping "
                                  "- write `- termbase:` followed by indented `key: value` lines")
            return options or {}, line
    raise ConfigError(f"{config_file}:1: the termbase plugin is not in `plugins:` - add `- termbase`")


@functools.lru_cache(maxsize=8)
def _load(config_file: Path, mtime_ns: int) -> Project:
    options, _ = plugin_options(config_file)
    return Project.from_options(config_file.parent.resolve(), options)


def load(root: Path | None = None) -> Project:
    """The project whose mkdocs.yml is in `root` (default: the one this package belongs to)."""
    config_file = (Path(root) if root else PACKAGE.parent) / "mkdocs.yml"
    return _load(config_file.resolve(), config_file.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _mkdocs_config(config_file: Path, mtime_ns: int) -> dict:
    return yaml.load(config_file.read_text(encoding="utf-8"), Loader=_Loader) or {}


def mkdocs_config(project: Project) -> dict:
    """mkdocs.yml as data (its tags read as plain values), for the checks that need the nav."""
    config_file = project.root / "mkdocs.yml"
    return _mkdocs_config(config_file, config_file.stat().st_mtime_ns)


def nav_labels(nav) -> list[str]:
    """Every label of a MkDocs nav, depth first."""
    labels = []
    for item in nav or []:
        if isinstance(item, dict):
            for label, value in item.items():
                labels.append(label)
                if isinstance(value, list):
                    labels += nav_labels(value)
    return labels


def repository(root: Path) -> str | None:
    """The hosted repository's https address: the REPO_URL environment variable (the deploy
    workflow sets it from GitHub's own variables), else the git remote `origin` when it is on
    github.com, else None (then no page links to it)."""
    import os
    import subprocess

    url = os.environ.get("REPO_URL", "").strip()
    if not url:
        try:
            url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=root, capture_output=True, text=True,
                                 timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    match = re.fullmatch(r"(?:https://github\.com/|git@github\.com:)([\w.-]+/[\w.-]+?)(?:\.git)?/?", url)
    return f"https://github.com/{match.group(1)}" if match else None
