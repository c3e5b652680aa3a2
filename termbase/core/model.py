"""The term base (data/terms/*.yml), the sources, the interface strings and the style guides
of one project, read from its files.

Files are parsed once per version (path, modification time, size), so a `mkdocs serve`
rebuild sees every edit without anything having to be forgotten, and nothing is shared
between projects: a `TermBase` is made for a `Project` and reads only that project's files.
"""

from __future__ import annotations

import functools
import re
from functools import cached_property
from importlib import metadata
from pathlib import Path

import yaml

from termbase.core.escape import link_target, literal
from termbase.core.project import Project

# The structure every glossary entry follows, in this order (headings are in ui.yml).
SECTION_KEYS = ("meanings", "usage", "formula", "code", "figure", "related", "origin", "sources")
ENTRY_MARKERS = ("summary", "formula", "code", "figure", "related", "sources")


def read_yaml(path: Path):
    stat = path.stat()
    return _parsed(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _parsed(path: str, mtime_ns: int, size: int):
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_text(path: Path) -> str:
    stat = path.stat()
    return _text(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _text(path: str, mtime_ns: int, size: int) -> str:
    return Path(path).read_text(encoding="utf-8")


def page_lang(src_uri: str, languages) -> tuple[str, str] | None:
    """`glossary/x.da.md` -> ("glossary/x.md", "da"); None without a known language suffix."""
    match = re.fullmatch(r"(.+)\.([a-z]{2,3})\.(md|ipynb|py)", src_uri)
    if not match or match.group(2) not in languages:
        return None
    return f"{match.group(1)}.{match.group(3)}", match.group(2)


class TermBase:
    """Everything the pages are rendered from, for one project at one moment."""

    def __init__(self, project: Project):
        self.project = project
        self.languages = project.languages
        self.default_language = project.default_language

    def term_files(self) -> list[Path]:
        return sorted(self.project.terms_dir.glob("*.yml"))

    @cached_property
    def terms(self) -> dict[str, dict]:
        """slug -> record, from data/terms/<slug>.yml; a record that cannot be read is left out
        (the checker reports it, and a build never starts with it)."""
        records = {}
        for path in self.term_files():
            try:
                record = read_yaml(path)
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                records[path.stem] = record
        return records

    @cached_property
    def ui(self) -> dict:
        return read_yaml(self.project.data_dir / "ui.yml") or {}

    @cached_property
    def sources(self) -> dict:
        return read_yaml(self.project.data_dir / "sources.yml") or {}

    @cached_property
    def config_keys(self) -> dict:
        """`config.json` key -> {entry, one line per language}, from data/config_keys.yml (the
        models page's key index, the config explainer and search read it)."""
        path = self.project.data_dir / "config_keys.yml"
        try:
            data = read_yaml(path) if path.is_file() else None
        except (yaml.YAMLError, UnicodeDecodeError):
            data = None  # the checker reports it
        keys = data.get("keys") if isinstance(data, dict) else None
        return keys if isinstance(keys, dict) else {}

    def attestations(self, lang: str) -> dict:
        """name -> its attestations (quote, source, url, read), from data/attestations/<lang>.yml."""
        path = self.project.data_dir / "attestations" / f"{lang}.yml"
        try:
            data = read_yaml(path) if path.is_file() else None
        except (yaml.YAMLError, UnicodeDecodeError):
            data = None  # the checker reports it
        return data if isinstance(data, dict) else {}

    def source_title(self, source_id: str, lang: str) -> str:
        """A source's title in `lang`. A paper keeps the title it was published under; a
        description (a config file, a documentation page) may be a mapping with one per
        language, e.g. `title: {en: "PyTorch documentation: ...", es: "Documentación ..."}`."""
        title = self.sources[source_id]["title"]
        if isinstance(title, dict):
            return str(title.get(lang) or title[self.default_language])
        return str(title)

    def citation(self, source_id: str, lang: str) -> str:
        """A source as the pages cite it, in Markdown: "Authors (year). [Title](url)", the
        authors and title shown exactly as sources.yml writes them (core/escape.py)."""
        src = self.sources[source_id]
        who = f"{literal(str(src['authors']))} ({src['year']}). " if src.get("authors") else ""
        return f"{who}[{literal(self.source_title(source_id, lang))}]({link_target(str(src['url']))})"

    def number(self, value: int | float, lang: str) -> str:
        """A number written as the language writes it (ui.yml: decimal_separator,
        thousands_separator, and thousands_from, the fewest digits that get a separator:
        Spanish writes 4096 but 65 504, with a no-break space)."""
        text = f"{value:,}"
        if "." in text:  # a float: 50.0 is written 50, 0.25 keeps its digits
            text = text.rstrip("0").rstrip(".")
        whole, _, fraction = text.partition(".")
        if len(whole.replace(",", "").lstrip("-")) < int(self.t("thousands_from", lang)):
            whole = whole.replace(",", "")
        whole = whole.replace(",", self.t("thousands_separator", lang))
        return whole + (self.t("decimal_separator", lang) + fraction if fraction else "")

    def style(self, lang: str) -> dict:
        path = self.project.data_dir / "style" / f"{lang}.yml"
        return (read_yaml(path) or {}) if path.is_file() else {}

    def t(self, key: str, lang: str, group: str = "labels") -> str:
        """An interface string in `lang`."""
        return self.ui[group][key][lang]

    def formula_words(self, lang: str) -> dict[str, str]:
        """The words of the records' formulas (`\\text{...}`) in `lang`: English -> `lang`, from
        ui.yml's `formula_text` (empty for the default language, which the formulas are written in)."""
        if lang == self.default_language:
            return {}
        table = self.ui.get("formula_text")
        if not isinstance(table, dict):
            return {}  # `check` names it
        return {english: per[lang] for english, per in table.items()
                if isinstance(per, dict) and isinstance(per.get(lang), str)}

    def nav_label(self, label: str, lang: str) -> str:
        if lang == self.default_language:
            return label
        return self.ui["nav"][label][lang]

    def language_name(self, lang: str) -> str:
        return self.ui["language_name"][lang]

    def name(self, slug: str, lang: str) -> str:
        return self.terms[slug][lang]["term"]

    @cached_property
    def torch_version(self) -> str:
        """The PyTorch that runs the blocks and the claim tests: the one installed for this
        interpreter (the block runner is `sys.executable`, and the cache keys every result by
        this version), without its build label (2.13.0+cpu -> 2.13.0). Read from the package's
        metadata: torch is not imported here."""
        try:
            return metadata.version("torch").split("+")[0]
        except metadata.PackageNotFoundError:
            return "-"

    @cached_property
    def torch_pin(self) -> str:
        """The version requirements.txt pins."""
        text = read_text(self.project.root / "requirements.txt")
        match = re.search(r"^torch==([\w.+]+)", text, re.M)
        return match.group(1).split("+")[0] if match else "?"

    def torch_problem(self) -> str | None:
        """One line when the installed torch is not the pinned one (the site would state a
        version its code did not run on), else None."""
        if self.torch_version == self.torch_pin:
            return None
        return (f"torch {self.torch_version} is installed but requirements.txt pins torch=={self.torch_pin}, "
                "and the site states the version its code ran on - reinstall it: .venv/bin/pip install "
                "--retries 0 --timeout 10 -r requirements-torch.txt && .venv/bin/pip install -r requirements.txt")


# Markers a page may hold on a line of its own, expanded by the build (termbase/site/pages.py).
PAGE_MARKERS = ("glossary_index", "az_index", "categories", "reading_order", "translation_status", "exports", "verified",
                "benchmark_table", "style_guide", "claims", "model_table", "config_keys",
                "config_explainer", "terminology_table")
