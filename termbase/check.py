"""Validates the sources of the site before anything is built.

Every problem is one line, `path:line: what is wrong - how to fix it`. The same function runs
from `python -m termbase check`, from the test suite and at the start of every MkDocs build.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from termbase import notebooks
from termbase.model import DATA, DOCS, LANGS, MARKERS, PACKAGE, ROOT, SECTION_KEYS, page_lang, term_files, ui

SNIPPET_REF = re.compile(r'--8<--\s+"([^"]+)"')
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*\{?\s*\.?(\w*)")
LINK = re.compile(r"\]\(([^)\s#]+\.md)(#[^)]*)?\)")
PLACEHOLDER = re.compile(r"TODO\(termbase\)")
REQUIRED = {"category", "level", "related", "sources", "code", "formula"}
LOCAL_REQUIRED = {"term", "short"}


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    what: str
    fix: str

    def __str__(self) -> str:
        try:
            shown = self.path.relative_to(ROOT)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}: {self.what} - {self.fix}"


class Report(list):
    def add(self, path, line, what, fix):
        self.append(Problem(Path(path), line, what, fix))


def _line_map(node, prefix=()):
    """Line (1-based) of every key path in a YAML document, for messages."""
    lines = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (key.value,)
            lines[path] = key.start_mark.line + 1
            lines.update(_line_map(value, path))
    return lines


def _load(path: Path, report: Report):
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        report.add(path, 1, f"not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
        return None, {}
    try:
        return yaml.safe_load(text) or {}, _line_map(yaml.compose(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        report.add(path, mark.line + 1 if mark else 1, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                   "fix the YAML syntax (indentation, quotes, colons)")
        return None, {}


def snippet_section_exists(ref: str) -> str | None:
    """None if `file.py:section` resolves, else what is missing."""
    file_part, _, section = ref.partition(":")
    path = ROOT / file_part
    if not path.is_file():
        return f"snippet file {file_part} does not exist"
    if section and f"--8<-- [start:{section}]" not in _text(path, path.stat().st_mtime_ns):
        return f"section '{section}' is not marked in {file_part}"
    return None


@functools.lru_cache(maxsize=256)
def _text(path: Path, mtime_ns: int) -> str:
    """A snippet module's text, read once per version: many entries embed the same modules."""
    return path.read_text(encoding="utf-8")


def check_terms(report: Report) -> dict:
    sources, src_lines = _load(DATA / "sources.yml", report)
    sources = sources or {}
    for sid, src in sources.items():
        if not str((src or {}).get("url", "")).startswith("https://"):
            report.add(DATA / "sources.yml", src_lines.get((sid,), 1), f"source '{sid}' has no https URL",
                       "add `url: https://...` pointing at the paper or documentation")
    records = {}
    for path in term_files():
        record, lines = _load(path, report)
        if record is None:
            continue
        if not isinstance(record, dict):
            report.add(path, 1, "the record is not a mapping", "see termbase/data/terms/README.md for the layout")
            continue
        records[path.stem] = (path, record, lines)
    seen = {lang: {} for lang in LANGS}
    for slug, (path, term, lines) in records.items():
        _check_record(slug, path, term, lines, records, sources, seen, report)
    return {slug: record for slug, (_, record, _) in records.items()}


def _check_record(slug, path, term, lines, records, sources, seen, report):
    categories, levels = ui()["categories"], ui()["levels"]

    def at(*keys):
        return lines.get(keys, 1)

    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug):
        report.add(path, 1, f"slug '{slug}' is not lowercase-with-hyphens", "rename the file, e.g. 'causal-mask.yml'")
    for field in sorted(REQUIRED - term.keys()):
        report.add(path, 1, f"field '{field}' is missing", f"add `{field}:` (see termbase/data/terms/README.md)")
    if "category" in term and term["category"] not in categories:
        report.add(path, at("category"), f"unknown category '{term['category']}'", f"use one of: {', '.join(categories)}")
    if "level" in term and term["level"] not in levels:
        report.add(path, at("level"), f"unknown level '{term['level']}'", f"use one of: {', '.join(levels)}")
    for other in term.get("related") or []:
        if other not in records:
            report.add(path, at("related"), f"related term '{other}' does not exist", "use the slug of an existing entry")
    for sid in term.get("sources") or []:
        if sid not in sources:
            report.add(path, at("sources"), f"source '{sid}' is not in termbase/data/sources.yml", "add it there with title and url")
    for block in term.get("code") or []:
        for ref in block:
            missing = snippet_section_exists(ref)
            if missing:
                report.add(path, at("code"), missing, "create it, or fix the reference `file.py:section`")
    for name in term.get("notebooks") or []:
        if not (DOCS / "notebooks" / f"{name}.py").is_file():
            report.add(path, at("notebooks"), f"notebook docs/notebooks/{name}.py does not exist",
                       "use the name of a notebook in docs/notebooks/, without .py")
    if term.get("figure"):
        fig = DOCS / "assets" / "figures" / f"{term['figure']}.svg"
        if not fig.is_file():
            report.add(path, at("figure"), f"figure {fig.relative_to(ROOT)} does not exist",
                       "draw it with `python -m termbase figures` or remove `figure:`")
    for lang in LANGS:
        local = term.get(lang)
        if not isinstance(local, dict):
            report.add(path, 1, f"no '{lang}' record", f"add `{lang}:` with term and short")
            continue
        for field in sorted(LOCAL_REQUIRED - local.keys()):
            report.add(path, at(lang), f"'{lang}.{field}' is missing", f"add `{field}:` under `{lang}:`")
        if term.get("figure") and not local.get("figure_alt"):
            report.add(path, at(lang), f"a figure but no '{lang}.figure_alt'", "describe the picture in that language")
        name = str(local.get("term", "")).lower()
        if name and name in seen[lang]:
            report.add(path, at(lang, "term"), f"term '{name}' ({lang}) is also the term of '{seen[lang][name]}'",
                       "terms must be unique per language")
        seen[lang][name] = slug
        for field, value in local.items():
            if PLACEHOLDER.search(str(value)):
                report.add(path, at(lang, field), f"'{lang}.{field}' is still a placeholder", "write it")


def _headings(lines):
    in_fence = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            yield number, line[3:].strip()


def check_page(path: Path, report: Report, pages: set[str]) -> list[str] | None:
    """Checks one Markdown page; returns its text lines, or None when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        report.add(path, 1, f"not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
        return None
    lines = text.splitlines()
    if lines and lines[0] == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line == "---"), None)
        try:
            if end is None:
                raise yaml.YAMLError("front matter is not closed")
            meta = yaml.safe_load("\n".join(lines[1:end]))
            if meta is not None and not isinstance(meta, dict):
                raise yaml.YAMLError("front matter is not a mapping")
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            report.add(path, 2 + mark.line if mark else 1, f"invalid front matter: {what}",
                       "write `key: value` lines between two `---` lines")
    fence_start = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence_start is None and match:
            fence_start = (number, match.group(3).lower(), [])
        elif fence_start is not None and re.match(r"^\s*(`{3,}|~{3,})\s*$", line):
            start, language, body = fence_start
            if language in ("python", "py", "pycon", "python3") and any(
                b.strip() and not SNIPPET_REF.search(b) for b in body
            ):
                report.add(path, start, "Python written inline in a page",
                           "move the code into a module under snippets/ and embed it with --8<--")
            fence_start = None
        elif fence_start is not None:
            fence_start[2].append(line)
        for ref in SNIPPET_REF.findall(line):
            missing = snippet_section_exists(ref)
            if missing:
                report.add(path, number, missing, "create it, or fix the reference `file.py:section`")
        for target, _ in LINK.findall(line):
            if "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            try:
                rel = resolved.relative_to(DOCS).as_posix()
            except ValueError:
                rel = None
            if rel not in pages:
                report.add(path, number, f"link to '{target}' leads to no page", "link to an existing page, e.g. `self-attention.md`")
        if PLACEHOLDER.search(re.sub(r"`[^`]*`", "", line)):  # a page may quote the marker in code
            report.add(path, number, "unfilled placeholder from `termbase new`", "replace it with your text")
    return lines


def check_entry_structure(slug: str, files: dict[str, Path], page_lines: dict, report: Report, terms: dict):
    """Same sections, in the same order, with the same markers, in every language."""
    term = terms.get(slug, {})
    expected = [k for k in SECTION_KEYS if k != "figure" or term.get("figure")]
    for lang, path in files.items():
        lines = page_lines.get(lang)
        if lines is None:
            continue
        by_title = {ui()["sections"][k][lang]: k for k in SECTION_KEYS}
        found = []
        for number, title in _headings(lines):
            if title not in by_title:
                report.add(path, number, f"unknown section '{title}'",
                           "use the headings: " + ", ".join(ui()["sections"][k][lang] for k in expected))
            else:
                found.append(by_title[title])
        if found != expected:
            report.add(path, 1, f"sections are {found or 'missing'}, expected {expected}",
                       "keep the sections of the entry template, in order (see `python -m termbase new`)")
        text = "\n".join(lines)
        for marker in MARKERS:
            wanted = 1 if marker != "figure" or term.get("figure") else 0
            if text.count("{{ %s }}" % marker) != wanted:
                report.add(path, 1, f"marker '{{{{ {marker} }}}}' appears {text.count('{{ %s }}' % marker)} times, expected {wanted}",
                           "keep the marker lines of the entry template")


def check_snippet_tests(report: Report):
    for path in sorted([*(ROOT / "snippets").glob("*.py"), *(ROOT / "tests").glob("test_*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PLACEHOLDER.search(line):
                report.add(path, number, "unfilled placeholder from `termbase new`", "replace it with real code")
    for module in sorted((ROOT / "snippets").glob("*.py")):
        if module.name == "__init__.py":
            continue
        test = ROOT / "tests" / f"test_{module.stem}.py"
        if not test.is_file():
            report.add(module, 1, f"snippet module has no test ({test.relative_to(ROOT)} is missing)",
                       "write tests that compare it with PyTorch's own implementation")


def run() -> Report:
    report = Report()
    terms = check_terms(report)
    check_snippet_tests(report)
    notebooks.check(report)
    md_files = sorted(DOCS.rglob("*.md"))
    groups: dict[str, dict[str, Path]] = {}
    for path in md_files:
        rel = path.relative_to(DOCS).as_posix()
        parsed = page_lang(rel)
        if parsed is None:
            report.add(path, 1, "page has no language suffix", "name it `<name>.en.md`, `.es.md` or `.da.md`")
            continue
        groups.setdefault(parsed[0], {})[parsed[1]] = path
    pages = set(groups)
    page_lines = {}
    for neutral, files in sorted(groups.items()):
        for lang in LANGS:
            if lang not in files:
                some = next(iter(files.values()))
                report.add(some, 1, f"no {lang} translation of {neutral}",
                           f"add docs/{neutral[:-3]}.{lang}.md (every page exists in {', '.join(LANGS)})")
        for lang, path in files.items():
            page_lines[(neutral, lang)] = check_page(path, report, pages)
    for slug in terms:
        neutral = f"glossary/{slug}.md"
        if neutral not in groups:
            report.add(DATA / "terms" / f"{slug}.yml", 1, f"entry '{slug}' has no pages",
                       f"run `python -m termbase new {slug}` or add docs/{neutral[:-3]}.<lang>.md")
            continue
        check_entry_structure(slug, groups[neutral], {lang: page_lines[(neutral, lang)] for lang in groups[neutral]},
                              report, terms)
    for neutral in groups:
        match = re.fullmatch(r"glossary/([a-z0-9-]+)\.md", neutral)
        if match and match.group(1) != "index" and match.group(1) not in terms:
            report.add(next(iter(groups[neutral].values())), 1, f"page for '{match.group(1)}' has no term-base record",
                       "add termbase/data/terms/<slug>.yml (or run `python -m termbase new`)")
    return report
