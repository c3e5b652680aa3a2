"""Rules for the Markdown pages: front matter, code, links, markers, math, entry structure, and
every page in every language."""

from __future__ import annotations

import difflib
import hashlib
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

from termbase.core import markdown, prose, sections
from termbase.core.check import Problem, filecache
from termbase.core.check.formulas import check_formula
from termbase.core.check.records import PLACEHOLDER
from termbase.core.model import ENTRY_MARKERS, PAGE_MARKERS, SECTION_KEYS, TermBase, page_lang



@dataclass
class PageText:
    path: Path
    neutral: str  # language-neutral path, e.g. glossary/causal-mask.md
    lang: str
    text: str

    @property
    def slug(self) -> str | None:
        return markdown.entry_slug(self.neutral)

    @cached_property
    def crowded(self) -> set[int]:
        return markdown.crowded_lines(self.text)

    @cached_property
    def prose(self) -> list:
        """markdown.prose of the page, read once for the rules that need it."""
        return markdown.prose(self.text)


def check_pages(base: TermBase, report, store=None) -> dict[Path, PageText]:
    """`store`: a filecache.Store, for the problems of `_check_page` per page (check/filecache.py)."""
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
    neutral_pages = set(groups)
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
            _cached_page(base, page, neutral_pages, report, store)
    terms = base.terms
    for slug in terms:
        neutral = f"glossary/{slug}.md"
        if neutral not in groups:
            report.add(project.terms_dir / f"{slug}.yml", 1, f"entry '{slug}' has no pages",
                       f"run `python -m termbase new {slug}` or add docs/glossary/{slug}.<lang>.md")
    for neutral, files in groups.items():
        slug = markdown.entry_slug(neutral)
        if slug is not None and slug not in terms:
            close = difflib.get_close_matches(slug, list(terms), n=1, cutoff=0.6)
            fix = (f"did you mean '{close[0]}'? rename the pages to glossary/{close[0]}.<lang>.md" if close
                   else f"add termbase/data/terms/{slug}.yml (or run `python -m termbase new {slug}`)")
            report.add(next(iter(files.values())), 1, f"page for '{slug}' has no term-base record", fix)
    for page in pages.values():
        if page.slug in terms:
            _check_entry_structure(base, page, report)
    return pages


def _cached_page(base: TermBase, page: PageText, neutral_pages: set[str], report, store) -> None:
    """`_check_page`, or its problems as found before from the same inputs (the key below; the
    list of them is in filecache.py's docstring)."""
    if store is None:
        _check_page(base, page, neutral_pages, report)
        return
    project = base.project
    snippets = []
    for ref in sorted(set(markdown.REFERENCE.findall(page.text))):
        try:
            content = hashlib.sha256((project.root / sections.split(ref)[0]).read_bytes()).hexdigest()
        except OSError:
            content = "missing"
        snippets.append(f"{ref}={content}")
    key = filecache.digest(filecache.code_digest(), project.shown(page.path), project.shown(project.docs),
                           page.neutral, page.lang, page.text, "\n".join(sorted(neutral_pages)),
                           "\n".join(sorted(base.terms)), "\n".join(snippets),
                           str(base.t("decimal_separator", page.lang)))
    found = store.get(key)
    if found is not None:
        store.reused.append(project.shown(page.path))
        report.extend(Problem(*item) for item in found)
        return
    store.checked.append(project.shown(page.path))
    start = len(report)
    _check_page(base, page, neutral_pages, report)
    store.put(key, [[p.shown, p.line, p.what, p.fix] for p in report[start:]])


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
    _front_matter(page, page.text.splitlines(), report)
    is_entry = page.slug is not None
    display_math = None
    blanked = {line.number: blank for line, blank in page.prose}
    for line in markdown.scan(page.text):
        number, text = line.number, line.text
        if line.kind == markdown.FENCE and line.fence.end == number:
            fence = line.fence
            if fence.is_python and any(b.strip() and not markdown.REFERENCE.search(b) for _, b in fence.body):
                report.add(page.path, fence.start, "Python written inline in a page",
                           "move the code into a module under snippets/ and embed it with --8<--")
        if line.kind in (markdown.CODE, markdown.TEXT):
            for ref in markdown.REFERENCE.findall(text):
                missing = sections.missing(project.root, ref)
                if missing:
                    report.add(page.path, number, missing, "create it, or fix the reference `file.py:section`")
        if line.kind == markdown.MATH:
            if display_math is None:
                display_math = (number, [])
            else:
                # its LaTeX starts on the line after the opening $$
                _formula(base, page, display_math[0] + 1, "\n".join(display_math[1]), report)
                display_math = None
        elif line.kind == markdown.FORMULA:
            display_math[1].append(text)
        elif line.kind == markdown.TEXT:
            if markdown.opens_fence(text):
                report.add(page.path, number, "code fence is never closed (the page would show its lines as text)",
                           f"add a `{markdown.opens_fence(text)['mark']}` line after the code, indented as the fence,"
                           " and indent no line inside it less than the fence")
            _prose_line(base, page, number, text, blanked[number], is_entry, neutral_pages, report)
    if display_math is not None:
        report.add(page.path, display_math[0], "a display formula ($$) is never closed", "add a `$$` line after it")


def _prose_line(base: TermBase, page: PageText, number: int, line: str, blanked: str, is_entry: bool,
                neutral_pages: set[str], report) -> None:
    project = base.project
    for link in markdown.LINK.finditer(line):
        target = link.group("target")
        if "://" in target:
            continue
        resolved = (page.path.parent / target).resolve()
        try:
            rel = resolved.relative_to(project.docs.resolve()).as_posix()
        except ValueError:
            rel = None
        if rel not in neutral_pages:
            slug = markdown.entry_slug(rel or "")
            close = difflib.get_close_matches(slug, list(base.terms), n=1, cutoff=0.6) if slug else []
            report.add(page.path, number, f"link to '{target}' leads to no page",
                       f"did you mean '{target.replace(slug + '.md', close[0] + '.md')}'?" if close
                       else "link to an existing page, e.g. `self-attention.md`")
    if PLACEHOLDER.search(blanked):  # a page may quote the marker in code
        report.add(page.path, number, "unfilled placeholder from `termbase new`", "replace it with your text")
    _markers(page, number, line, blanked, is_entry, report)
    if prose.unbalanced_dollar(line):
        report.add(page.path, number, "a '$' opens or closes no formula (the page would show it raw)",
                   "close the formula ($...$), or write \\$ for a dollar sign")
    for tex in prose.inline_formulas(line):
        _formula(base, page, number, tex, report)


def _formula(base: TermBase, page: PageText, line: int, tex: str, report) -> None:
    check_formula(report, page.path, line, "a formula", tex, str(base.t("decimal_separator", page.lang)))


def _markers(page: PageText, number: int, line: str, blanked: str, is_entry: bool, report) -> None:
    """Each `{{ ... }}` of a prose line, read by the grammar the renderer expands
    (core/markdown.py): a marker with a problem is one the page would show as typed."""
    if markdown.stray_braces(blanked):
        report.add(page.path, number, "'{{' opens no marker (the page would show it as typed)",
                   "write a marker as `{{ name }}` on a line of its own, or put the braces in `code`")
    for token in markdown.tokens(line, number, blanked, number in page.crowded):
        if token.kind == "claim":
            if token.problem:
                report.add(page.path, number, token.problem, token.fix)
            continue
        name = token.name
        if token.problem:
            report.add(page.path, number, token.problem, token.fix)
        elif name in ENTRY_MARKERS and not is_entry:
            report.add(page.path, number, f"marker '{{{{ {name} }}}}' belongs to glossary entries only",
                       "use it on a docs/glossary/<slug>.<lang>.md page, or remove it")
        elif name not in ENTRY_MARKERS and name not in PAGE_MARKERS:
            close = difflib.get_close_matches(name, [*ENTRY_MARKERS, *PAGE_MARKERS], n=1)
            hint = f"did you mean '{{{{ {close[0]} }}}}'?" if close else "use one of: " + ", ".join(PAGE_MARKERS)
            report.add(page.path, number, f"unknown marker '{{{{ {name} }}}}'", hint)


def headings(text: str):
    """(line, title) of each `## ` heading outside code."""
    for line in markdown.scan(text):
        if line.kind == markdown.TEXT and line.text.startswith("## "):
            yield line.number, line.text[3:].strip()


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
    for number, title in headings(page.text):
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
    counts = Counter(markdown.marker_line(line.text, blank, line.number in page.crowded) for line, blank in page.prose)
    for marker in ENTRY_MARKERS:
        wanted = 1 if marker != "figure" or term.get("figure") else 0
        count = counts[marker]
        if count != wanted:
            report.add(page.path, 1, f"marker '{{{{ {marker} }}}}' appears {count} times, expected {wanted}",
                       "keep the marker lines of the entry template")
