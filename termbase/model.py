"""Loads the term base (termbase/data/terms/*.yml), the sources and the interface strings."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(__file__).resolve().parent
DATA = PACKAGE / "data"
DOCS = ROOT / "docs"
LANGS = ("en", "es", "da")
DEFAULT_LANG = "en"
SECTION_KEYS = ("meanings", "usage", "formula", "code", "figure", "related", "origin", "sources")
MARKERS = ("summary", "formula", "code", "figure", "related", "sources")


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@functools.lru_cache(maxsize=None)
def cached_yaml(path: Path):
    """Parsed YAML, read once per build: the hooks call `forget()` when a build starts."""
    return load_yaml(path)


def ui() -> dict:
    return cached_yaml(DATA / "ui.yml")


def sources() -> dict:
    return cached_yaml(DATA / "sources.yml") or {}


TERMS_DIR = DATA / "terms"


def term_files() -> list[Path]:
    return sorted(TERMS_DIR.glob("*.yml"))


@functools.lru_cache(maxsize=None)
def terms() -> dict:
    """slug -> record, from termbase/data/terms/<slug>.yml."""
    return {path.stem: cached_yaml(path) or {} for path in term_files()}


def forget() -> None:
    """Drop what was read, so that `mkdocs serve` rebuilds see edited YAML."""
    cached_yaml.cache_clear()
    terms.cache_clear()


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
