"""Rules for the Markdown pages: front matter, code, links, markers, math, entry structure, and
every page in every language."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from termbase.core import mathml, prose, sections
from termbase.core.check.records import PLACEHOLDER
from termbase.core.model import ENTRY_MARKERS, PAGE_MARKERS, SECTION_KEYS, TermBase, page_lang

LINK = re.compile(r"\]\(([^)\s#]+\.md)(#[^)]*)?\)")
MARKER_LINE = re.compile(r"^\{\{ ?([a-z_]+) ?\}\}\s*$")
ANY_MARKER = re.compile(r"\{\{\s*([^}]*?)\s*\}\}")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*\{?\s*\.?(\w*)")


@dataclass
class PageText:
    path: Path
    neutral: str  # language-neutral path, e.g. glossary/causal-mask.md
    lang: str
    text: str

    @property
    def slug(self) -> str | None:
        match = re.fullmatch(r"glossary/([a-z0-9-]+)\.md", self.neutral)
        return match.group(1) if match and match.group(1) != "index" else None


def check_pages(base: TermBase, report) -> dict[Path, PageText]:
    project = base.project
    groups: dict[str, dict[str, Path]] = {}
    for path in sorted(project.docs.rglob("*.md")):
        rel = path.relative_to(project.docs).as_posix()
        parsed = page_lang(rel, base.languages)
        if parsed is None:
            report.add(path, 1, "page has no language suffix",
                       "name it " + ", ".join(f"`<name>.{x}.md`" for x in base.languages))
            continue
        groups.setdefault(parsed[0], {})[parsed[1]] = path
    pages: dict[Path, PageText] = {}
    for neutral, files in sorted(groups.items()):
        for lang in base.languages:
            if lang not in files:
                some = files.get(base.default_language) or next(iter(files.values()))
                report.add(some, 1, f"no {lang} translation of {neutral}",
                           f"add docs/{neutral[:-3]}.{lang}.md (every page exists in {', '.join(base.languages)})")
        for lang, path in files.items():
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                report.add(path, 1, f"not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
                continue
            page = pages[path] = PageText(path, neutral, lang, text)
            _check_page(base, page, set(groups), report)
    terms = base.terms
    for slug in terms:
        neutral = f"glossary/{slug}.md"
        if neutral not in groups:
            report.add(project.terms_dir / f"{slug}.yml", 1, f"entry '{slug}' has no pages",
                       f"run `python -m termbase new {slug}` or add docs/glossary/{slug}.<lang>.md")
    for neutral, files in groups.items():
        match = re.fullmatch(r"glossary/([a-z0-9-]+)\.md", neutral)
        if match and match.group(1) != "index" and match.group(1) not in terms:
            close = difflib.get_close_matches(match.group(1), list(terms), n=1, cutoff=0.6)
            fix = (f"did you mean '{close[0]}'? rename the pages to glossary/{close[0]}.<lang>.md" if close
                   else f"add termbase/data/terms/{match.group(1)}.yml (or run `python -m termbase new {match.group(1)}`)")
            report.add(next(iter(files.values())), 1, f"page for '{match.group(1)}' has no term-base record", fix)
    for page in pages.values():
        if page.slug in terms:
            _check_entry_structure(base, page, report)
    return pages


def _front_matter(page: PageText, lines: list[str], report) -> int:
    """Checks the front matter; returns the number of lines it takes."""
    if not lines or lines[0] != "---":
        return 0
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
        report.add(page.path, 2 + mark.line if mark else 1, f"invalid front matter: {what}",
                   "write `key: value` lines between two `---` lines")
        return 0
    return end + 1


def _check_page(base: TermBase, page: PageText, neutral_pages: set[str], report) -> None:
    project = base.project
    lines = page.text.splitlines()
    _front_matter(page, lines, report)
    is_entry = page.slug is not None
    fence = None
    display_math = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = (number, match.group(3).lower(), [])
            continue
        if fence is not None:
            if re.match(r"^\s*(`{3,}|~{3,})\s*$", line):
                start, language, body = fence
                if language in ("python", "py", "pycon", "python3") and any(
                    b.strip() and not sections.REFERENCE.search(b) for b in body
                ):
                    report.add(page.path, start, "Python written inline in a page",
                               "move the code into a module under snippets/ and embed it with --8<--")
                fence = None
            else:
                fence[2].append(line)
            for ref in sections.REFERENCE.findall(line):
                missing = sections.missing(project.root, ref)
                if missing:
                    report.add(page.path, number, missing, "create it, or fix the reference `file.py:section`")
            continue
        if line.strip() == "$$":
            if display_math is None:
                display_math = (number, [])
            else:
                _formula(page, display_math[0], "\n".join(display_math[1]), report)
                display_math = None
            continue
        if display_math is not None:
            display_math[1].append(line)
            continue
        for ref in sections.REFERENCE.findall(line):
            missing = sections.missing(project.root, ref)
            if missing:
                report.add(page.path, number, missing, "create it, or fix the reference `file.py:section`")
        for target, _ in LINK.findall(line):
            if "://" in target:
                continue
            resolved = (page.path.parent / target).resolve()
            try:
                rel = resolved.relative_to(project.docs.resolve()).as_posix()
            except ValueError:
                rel = None
            if rel not in neutral_pages:
                report.add(page.path, number, f"link to '{target}' leads to no page",
                           "link to an existing page, e.g. `self-attention.md`")
        if PLACEHOLDER.search(re.sub(r"`[^`]*`", "", line)):  # a page may quote the marker in code
            report.add(page.path, number, "unfilled placeholder from `termbase new`", "replace it with your text")
        _markers(page, number, line, is_entry, report)
        if prose.unbalanced_dollar(line):
            report.add(page.path, number, "a '$' opens or closes no formula (the page would show it raw)",
                       "close the formula ($...$), or write \\$ for a dollar sign")
        for tex in prose.inline_formulas(line):
            _formula(page, number, tex, report)
    if display_math is not None:
        report.add(page.path, display_math[0], "a display formula ($$) is never closed", "add a `$$` line after it")


def _formula(page: PageText, line: int, tex: str, report) -> None:
    reason = mathml.problem(tex.strip())
    if reason:
        report.add(page.path, line, f"formula does not parse: {reason}", "fix the LaTeX")


def _markers(page: PageText, number: int, line: str, is_entry: bool, report) -> None:
    for found in ANY_MARKER.finditer(re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line)):
        name = found.group(1)
        if name.startswith("claim:"):
            continue  # checked with the claims
        if not MARKER_LINE.match(line.strip()):
            report.add(page.path, number, f"marker '{found.group()}' is not alone on its line",
                       "put each `{{ marker }}` on a line of its own")
        elif name in ENTRY_MARKERS and not is_entry:
            report.add(page.path, number, f"marker '{{{{ {name} }}}}' belongs to glossary entries only",
                       "use it on a docs/glossary/<slug>.<lang>.md page, or remove it")
        elif name not in ENTRY_MARKERS and name not in PAGE_MARKERS:
            close = difflib.get_close_matches(name, [*ENTRY_MARKERS, *PAGE_MARKERS], n=1)
            hint = f"did you mean '{{{{ {close[0]} }}}}'?" if close else "use one of: " + ", ".join(PAGE_MARKERS)
            report.add(page.path, number, f"unknown marker '{{{{ {name} }}}}'", hint)


def headings(lines):
    """(line, title) of each `## ` heading outside code."""
    in_fence = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            yield number, line[3:].strip()


def _check_entry_structure(base: TermBase, page: PageText, report) -> None:
    """Same sections, in the same order, with the same markers, in every language."""
    term = base.terms.get(page.slug) or {}
    lang = page.lang
    titles = {key: base.ui["sections"][key][lang] for key in SECTION_KEYS}
    expected = [k for k in SECTION_KEYS if k != "figure" or term.get("figure")]
    order = ", ".join(titles[k] for k in expected)
    lines = page.text.splitlines()
    by_title = {title: key for key, title in titles.items()}
    found = []
    unknown = False
    for number, title in headings(lines):
        if title not in by_title:
            unknown = True
            report.add(page.path, number, f"unknown section '{title}'",
                       f"an entry's sections are, in this order: {order}")
        else:
            found.append((number, by_title[title]))
    if not unknown and [k for _, k in found] != expected:
        keys = [k for _, k in found]
        missing = [k for k in expected if k not in keys]
        if missing:
            where = next((n for n, k in found if SECTION_KEYS.index(k) > SECTION_KEYS.index(missing[0])), len(lines))
            report.add(page.path, where, f"section '{titles[missing[0]]}' is missing",
                       f"an entry's sections are, in this order: {order}")
        else:
            extra = [(n, k) for n, k in found if k not in expected or keys.count(k) > 1]
            n, k = extra[0] if extra else next((n, k) for (n, k), e in zip(found, expected) if k != e)
            why = "out of order" if k in expected and keys.count(k) == 1 else (
                "there is no figure in the term record" if k == "figure" else "repeated")
            report.add(page.path, n, f"section '{titles[k]}' is {why}", f"an entry's sections are, in this order: {order}")
    for marker in ENTRY_MARKERS:
        wanted = 1 if marker != "figure" or term.get("figure") else 0
        count = sum(1 for line in lines if MARKER_LINE.match(line.strip()) and MARKER_LINE.match(line.strip()).group(1) == marker)
        if count != wanted:
            report.add(page.path, 1, f"marker '{{{{ {marker} }}}}' appears {count} times, expected {wanted}",
                       "keep the marker lines of the entry template")
