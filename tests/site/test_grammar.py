"""One Markdown grammar (termbase/core/markdown.py) for the check and the render: any page the
check accepts renders with no marker left and every claim mark in place, and a page that would
show a marker as typed fails the check on that line. The oracle is Python-Markdown with
superfences, the renderer the site uses, not the grammar itself."""

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import markdown as python_markdown
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from termbase.core import escape, markdown
from termbase.core.check import Report
from termbase.core.check.pages import PageText, _check_page
from termbase.core.model import TermBase
from termbase.core.project import mkdocs_config
from termbase.site.pages import Pages
from tests.site.sitetools import PROJECT, copy_project

BASE = TermBase(PROJECT)
PAGES = Pages(BASE, "en", None, "/")
SLUG = "softmax"
NEUTRAL = f"glossary/{SLUG}.md"
PATH = PROJECT.docs / "glossary" / f"{SLUG}.en.md"
NEUTRAL_PAGES = {f"glossary/{slug}.md" for slug in BASE.terms} | {"index.md"}
CLAIM = "sdpa-scale-default"

MARKERS = ["{{ summary }}", "{{ related }}", "{{ sources }}"]
SPELLINGS = ["{{summary}}", "{{ summary}}", "{{summary }}", "{{  summary }}", " {{ summary }}",
             "    {{ related }}", "{{ summary }} ", "{{ Summary }}", "{{ sumary }}", "{{ summary }} and text",
             "text {{ related }}", "{{ }}", "{{ claim }}"]
CITATIONS = [f"{{{{ claim:{CLAIM} }}}}", f"{{{{claim:{CLAIM}}}}}", f"{{{{ claim: {CLAIM} }}}}",
             "{{ claim:Bad_Id }}", f"{{{{ claim:{CLAIM}}}}}"]
PROSE = ["Attention weights sum to one.", "The scale is 1/sqrt(d).", "", "## Notes", "- an item",
         "`{{ summary }}` in code", f"`{{{{ claim:{CLAIM} }}}}` shows the form", "``{{ related }}``",
         "a stray {{ brace", "closing }} only", "See [softmax](softmax.md)."]
FENCES = ["```python", "```text", "```", "~~~", "````"]
BLOCKS = ["$$", "x^2", "[^1]: a note", "*[HTML]: Hyper Text"]  # display math, footnotes, abbreviations
FRAGMENT = st.sampled_from(MARKERS + SPELLINGS + CITATIONS + PROSE + FENCES + BLOCKS)
LINE = st.one_of(FRAGMENT, st.tuples(FRAGMENT, FRAGMENT).map(" ".join))
PAGE = st.lists(LINE, max_size=14).map("\n".join)


def check(text: str) -> list:
    report = Report(PROJECT)
    _check_page(BASE, PageText(PATH, NEUTRAL, "en", text), NEUTRAL_PAGES, report)
    return report


# The site's own Markdown extensions, from mkdocs.yml (but the snippet includes, which no page here has).
_LISTED = [e for e in mkdocs_config(PROJECT)["markdown_extensions"] if (e if isinstance(e, str) else next(iter(e)))
           != "pymdownx.snippets"]
EXTENSIONS = [e if isinstance(e, str) else next(iter(e)) for e in _LISTED]
EXTENSION_CONFIGS = {name: config for e in _LISTED if isinstance(e, dict) for name, config in e.items()}


class _OutsideCode(HTMLParser):
    """The HTML with every <pre> and <code> element and every formula (class "arithmatex") left
    out, however they nest (a fence inside a paragraph can end up inside a code span)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.kept = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "code") or "arithmatex" in (dict(attrs).get("class") or "").split() or self.depth:
            self.depth += 1
        elif not self.depth:
            self.kept.append(self.get_starttag_text())

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
        elif not self.depth:
            self.kept.append(f"</{tag}>")

    def handle_data(self, data):
        if not self.depth:
            self.kept.append(data)


def outside_code(text: str, without: tuple[str, ...] = ()) -> str:
    """What a reader sees as the page's text, not code: Python-Markdown decides what is code."""
    parser = _OutsideCode()
    parser.feed(python_markdown.markdown(text, extensions=[e for e in EXTENSIONS if e not in without],
                                         extension_configs=EXTENSION_CONFIGS))
    parser.close()
    return "".join(parser.kept)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PAGE)
@example("{{summary}}")
@example("{{ summary }}\n\nIt is fast. " + f"{{{{ claim:{CLAIM} }}}}")
@example("```python\n{{ summary }}\n```")
@example("``` ````\n{{ summary }}\n````")  # no code span for Python-Markdown, one for CommonMark
@example("```python\n~~~ {{ summary }}\n~~~")  # no fence opens after one that never closes
@example("## Notes ```python\n{{ summary }} ```python")  # a heading is a paragraph of its own
@example(" ```text\n{{ summary }}\n\n```")  # a line indented less than its fence breaks it
@example("```python\n{{ summary }}\n\n ```")  # a fence closes at its own indentation only
@example("``` ## Notes\n{{ summary }}\n\n```")  # 'Notes' is no option superfences knows: no fence
@example("It is. ```python\n```python\n```\n```python\n{{ summary }}\n```python")  # a span runs across a fence
@example("It is. ```python\n ```python\n ```\n{{ summary }}\n```python")  # ... and holds the fence
@example("```python\n- an item `{{ summary }}` in code")  # no list inside a paragraph: one span
@example("{{ summary }}\n- an item ```python\n- an item {{ summary }}\n```python")  # a marker stands apart
@example("```python `{{ claim:sdpa-scale-default }}` shows the form")  # attr_list and a citation after code
@example("$$\n{{ summary }}\n$$")  # a formula, not a marker
@example(" $$\n{{ summary }}\n$$")  # an indented $$ opens no formula: the marker is in text
@example("*[HTML]: Hyper Text ```python\n{{ summary }}\n```python")  # an abbreviation is a line of its own
@example("~~~ {{ claim:sdpa-scale-default }}\n~~~")  # braces after a fence are its attributes
@example("HTML is text.\n*[HTML]: Hyper Text `{{ summary }}` in code")  # a definition's text is no Markdown
@example("HTML is text.\n*[HTML]: Hyper {{ claim:sdpa-scale-default }}")  # nor a place for a citation
def test_a_page_the_check_accepts_renders_every_marker_and_claim(text):
    problems = check(text)
    rendered = outside_code(PAGES.expand(text, NEUTRAL))
    # Citations a reader would see as text in the source, read without attr_list, which takes a
    # `{ ... }` after an element for its attributes (the site expands citations before it runs).
    cited = outside_code(text, without=("attr_list",)).count("{{ claim:")
    if not problems:
        assert "{{" not in rendered, rendered
        assert rendered.count('class="termbase-claim"') == cited
    if "{{" in rendered:  # shown as typed: the check names a line that holds it
        lines = text.splitlines()
        assert any("{{" in lines[p.line - 1] for p in problems if 0 < p.line <= len(lines)), (text, problems)


TICKS = st.lists(st.sampled_from(["`", "``", "```", "````", "a", " ", "\\", "\\\\", "{{ s }}", "\n"]),
                 min_size=1, max_size=12).map("".join)


@settings(max_examples=600, deadline=None)
@given(TICKS.filter(lambda t: t.strip() and all(line.strip() and line[0] != " " for line in t.split("\n"))))
@example("``` ````\n{{ s }}\n````")
@example("\\\\``````{{ s }}``````")
def test_code_spans_are_where_python_markdown_puts_them(paragraph):
    html = python_markdown.markdown(paragraph)
    assert html.count("<code>") == len(markdown.code_spans(paragraph)), (paragraph, html)
    shown = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert ("{{ s }}" in shown) == ("{{ s }}" in markdown.blank_code(paragraph)), (paragraph, html)


@pytest.mark.parametrize("written", ["{{summary}}", "{{ summary}}", "{{summary }}", "{{  summary  }}",
                                     " {{ summary }}", "{{ summary }} and more", "{{ summary"])
def test_each_misspelt_marker_fails_the_check_on_its_line_with_the_one_spelling(written):
    text = f"Intro.\n\n{written}\n"
    problems = check(text)
    assert [p.line for p in problems] == [3], problems
    assert "{{ summary }}" in problems[0].fix or "{{ marker }}" in problems[0].fix or "{{ name }}" in problems[0].fix
    assert "!!! abstract" not in PAGES.expand(text, NEUTRAL)


def test_the_one_spelling_passes_and_renders():
    text = f"{{{{ summary }}}}\n\nIt is so. {{{{ claim:{CLAIM} }}}}\n"
    assert not check(text)
    out = PAGES.expand(text, NEUTRAL)
    assert "!!! abstract" in out and 'class="termbase-claim"' in out and "{{" not in out


def test_code_shows_the_forms_unexpanded():
    text = "```text\n{{ summary }}\n```\n\nWrite `{{ claim:<id> }}` or `{{ summary }}`.\n"
    assert not check(text)
    assert PAGES.expand(text, NEUTRAL).endswith(text)


def test_the_scanners_agree_on_fences_includes_and_links():
    text = ('---\ntitle: x\n---\n```python\n--8<-- "snippets/softmax.py:code"\n```\n\n'
            "~~~\n```\n~~~\n\n$$\n{{ x }}\n$$\n\n[a](softmax.md) and [b](../faq/x.md#y)\n$$\nx\n$$\n")
    kinds = [line.kind for line in markdown.scan(text)]
    assert kinds == ["front"] * 3 + ["fence", "code", "fence", "text", "fence", "code", "fence", "text",
                                     "math", "formula", "math", "text", "text"] + ["text"] * 3  # no blank line: no math
    (python, tilde) = markdown.fences(text)
    assert python.refs == ("snippets/softmax.py:code",) and python.is_python and tilde.body == [(9, "```")]
    assert [m["target"] for m in markdown.LINK.finditer(text)] == ["softmax.md", "../faq/x.md"]
    assert markdown.entry_slug("glossary/kv-cache.md") == "kv-cache" and markdown.entry_slug("glossary/index.md") is None
    assert markdown.expand_includes('  --8<-- "a.py:b"\n', lambda ref: "x = 1\n\ny = 2\n") == "  x = 1\n\n  y = 2\n"


def test_claim_citations_are_stripped_for_colab_only_where_the_page_would_mark_them():
    text = f"It is so. {{{{ claim:{CLAIM} }}}}\n`{{{{ claim:{CLAIM} }}}}`\n"
    assert markdown.strip_citations(text) == f"It is so.\n`{{{{ claim:{CLAIM} }}}}`\n"


def test_a_misspelt_marker_in_a_copy_fails_check_with_path_and_line(tmp_path):
    from termbase.core import check
    from termbase.core.project import load

    project = copy_project(tmp_path / "project", cache=False)
    page = project / "docs" / "glossary" / f"{SLUG}.en.md"
    text = page.read_text(encoding="utf-8")
    assert "{{ summary }}" in text
    page.write_text(text.replace("{{ summary }}", "{{summary}}", 1), encoding="utf-8")
    number = next(n for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
                  if line == "{{summary}}")
    lines = [str(p) for p in check.run(load(project), spelling=False)]
    assert f"docs/glossary/{SLUG}.en.md:{number}: marker '{{{{summary}}}}' is not written `{{{{ summary }}}}`" \
        " - write `{{ summary }}`: one space inside each pair of braces, a lowercase name" in lines, lines


def test_every_page_of_the_site_reads_the_same_to_check_and_render():
    for path in sorted(Path(PROJECT.docs).rglob("*.md")):
        for token in markdown.page_tokens(path.read_text(encoding="utf-8")):
            assert token.problem is None, f"{path}:{token.line}: {token.problem}"


class _LinkText(HTMLParser):
    """The text of the first link of a fragment of HTML, as a browser shows it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.text, self.done = 0, "", False

    def handle_starttag(self, tag, attrs):
        if tag == "a" and not self.done:
            self.depth = 1
        elif self.depth:
            self.text += f"<{tag}>"  # any markup inside the link: the text was read as syntax

    def handle_endtag(self, tag):
        if tag == "a" and self.depth:
            self.depth, self.done = 0, True

    def handle_data(self, data):
        if self.depth:
            self.text += data


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab _*`[]()$~{}!<>&#;:|^=-.+\\/", min_size=1, max_size=24)
       .map(lambda t: " ".join(t.split())).filter(bool))
@example("modeling_rope_utils.py (__init__, factor ** 2)")
@example("**bold** and *italic* and _under_ and `code` and $x$ and ~~gone~~ and H~2~O")
@example("<b>tag</b> &amp; &#65; [a link](https://example.org) { .attr } ![image](x.png)")
def test_a_source_title_renders_exactly_as_written(title):
    """Titles come from sources.yml as plain text; the pages cite them in Markdown
    (TermBase.citation), so escape.literal must make the site's Markdown show them as written."""
    html = python_markdown.markdown(f"- [{escape.literal(title)}](https://example.org/)",
                                    extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
    parser = _LinkText()
    parser.feed(html)
    assert parser.text == title, (title, escape.literal(title), html)


def test_what_literal_escapes_the_sites_markdown_can_escape():
    """A backslash before a character that Markdown cannot escape would show on the page."""
    md = python_markdown.Markdown(extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
    escaped = set(escape.INLINE_SYNTAX) | set("#.)-+>")  # and what literal escapes at a block's start
    assert escaped <= set(md.ESCAPED_CHARS), escaped - set(md.ESCAPED_CHARS)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab 1#.)-+>*_[]:", min_size=1, max_size=12).map(lambda t: " ".join(t.split())).filter(bool))
@example("1. Team OLMo")
@example("# Lab")
@example("> quoted")
def test_authors_at_the_start_of_a_list_item_render_as_written(authors):
    """A citation opens a list item on an entry's page (`- Authors (year). [Title](url)`)."""
    html = python_markdown.markdown(f"- {escape.literal(authors)} (2024). [t](https://example.org/)",
                                    extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
    item = re.search(r"<li>(.*?) \(2024\)\. <a ", html, re.S)
    assert item and "<" not in item[1] and unescape(item[1]) == authors, (authors, html)


def test_a_url_with_a_parenthesis_a_space_or_a_quote_stays_one_link():
    url = 'https://example.org/a_(b) "c"'
    html = python_markdown.markdown(f"- [t]({escape.link_target(url)})", extensions=EXTENSIONS,
                                    extension_configs=EXTENSION_CONFIGS)
    assert '<a href="https://example.org/a_%28b%29%20%22c%22">t</a></li>' in html, html
