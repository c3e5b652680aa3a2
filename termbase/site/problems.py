"""Under `mkdocs serve`, a problem never stops the server: it is shown where it is.

`mkdocs build` (and CI) refuse a project with a problem before anything is written: a check
problem, a code block that does not do what its test declares, a language that failed. Under
`mkdocs serve` the same problems are listed on the pages instead, so every page keeps
answering while a contributor works:
- a page that a problem is about (its own Markdown, its term record, a snippet or test whose
  block it embeds) shows that problem on top, as `path:line: problem - fix`; a page of a new
  entry that still has `termbase new`'s placeholders is marked as a draft and lists them;
- every other page shows a notice naming the problems, so nobody mistakes the site for clean;
- the next rebuild after the fix shows the page as `mkdocs build` writes it.
Headings are the page's language (termbase/data/ui.yml, `page`); the problems themselves are
the checker's lines, as `termbase check` prints them.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from termbase.core import sections
from termbase.core.model import TermBase, page_lang

log = logging.getLogger("mkdocs.plugins.termbase")
SHOWN = 8  # problems named in the notice on pages they are not about (the terminal lists all)


def _text(problem) -> str:
    return str(problem)


class Note:
    """A problem found outside the check (a notebook that fails), named by its own message."""

    def __init__(self, text: str):
        self.text = text
        self.shown = text.split(":", 1)[0]
        self.what = text

    def __str__(self) -> str:
        return self.text

    def __reduce__(self):  # sent to the languages' processes
        return (Note, (self.text,))


class _NotCounted(logging.Filter):
    """Under `mkdocs serve`: a warning is listed in the terminal, and never aborts a rebuild."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


def never_abort() -> None:
    """`strict: true` (mkdocs.yml) makes MkDocs count warnings and abort the build at its end,
    which under `mkdocs serve` leaves every request hanging until the next clean rebuild. The
    build's counter (MkDocs' public `mkdocs.utils.CountHandler`) stops counting, this build only."""
    from mkdocs.utils import CountHandler

    for handler in logging.getLogger("mkdocs").handlers:
        if isinstance(handler, CountHandler) and not any(isinstance(f, _NotCounted) for f in handler.filters):
            handler.addFilter(_NotCounted())


def is_placeholder(problem) -> bool:
    return "placeholder" in getattr(problem, "what", "")


class Problems:
    """What is wrong with the sources of one serve rebuild, and which pages it is about."""

    def __init__(self, base: TermBase, lang: str, problems: list, failed_blocks: dict, embedded: dict):
        self.base, self.lang = base, lang
        self.problems = list(problems)  # termbase.core.check.Problem (or anything with .shown and str())
        self.failed_blocks = failed_blocks  # refs -> message (shown in place of the block by Pages)
        self.by_page: dict[str, list] = {}  # docs/<path>.<lang>.md -> its problems
        for problem in self.problems:
            for page in self._pages_of(problem.shown, embedded):
                self.by_page.setdefault(page, []).append(problem)
        for refs, message in failed_blocks.items():  # also shown in place of the block (Pages.code_block)
            for page in dict.fromkeys(page.split(":", 1)[0] for page in embedded.get(refs, [])):
                self.by_page.setdefault(page, []).append(message)

    def unmark(self, shown_page: str, markdown: str) -> str:
        """A page with a block that failed carries no "Verified" note: it is earned, not written."""
        if not any(isinstance(p, str) for p in self.by_page.get(shown_page, [])):  # failed blocks' messages
            return markdown
        for key in ("verified", "verified_page"):
            note = self.base.t(key, self.lang).format(version=self.base.torch_version)
            markdown = markdown.replace(f"<small>{note}</small>", "")
        return markdown

    def __bool__(self) -> bool:
        return bool(self.problems or self.failed_blocks)

    def _pages_of(self, shown: str, embedded: dict) -> set[str]:
        docs = self.base.project.shown(self.base.project.docs)  # mkdocs.yml's docs_dir
        if shown.startswith(docs + "/") and shown.endswith(".md"):
            return {shown}
        parts = shown.split("/")
        if shown.endswith(".yml") and "terms" in parts[:-1]:
            slug = parts[-1][:-len(".yml")]
            return {f"{docs}/glossary/{slug}.{lang}.md" for lang in self.base.languages}
        module = None
        if shown.startswith("snippets/") and shown.endswith(".py"):
            module = shown
        elif shown.startswith("tests/test_") and shown.endswith(".py"):
            module = "snippets/" + parts[-1][len("test_"):]
        if module is None:
            return set()
        return {page.split(":", 1)[0] for refs, pages in embedded.items()
                if any(sections.split(ref)[0] == module for ref in refs) for page in pages}

    def t(self, key: str) -> str:
        return self.base.t(key, self.lang, "page")

    def box(self, shown_page: str) -> str:
        """The HTML to put on top of the page `shown_page` (docs/...), or ''."""
        own = self.by_page.get(shown_page, [])
        if own:
            placeholders = [p for p in own if is_placeholder(p)]
            parts = []
            if placeholders:
                parts.append(_admonition("warning", self.t("draft"), placeholders, "termbase-draft"))
            rest = [p for p in own if not is_placeholder(p)]
            if rest:
                parts.append(_admonition("failure", self.t("page_problems"), rest, "termbase-problems"))
            return "".join(parts)
        if not self:
            return ""
        listed = [*self.problems, *self.failed_blocks.values()]
        more = len(listed) - SHOWN
        title = self.t("site_problems").format(count=len(listed))
        return _admonition("failure", title, listed[:SHOWN] + ([f"… (+{more})"] if more > 0 else []),
                           "termbase-problems")

    def broken(self, shown_page: str, exc: Exception) -> str:
        """The page itself could not be rendered: only its problems, and what failed."""
        own = self.by_page.get(shown_page, [])
        return _admonition("failure", self.t("page_problems"), [*own, f"{shown_page}: {exc}"], "termbase-problems")


class TolerantMarkers(dict):
    """Under `mkdocs serve`, `Pages.renderers`: a marker that cannot be expanded (an unknown one,
    or a draft record's placeholder where a value is needed) shows why in its place, and the
    rest of the page is rendered."""

    def __init__(self, renderers: dict, title: str):
        super().__init__({name: self._tolerant(name, render) for name, render in renderers.items()})
        self.title = title

    def _tolerant(self, name: str, render):
        def run(slug, src_uri):
            try:
                return render(slug, src_uri)
            except Exception as exc:  # noqa: BLE001 - shown in place, and in the terminal
                log.warning("termbase: %s: {{ %s }} could not be made: %r", src_uri, name, exc)
                return "\n" + _admonition("failure", self.title, [f"{{{{ {name} }}}}: {exc!r}"], "termbase-problems")
        return run

    def __missing__(self, name: str):
        return lambda slug, src_uri: "\n" + _admonition("failure", self.title, [f"{{{{ {name} }}}}: unknown marker"],
                                                       "termbase-problems")


def _admonition(kind: str, title: str, lines: list, css: str) -> str:
    """Material's admonition as raw HTML (each line as code, whatever characters it has)."""
    items = "".join(f"<li><code>{html.escape(_text(line))}</code></li>" for line in lines)
    return (f'<div class="admonition {kind} {css}"><p class="admonition-title">{html.escape(title)}</p>'
            f"<ul>{items}</ul></div>\n\n")


def failure_pages(base: TermBase, site_dir: str, lang: str, message: str) -> list[Path]:
    """Under `mkdocs serve`, a language whose build failed or hung: each of its pages (and its
    404 page, for any other address under it) says so, in its language, instead of a 404 or an
    older page. The next build of the language that succeeds writes them over."""
    title = base.t("language_failed", lang, "page").format(language=base.language_name(lang))
    body = (f'<!doctype html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'</head><body><h1>{html.escape(title)}</h1><pre class="termbase-problems">{html.escape(message)}</pre>'
            "</body></html>\n").encode("utf-8")
    root = Path(site_dir) if lang == base.default_language else Path(site_dir) / lang
    written = []
    docs = base.project.docs
    for path in sorted(docs.rglob(f"*.{lang}.md")):
        parsed = page_lang(path.relative_to(docs).as_posix(), base.languages)
        if parsed is None or parsed[1] != lang:
            continue
        stem = parsed[0][:-len(".md")]
        target = root / (f"{stem[:-len('index')]}index.html" if stem == "index" or stem.endswith("/index")
                         else f"{stem}/index.html")
        written.append(target)
    written.append(root / "404.html")
    for target in written:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    log.warning("termbase: the %s site shows the failure on its %d page(s) until it builds again", lang, len(written))
    return written
