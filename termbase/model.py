"""Loads the term base (terms.yml), the sources and the interface strings, once per process."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(__file__).resolve().parent
DOCS = ROOT / "docs"
LANGS = ("en", "es", "da")
DEFAULT_LANG = "en"
SECTION_KEYS = ("meanings", "usage", "formula", "code", "figure", "related", "origin", "sources")
MARKERS = ("summary", "formula", "code", "figure", "related", "sources")


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@functools.lru_cache(maxsize=None)
def _cached(path: str, mtime: float):
    return load_yaml(Path(path))


def cached_yaml(path: Path):
    """Parsed YAML, re-read only when the file changes (mkdocs serve rebuilds often)."""
    return _cached(str(path), path.stat().st_mtime)


def ui() -> dict:
    return cached_yaml(PACKAGE / "ui.yml")


def terms() -> dict:
    return cached_yaml(PACKAGE / "terms.yml") or {}


def sources() -> dict:
    return cached_yaml(PACKAGE / "sources.yml") or {}


def t(key: str, lang: str, group: str = "labels") -> str:
    """An interface string in `lang`."""
    return ui()[group][key][lang]


def nav_label(label: str, lang: str) -> str:
    if lang == DEFAULT_LANG:
        return label
    return ui()["nav"][label][lang]


@functools.lru_cache(maxsize=None)
def torch_version() -> str:
    """The PyTorch version the snippets are verified with: the pin in requirements.txt."""
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    match = re.search(r"^torch==([\w.+]+)", text, re.M)
    return match.group(1) if match else "?"


def page_lang(src_uri: str) -> tuple[str, str] | None:
    """`glossary/x.da.md` -> ("glossary/x.md", "da"); None for a file with no language suffix."""
    match = re.fullmatch(r"(.+)\.(\w\w)\.(md|ipynb|py)", src_uri)
    if not match or match.group(2) not in LANGS:
        return None
    return f"{match.group(1)}.{match.group(3)}", match.group(2)
