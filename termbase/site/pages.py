"""Turns term-base data into Markdown for a page: the parts of an entry that are the same in
every language (summary box, formula, code, figure, related terms, sources), the index, and
the other pages' markers. One `Pages` per language build; every marker reads only its data."""

from __future__ import annotations

import html
import re
from pathlib import PurePosixPath

from termbase.core import claims, collation, markdown, mathml, notebook_source
from termbase.core.markdown import entry_slug  # noqa: F401  (plugin and preview ask it here)
from termbase.core.model import ENTRY_MARKERS, PAGE_MARKERS, TermBase
from termbase.core.status import Status
from termbase.site.benchmark_table import benchmark_table
from termbase.site.languages import prefix
from termbase.site.terminology_page import status_words, terminology_table



class Pages:
    def __init__(self, base: TermBase, lang: str, status: Status, home: str, failed_blocks=None):
        self.base = base
        self.lang = lang
        self.status = status
        self.home = home  # URL path of this language's home, e.g. /es/
        self.failed_blocks = failed_blocks or {}  # refs -> message (`mkdocs serve` only)
        self.renderers = {name: getattr(self, name) for name in (*ENTRY_MARKERS, *PAGE_MARKERS)}

    def t(self, key: str, group: str = "labels") -> str:
        return self.base.t(key, self.lang, group)

    def expand(self, text: str, src_uri: str, *, for_machines: bool = False) -> str:
        """Replace `{{ marker }}` lines and claim citations, exactly those the grammar reads as
        such (core/markdown.py, which the check reads too); an entry gets its title too. For
        machines (the page's Markdown twin), a claim is cited in words instead of a link."""
        slug = entry_slug(src_uri)
        mark = self.claim_words if for_machines else self.claim_mark

        def marker(name: str) -> str | None:
            render = self.renderers.get(name)
            return None if render is None else render(slug, src_uri)

        text = markdown.render(text, marker, mark)
        if slug is not None:
            name = self.base.name(slug, self.lang)
            text = f"# {name[:1].upper()}{name[1:]}\n\n{text}"
        return text

    def claim_words(self, claim_id: str) -> str:
        label = self.t("claim_mark", "page").format(version=self.base.torch_version)
        return f"({label}: `{claim_id}`)"

    def claim_mark(self, claim_id: str) -> str:
        label = html.escape(self.t("claim_mark", "page").format(version=self.base.torch_version))
        return (f'<a class="termbase-claim" href="{self.home}claims/#{claim_id}" '
                f'title="{html.escape(self.t("claim_title", "page"))}">{label}</a>')

    # --- entries ---------------------------------------------------------------------------

    def summary(self, slug, src_uri):
        term = self.base.terms[slug]
        local = term[self.lang]
        lines = [f'!!! abstract "{self.t("short")}"', "", f"    {local['short']}", ""]
        facts = [
            f"**{self.t('category')}:** {self.base.ui['categories'][term['category']][self.lang]}",
            f"**{self.t('level')}:** {self.base.ui['levels'][term['level']][self.lang]}",
        ]
        # Each name's status (termbase/data/terms README, `names:`), linked to the terminology page.
        words = lambda lang, name: status_words(self.base, lang, term[lang], name, self.lang)  # noqa: E731
        glossary = self._to("terminology.md", src_uri) + f"#{slug}"
        facts.append(f"**{self.t('status', 'terminology')}:** *{local['term']}*: "
                     f"[{words(self.lang, local['term'])}]({glossary})")
        if local.get("synonyms"):
            facts.append(f"**{self.t('synonyms')}:** " + ", ".join(f"{w} ({words(self.lang, w)})"
                                                                    for w in local["synonyms"]))
        if local.get("avoid"):
            facts.append(f"**{self.t('avoid')}:** " + ", ".join(f"~~{w}~~ ({words(self.lang, w)})"
                                                                for w in local["avoid"]))
        # The config.json keys this entry explains (config_keys.yml): a reader who met one in a
        # model's configuration and searches for it lands here (search/names.json puts it first).
        keys = sorted(key for key, about in self.base.config_keys.items()
                      if isinstance(about, dict) and about.get("entry") == slug)
        if keys:
            facts.append(f"**{self.t('config_keys_line')}:** " + ", ".join(f"`{key}`" for key in keys))
        if local.get("english_kept"):
            facts.append(f"*{self.t('english_kept')}*")
        # The names in the other languages: a reader who types any of them in this site's search
        # finds this page (its index holds only this language's pages).
        others = [f'{self.base.language_name(other)}: *{term[other]["term"]}*{{ lang="{other}" }} '
                  f'({self._elsewhere_terminology(slug, other, words(other, term[other]["term"]))})'
                  for other in self.base.languages if other != self.lang]
        synonyms = sorted({s for other in self.base.languages if other != self.lang
                           for s in term[other].get("synonyms") or []} - set(local.get("synonyms") or []))
        # Their synonyms too, for the search index only (hidden: Material's indexer reads the HTML).
        hidden = f' <span class="termbase-search-terms" hidden>{html.escape(", ".join(synonyms))}</span>' if synonyms else ""
        facts.append(f"**{self.t('other_languages', 'page')}:** " + " · ".join(others) + hidden)
        lines += [f"    {fact}  " for fact in facts]
        return "\n".join(lines)

    def formula(self, slug, src_uri):
        words = self.base.formula_words(self.lang)
        decimal = str(self.base.t("decimal_separator", self.lang))
        formulas = "\n\n".join(f"$$\n{mathml.in_language(tex.strip(), words, decimal)}\n$$"
                                for tex in self.base.terms[slug]["formula"])
        return formulas + f"\n\n<small>[{self.t('notation_link', 'page')}]({self._to('notation.md', src_uri)})</small>"

    def code_block(self, refs) -> str:
        """One fenced block made of snippet sections, embedded by pymdownx.snippets."""
        failure = self.failed_blocks.get(tuple(refs))
        if failure:  # only under `mkdocs serve`: a build fails instead
            text = html.escape(failure).replace("\n", "<br>")
            return f'!!! failure "{self.t("block_failed", "page")}"\n\n    {text}'
        body = "\n\n\n".join(f'--8<-- "{ref}"' for ref in refs)  # PEP 8's two blank lines
        return f"```python\n{body}\n```"

    def code(self, slug, src_uri):
        blocks = [self.code_block(refs) for refs in self.base.terms[slug]["code"]]
        note = self.t("verified").format(version=self.base.torch_version)
        return "\n\n".join(blocks) + f"\n\n<small>{note}</small>" + self.notebook_links(slug)

    def notebook_links(self, slug):
        """The notebooks that run this entry's code step by step (`notebooks:` in the record)."""
        names = self.base.terms[slug].get("notebooks") or []
        project = self.base.project
        links = " · ".join(f"[{notebook_source.title(project, name, self.lang)}](../notebooks/{name}.ipynb)"
                           for name in names)
        return f"\n\n**{self.t('notebook')}:** {links}" if links else ""

    def figure(self, slug, src_uri):
        term = self.base.terms[slug]
        alt = term[self.lang]["figure_alt"]
        light = f"../assets/figures/{term['figure']}.svg"
        dark = f"../assets/figures/{term['figure']}-dark.svg"
        # Linked to itself: on a phone the full-size drawing is one tap away. One per scheme.
        return (f"[![{alt}]({light}#only-light){{ .termbase-figure }}]({light})\n"
                f"[![{alt}]({dark}#only-dark){{ .termbase-figure }}]({dark})")

    def related(self, slug, src_uri):
        return "\n".join(f"- [{self.base.name(other, self.lang)}]({other}.md)"
                         for other in self.base.terms[slug]["related"])

    def sources(self, slug, src_uri):
        return "\n".join(self.source_line(s) for s in self.base.terms[slug]["sources"])

    def source_line(self, source_id: str) -> str:
        return f"- {self.base.citation(source_id, self.lang)}"

    # --- other pages ------------------------------------------------------------------------

    def _to(self, target: str, src_uri: str) -> str:
        """A link from the page `src_uri` to the page `target` (both relative to docs/)."""
        here = PurePosixPath(src_uri).parent
        depth = len(here.parts)
        return "../" * depth + target

    def glossary_index(self, slug, src_uri):
        """Entries grouped by category; each row: the term in every language, and its level."""
        order = [self.lang] + [other for other in self.base.languages if other != self.lang]
        levels = list(self.base.ui["levels"])
        out = []
        for category, names in self.base.ui["categories"].items():
            entries = sorted(((s, t) for s, t in self.base.terms.items() if t["category"] == category),
                             key=lambda kv: (levels.index(kv[1]["level"]), kv[1][self.lang]["term"].lower()))
            if not entries:
                continue
            out.append(f"### {names[self.lang][:1].upper()}{names[self.lang][1:]}\n")
            head = ("| " + " | ".join(self.base.language_name(x) for x in order) + f" | {self.t('level')} |")
            rows = [head, "|" + "---|" * (len(order) + 1)]
            for entry, term in entries:
                # Every name is a link, each to its entry in its own language: the term linker
                # never links inside a link, so it never runs inside these tables.
                cells = [f"[{term[self.lang]['term']}]({entry}.md)"] + [self._elsewhere(entry, term[x]["term"], x)
                                                                        for x in order[1:]]
                cells.append(self.base.ui["levels"][term["level"]][self.lang])
                rows.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(rows) + "\n")
        return "\n".join(out)

    def _elsewhere(self, entry: str, name: str, lang: str) -> str:
        """A link to `entry` in another language's site (raw HTML: MkDocs checks only its own
        language's pages)."""
        own = prefix(self.base, self.lang)
        root = self.home[:len(self.home) - len(own)] if own else self.home
        return (f'<a href="{root}{prefix(self.base, lang)}glossary/{entry}/" hreflang="{lang}" lang="{lang}">'
                f"{html.escape(name)}</a>")

    def _elsewhere_terminology(self, entry: str, lang: str, text: str) -> str:
        """A link to `entry`'s row on another language's terminology page."""
        own = prefix(self.base, self.lang)
        root = self.home[:len(self.home) - len(own)] if own else self.home
        return f'<a href="{root}{prefix(self.base, lang)}terminology/#{entry}" hreflang="{lang}">{html.escape(text)}</a>'

    def terminology_table(self, slug, src_uri):
        return terminology_table(self.base, self.lang)

    def az_index(self, slug, src_uri):
        """Every name of every entry in this language's alphabetical order, filed under its
        letter: the preferred term links to its entry; a synonym or a form to avoid points to
        the preferred term ("see ...")."""
        alphabet = self.t("alphabet")
        names = []
        for entry, term in self.base.terms.items():
            local = term[self.lang]
            preferred = local["term"]
            names.append((preferred, f"[{preferred}](glossary/{entry}.md)"))
            for synonym in local.get("synonyms") or []:
                if synonym.lower() != preferred.lower():
                    names.append((synonym, f"{synonym}, *{self.t('see')}* [{preferred}](glossary/{entry}.md)"))
            for avoided in local.get("avoid") or []:
                names.append((avoided, f"~~{avoided}~~ ({self.t('avoided_form')}), *{self.t('see')}* "
                                       f"[{preferred}](glossary/{entry}.md)"))
        names.sort(key=lambda item: collation.sort_key(item[0], alphabet))
        filed: dict[str, list[str]] = {}
        for name, line in names:
            filed.setdefault(collation.initial(name, alphabet), []).append(line)
        letters = [letter.upper() for letter in alphabet] + (["#"] if "#" in filed else [])
        jump = " ".join(f"[{letter}](#{self._anchor(letter)})" if letter in filed else
                        f'<span class="termbase-az-empty">{letter}</span>' for letter in letters)
        out = [f'<nav class="termbase-az-letters" aria-label="{html.escape(self.t("letters"))}" markdown>\n{jump}\n</nav>\n']
        for letter in letters:
            if letter in filed:
                # "\#": a heading of a bare "#" would be read as its closing sequence, and be empty
                shown = "\\#" if letter == "#" else letter
                out.append(f"## {shown} {{ #{self._anchor(letter)} }}\n")
                out.append("\n".join(f"- {line}" for line in filed[letter]) + "\n")
        return "\n".join(out)

    @staticmethod
    def _anchor(letter: str) -> str:
        return "letter-" + ("digits" if letter == "#" else letter.lower())

    def categories(self, slug, src_uri):
        """A map for a first-time reader: each category, its entries from the beginner's to the
        advanced ones, each a link."""
        levels = list(self.base.ui["levels"])
        out = []
        for category, names in self.base.ui["categories"].items():
            entries = sorted(((s, t) for s, t in self.base.terms.items() if t["category"] == category),
                             key=lambda kv: (levels.index(kv[1]["level"]), kv[1][self.lang]["term"].lower()))
            if entries:
                links = ", ".join(f"[{t[self.lang]['term']}]({self._to(f'glossary/{s}.md', src_uri)})"
                                  for s, t in entries)
                out.append(f"- **{names[self.lang][:1].upper()}{names[self.lang][1:]}**: {links}")
        return "\n".join(out)

    def reading_order(self, slug, src_uri):
        """Every entry once, from the beginner's to the advanced ones (level, then category)."""
        levels = list(self.base.ui["levels"])
        categories = list(self.base.ui["categories"])
        entries = sorted(self.base.terms.items(), key=lambda kv: (
            levels.index(kv[1]["level"]), categories.index(kv[1]["category"]), kv[1][self.lang]["term"].lower()))
        lines = []
        for number, (entry, term) in enumerate(entries, 1):
            level = self.base.ui["levels"][term["level"]][self.lang]
            lines.append(f"{number}. [{term[self.lang]['term']}]({entry}.md) ({level})")
        return "\n".join(lines)

    def translation_status(self, slug, src_uri):
        """Coverage per language, then every page whose translation lags its source."""
        head = f"| {self.t('language')} | {self.t('translated')} | {self.t('outdated_count')} |\n|---|---|---|"
        rows = [f"| {self.base.language_name(other)} | {n['translated']} / {n['pages']} | {n['outdated']} |"
                for other, n in self.status.summary().items()]
        lagging = [s for s in self.status.pages if s.outdated or not s.exists]
        listing = "\n".join(
            f"- {self.base.language_name(s.lang)}: `{s.page}` "
            + (f"({self.t('outdated_one', 'page')})" if s.exists else f"({self.t('missing')})")
            for s in lagging
        ) or self.t("all_current")
        return "\n".join([head, *rows]) + "\n\n" + listing

    def outdated_notice(self, src_uri: str, english_url: str) -> str:
        """A notice on top of a translation older than its source, or ''."""
        if self.lang == self.base.default_language or not self.status.is_outdated(src_uri, self.lang):
            return ""
        # An HTML link, not Markdown: MkDocs would warn about an absolute link in a page.
        link = f'<a href="{english_url}">{html.escape(self.t("outdated_link"))}</a>'
        return f'!!! warning "{self.t("outdated")}"\n\n    {link}\n\n'

    def exports(self, slug, src_uri):
        """Links to the term base in the three exchange formats, at the language root."""
        return " · ".join(f"[{label}]({self._to('termbase.' + fmt, src_uri)})" for fmt, label in
                          (("tbx", "TBX (ISO 30042)"), ("csv", "CSV"), ("json", "JSON")))

    def verified(self, slug, src_uri):
        """The note under embedded code on pages that are not entries (FAQ)."""
        return f"<small>{self.t('verified_page').format(version=self.base.torch_version)}</small>"

    def benchmark_table(self, slug, src_uri):
        return benchmark_table(self.base, self.lang)

    def style_guide(self, slug, src_uri):
        from termbase.site.style_page import style_guide

        return style_guide(self.base, self.lang)

    def model_table(self, slug, src_uri):
        from termbase.site.model_table import model_table

        return model_table(self.base, self.lang, src_uri)

    def config_explainer(self, slug, src_uri):
        from termbase.site.explainer import config_explainer

        return config_explainer(self.base, self.lang, src_uri)

    def config_keys(self, slug, src_uri):
        from termbase.site.model_table import config_keys

        return config_keys(self.base, self.lang, src_uri)

    def claims(self, slug, src_uri):
        """Every claim: the sentences of this language that cite it, and the test that proves it."""
        project = self.base.project
        cited: dict[str, list[tuple[str, str]]] = {}
        docs = project.docs
        for path in sorted(docs.rglob(f"*.{self.lang}.md")):
            neutral = path.relative_to(docs).as_posix().rsplit(".", 2)[0] + ".md"
            abbreviations = self.base.style(self.lang).get("abbreviations") or ()
            for _, claim_id, sentence in claims.cited_sentences(path.read_text(encoding="utf-8"), abbreviations):
                # The sentence's own links are relative to its page: here they are its words.
                sentence = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", sentence)
                cited.setdefault(claim_id, []).append((neutral, sentence))
        out = []
        for claim_id, found in sorted(claims.tests(project).items()):
            test = found[0]
            source = test.path.read_text(encoding="utf-8").splitlines()[test.first - 1:test.last]
            where = [f"- [{neutral}]({self._to(neutral, src_uri)}): {sentence}"
                     for neutral, sentence in cited.get(claim_id, [])]
            out.append(f"### `{claim_id}` {{ #{claim_id} }}\n\n" + "\n".join(where)
                       + f"\n\n`{project.shown(test.path)}`, `{test.function}`:\n\n```py\n"
                       + "\n".join(source) + "\n```\n")
        return "\n".join(out)


# Pygments wraps every name and every run of spaces in a span; Material colours names (`.n`)
# with the plain code colour and leaves whitespace (`.w`) unstyled, so these spans only add
# bytes: about a fifth of an entry page.
PLAIN_CODE_SPAN = re.compile(r'<span class="[nw]">([^<]*)</span>')


def slim_code(page_html: str) -> str:
    return PLAIN_CODE_SPAN.sub(r"\1", page_html)


# Inline code only: a block's <code> follows <pre> (and Pygments' empty <span></span>).
INLINE_CODE = re.compile(r"(?<!<pre>)(?<!</span>)<code>([^<]+)</code>")
JOINT = re.compile(r"(?<=[._/])(?=\w)|(?<=[a-z])(?=[A-Z])")


def breakable_code(page_html: str) -> str:
    """Let a long inline name such as `torch.nn.functional.scaled_dot_product_attention` wrap
    after a dot, underscore or slash, or between the words of `MultiheadAttention` (<wbr>),
    where a reader expects it; site.css lets inline code break nowhere else unless a single
    part is wider than the line. What is copied or searched is the same text: <wbr> holds none.
    A short span with no such place and no space, such as `@claim("<id>")`, is kept on one line
    (class `termbase-whole`): Chromium would otherwise break it between a quote and a `<`."""
    return INLINE_CODE.sub(_breakable, page_html)


# Up to this many characters a span kept whole still fits a phone's line (about 8 px each).
WHOLE_UP_TO = 24


def _breakable(m: re.Match) -> str:
    code, text = m[1], html.unescape(m[1])
    if (JOINT.search(code) is None and len(text) <= WHOLE_UP_TO
            and re.search(r"\W", text) and not re.search(r"\s", text)):
        return f'<code class="termbase-whole">{code}</code>'  # a plain word breaks nowhere anyway
    return "<code>" + JOINT.sub("<wbr>", code) + "</code>"
