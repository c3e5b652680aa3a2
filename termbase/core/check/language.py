"""Rules for the prose of each language: forms to avoid (the term base's and the style
guide's), the style guide's typography, spelling (hunspell), and the names of linked concepts.

They read every place a reader sees text in a language: pages, term records, interface
strings, notebook prose and figure descriptions, outside code, math, quoted words and titles.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from termbase.core import markdown, notebook_source, prose, spelling
from termbase.core.check import filecache, wording, yamlfile
from termbase.core.check.formulas import check_formula
from termbase.core.check.records import PLACEHOLDER
from termbase.core.model import TermBase

WORD = re.compile(r"[\w-]+")
WORDS = re.compile(r"\w+")
# Synonyms are admitted names (many are the English term): neither spelled nor avoided here.
RECORD_PROSE = ("term", "short", "figure_alt")
SPELLED = ("short", "figure_alt")
SUGGESTED = 12  # a kept English term is not spelled as the language
ANSWERS = "spelling"  # under the project's cache folder: hunspell's answers, kept by termbase/core/spelling.py
# Characters that look like (or hide) a space in an editor but show as something else, or as
# nothing, on the page: the fix is the no-break space the style guides ask for, or a space.
NOT_A_SPACE = {"\u237d": "⍽ (U+237D, a visible symbol)", "\u2423": "␣ (U+2423, a visible symbol)",
               "\u200b": "a zero-width space (U+200B)", "\ufeff": "a byte-order mark (U+FEFF)",
               "\u2060": "a word joiner (U+2060)"}


@dataclass
class Line:
    path: Path
    line: int
    text: str  # prose, quoted words kept (typography rules need the quotes)
    markdown: str = ""  # the line as written, for the link rule
    plain: str = ""  # prose without quoted words, italics or struck forms: avoided forms, spelling
    spelled: bool = True
    source: str = ""  # text outside the pages (records, data files, notebooks): its formulas are checked here


def _with_plain(lines: list[Line]) -> list[Line]:
    """Fill in `plain` for the lines of one file, quotations and italics spanning lines included."""
    texts = prose.unitalic(prose.unquoted([item.text for item in lines]), [item.line for item in lines])
    for item, text in zip(lines, texts):
        item.plain = prose.prose(text, quotes=False, italics=False)
    return lines


@dataclass(frozen=True)
class Avoid:
    phrase: str
    write: str
    why: str  # e.g. "style guide: kernel" or "term base: attention-mask"
    pattern: re.Pattern


@functools.lru_cache(maxsize=4096)
def _page_lines(text: str) -> tuple[tuple[int, str, str, str], ...]:
    """(line, prose, markdown, plain) of each prose line of a page: a function of its text alone,
    kept per text in the process (a rebuild under `mkdocs serve`, or a check of a copy, reads
    mostly the same pages again)."""
    lines = _with_plain([Line(Path(), number, prose.prose(raw, quotes=True), raw)
                         for number, raw in prose.markdown_lines(text) if not PLACEHOLDER.search(raw)])
    return tuple((item.line, item.text, item.markdown, item.plain) for item in lines)


def _stored_page_lines(text: str, store) -> tuple[tuple[int, str, str, str], ...]:
    """`_page_lines`, also kept between processes in the check's store (check/filecache.py)
    under the page's text and the check's code: a third of the language rules' time. Kept
    compressed: the three forms of a line are nearly the same text (1.3 MB for the real site's
    216 pages, 5.3 MB as plain JSON)."""
    if store is None:
        return _page_lines(text)
    key = filecache.digest("prose lines", filecache.code_digest(), text)
    found = store.get(key)
    try:
        lines = json.loads(zlib.decompress(base64.b64decode(found["zlib"])))
        if all(isinstance(item, list) and len(item) == 4 and isinstance(item[0], int)
               and all(isinstance(part, str) for part in item[1:]) for item in lines):
            return tuple(tuple(item) for item in lines)
    except (TypeError, KeyError, ValueError, zlib.error):  # none yet, or not what this code writes
        pass
    lines = _page_lines(text)
    packed = zlib.compress(json.dumps([list(item) for item in lines], ensure_ascii=False).encode("utf-8"))
    store.put(key, {"zlib": base64.b64encode(packed).decode("ascii")})
    return lines


def _lines(base: TermBase, pages, lang: str, store=None) -> list[Line]:
    out = []
    for page in pages.values():
        if page.lang == lang:
            out += [Line(page.path, *fields) for fields in _stored_page_lines(page.text, store)]
    for path in base.term_files():
        record, lines = yamlfile.load(path, yamlfile.Ignore())
        local = (record or {}).get(lang) if isinstance(record, dict) else None
        if not isinstance(local, dict):
            continue
        for key in RECORD_PROSE:
            for key_path, value in yamlfile.walk(local.get(key), (lang, key)):
                if PLACEHOLDER.search(value):
                    continue  # `termbase new`'s text, reported once as a placeholder
                item = Line(path, yamlfile.line_of(lines, key_path), prose.prose(value, quotes=True), source=value)
                item.spelled = key in SPELLED
                out += _with_plain([item])
    ui_path = base.project.data_dir / "ui.yml"
    ui, ui_lines = yamlfile.load(ui_path, yamlfile.Ignore())
    for key_path, value in yamlfile.walk(ui or {}):
        if key_path and key_path[-1] == lang and key_path[0] != "language_name" and "alphabet" not in key_path:
            out += _with_plain([Line(ui_path, yamlfile.line_of(ui_lines, key_path), prose.prose(value, quotes=True))])
    keys_path = base.project.data_dir / "config_keys.yml"
    if keys_path.is_file():
        keys, key_lines = yamlfile.load(keys_path, yamlfile.Ignore())
        for key, about in ((keys or {}).get("keys") or {}).items() if isinstance(keys, dict) else ():
            if isinstance(about, dict) and isinstance(about.get(lang), str):
                out += _with_plain([Line(keys_path, yamlfile.line_of(key_lines, ("keys", key, lang)),
                                         prose.prose(about[lang], quotes=True), source=about[lang])])
    # The models page's notes (`note` in the default language, `note_<lang>` in the others).
    models_path = base.project.data_dir / "models.yml"
    if models_path.is_file():
        models, model_lines = yamlfile.load(models_path, yamlfile.Ignore())
        field = "note" if lang == base.default_language else f"note_{lang}"
        rows = (models or {}).get("models") if isinstance(models, dict) else None
        for index, row in enumerate(rows if isinstance(rows, list) else []):
            for column, cell in (row.items() if isinstance(row, dict) else ()):
                if isinstance(cell, dict) and isinstance(cell.get(field), str):
                    out += _with_plain([Line(models_path, yamlfile.line_of(model_lines, ("models", index, column, field)),
                                             prose.prose(cell[field], quotes=True), source=cell[field])])
    for path in notebook_source.source_paths(base.project):
        source = notebook_source.read_source(path)
        for cell_lang, first, text in notebook_source.prose_cells(source):
            if cell_lang == lang:
                out += _with_plain([Line(path, first + number - 1, prose.prose(raw, quotes=True), raw, source=raw)
                                    for number, raw in prose.markdown_lines(text)])
        for alt_lang, line, text in notebook_source.alt_texts(source):
            if alt_lang == lang:
                out += _with_plain([Line(path, line, prose.prose(text, quotes=True))])
    return out


def avoided_forms(base: TermBase, lang: str) -> list[Avoid]:
    forms = []
    for slug, term in base.terms.items():
        local = term.get(lang) if isinstance(term, dict) else None
        for phrase in (local or {}).get("avoid") or [] if isinstance(local, dict) else []:
            forms.append((str(phrase), str(local.get("term", "")), f"term base: {slug}"))
    for rendering in base.style(lang).get("renderings") or []:
        for item in rendering.get("avoid") or []:
            if isinstance(item, dict):
                phrase, write = next(iter(item.items()))
            elif ": " in str(item):  # "phrase: replacement" written as one quoted string
                phrase, write = str(item).split(": ", 1)
            else:
                phrase, write = item, rendering.get("write")
            forms.append((str(phrase), str(write), f"style guide: {rendering.get('id', rendering.get('write'))}"))
    return [Avoid(p, w, why, wording.gapped(p) or re.compile(rf"(?<![\w-]){re.escape(p)}(?![\w-])", re.I))
            for p, w, why in forms]


def _english_name(lang: str) -> str:
    try:
        from babel import Locale

        return Locale.parse(lang).get_display_name("en")
    except Exception:  # babel missing or an unknown code: the code itself is clear enough
        return f"'{lang}'"


def check_language(base: TermBase, pages, report, *, spell: bool = True, store=None, languages=None) -> None:
    """`store`: a check/filecache.Store that keeps each page's prose lines (None: they are
    kept in this process only). `languages`: those to check (None: all)."""
    texts = {page.path: page.text for page in pages.values()}
    # A page still holding placeholders is reported as such; it says what it proposes later.
    scaffolded = {path for path, text in texts.items() if PLACEHOLDER.search(text)}
    for lang in base.languages if languages is None else languages:
        lines = _lines(base, pages, lang, store)
        style = base.style(lang)
        forms = avoided_forms(base, lang)
        patterns = []
        for rule in style.get("typography") or []:
            check = rule.get("check") if isinstance(rule, dict) else None
            if check and check.get("pattern"):
                patterns.append((re.compile(check["pattern"]), check.get("message", rule.get("rule", "")),
                                 check.get("fix", "see the style guide")))
        # One pattern for all the forms of the language: lines x forms would be slow. Forms with
        # a gap ("give … til") span words, often lines: they are matched per paragraph below.
        decimal = str(base.t("decimal_separator", lang))
        spanning = [form for form in forms if "…" in form.phrase]
        forms = [form for form in forms if "…" not in form.phrase]
        by_phrase = {form.phrase.lower(): form for form in forms}
        phrases = sorted(by_phrase, key=len, reverse=True)  # the longest form where two start alike
        anyone = forms_regex(phrases) if forms else None
        may_match = _words_filter(phrases)
        for item in lines:
            for match in anyone.finditer(item.plain) if anyone and may_match(item.plain) else ():
                form = by_phrase[phrases[int(match.lastgroup[1:])]]  # not by its text: re.I has ſ for s
                found = item.text[match.start():match.end()]
                report.add(item.path, item.line, f'"{found}"', f'write "{form.write}" ({form.why})')
            for char, name in NOT_A_SPACE.items():
                if char in item.text:
                    report.add(item.path, item.line, f"{name} in the text",
                               "write a no-break space (U+00A0) where a space must not break, else a space")
            for pattern, message, fix in patterns:
                if pattern.search(item.text):
                    report.add(item.path, item.line, message, f"{fix} (style guide: typography)")
            if item.markdown:
                _linked_names(base, item, lang, report)
            if item.source:
                _formulas(item, decimal, report)
        proposed, origin = _proposed_pages(base, lang) - scaffolded, f"## {base.t('origin', lang, 'sections')}"
        _wording(style, spanning, lines, report, proposed,
                 {path: wording.line_of(texts[path], origin) for path in proposed & texts.keys()})
        if spell and style.get("dictionary"):
            _spelling(base, lang, style["dictionary"], lines, report)


def forms_regex(phrases: list[str]) -> re.Pattern:
    """One case-blind regex for the forms to avoid, each a whole word (a hyphen joins words);
    group `f<i>` is phrases[i]. Where two forms start at the same place, the first listed wins."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(f"(?P<f{i}>{re.escape(p)})" for i, p in enumerate(phrases))
                      + r")(?![\w-])", re.I)


# re.I takes İ and ı for i, where casefold() keeps them apart; and U+0345 is not a word character
# to re, though it casefolds to one. tests/site/test_avoided_forms.py checks every character of
# Unicode for others: with these, any two characters re.I takes as the same fold alike.
FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})
UNFOLDED = ("\u0345",)  # a line that holds one goes through the filter


def fold(text: str) -> str:
    return text.translate(FOLD).casefold()


def _words_filter(phrases: list[str]):
    """A test that is true of every line where one of `phrases` can match as `forms_regex`
    matches: the line then holds each word of the phrase as a word, both folded (`fold`). Most
    lines hold no phrase's words, and the regex of a language's 100-200 phrases on each of its
    9,000 lines took a second; the test and the regex on the lines it lets through take a
    twentieth of that and find the same matches (tests/site/test_avoided_forms.py)."""
    by_word: dict[str, list[frozenset[str]]] = {}
    anywhere = False  # a phrase without a word: the regex runs on every line
    for phrase in phrases:
        words = frozenset(WORDS.findall(fold(phrase)))
        if words:
            by_word.setdefault(max(words, key=len), []).append(words)
        else:
            anywhere = True

    def may_match(text: str) -> bool:
        if anywhere or any(char in text for char in UNFOLDED):
            return True
        present = set(WORDS.findall(fold(text)))
        return any(words <= present for word in present & by_word.keys() for words in by_word[word])

    return may_match


def _formulas(item: Line, decimal: str, report) -> None:
    """The inline formulas of text outside the pages (check/pages.py reads the pages' own): they
    render, and their numbers are written as the site writes numbers (check/formulas.py)."""
    for tex in prose.inline_formulas(item.source):
        check_formula(report, item.path, item.line, "a formula", tex, decimal)


def _proposed_pages(base: TermBase, lang: str) -> set[Path]:
    """The pages, in `lang`, of the entries whose preferred name in `lang` is proposed."""
    out = set()
    for slug, record in base.terms.items():
        local = record.get(lang) if isinstance(record.get(lang), dict) else {}
        names = local.get("names") if isinstance(local.get("names"), dict) else {}
        fields = names.get(local.get("term"))
        if isinstance(fields, dict) and fields.get("proposed"):
            out.add(base.project.docs / "glossary" / f"{slug}.{lang}.md")
    return out


def _wording(style: dict, spanning: list[Avoid], lines: list[Line], report, proposed: set[Path],
             origins: dict | None = None) -> None:
    """The rules that read whole paragraphs (termbase/core/check/wording.py)."""
    checks = [check for check in (wording.unit_spacing(style), wording.count_forms(style),
                                  wording.article_agreement(style), wording.usage_claims(style, proposed))
              if check]
    paragraphs = wording.paragraphs(lines)
    for paragraph in paragraphs:
        for check in checks:
            check(paragraph, report)
    unsaid = wording.proposal_unsaid(style, proposed)
    if unsaid:
        unsaid(paragraphs, report, origins or {})
    written = wording.paragraphs([item for item in lines if item.markdown], "markdown")
    for paragraph in (written + wording.paragraphs([item for item in lines if not item.markdown], "plain")
                      if spanning else ()):
        for form in spanning:
            for offset, sentence in paragraph.sentences():
                for match in form.pattern.finditer(sentence):
                    report.add(paragraph.path, paragraph.line_at(offset + match.start()), f'"{match.group()}"',
                               f'write "{form.write}" ({form.why})')


def _linked_names(base: TermBase, item: Line, lang: str, report) -> None:
    """A link to an entry names the concept by its term or a listed synonym (inflected forms
    are fine: every word of the name starts a word of the link text, in order)."""
    for link in markdown.LINK.finditer(item.markdown):
        text = link.group("text")
        resolved = (item.path.parent / link.group("target")).resolve()
        slug = markdown.entry_slug(_relative(base, resolved) or "")
        if slug not in base.terms or not text or text.startswith(("`", "!")):
            continue
        local = base.terms[slug].get(lang) or {}
        names = [local.get("term", ""), *(local.get("synonyms") or [])]
        words = [w.lower() for w in WORD.findall(text)]
        if not any(_contains(words, [w.lower() for w in WORD.findall(str(name))]) for name in names if name):
            report.add(item.path, item.line, f"the link \"{text}\" to {slug} does not name the concept",
                       f"use its term \"{local.get('term')}\" or a synonym listed in its record")


def _relative(base: TermBase, path: Path) -> str | None:
    try:
        return path.relative_to(base.project.docs.resolve()).as_posix()
    except ValueError:
        return None


def _same_word(text_word: str, name_word: str) -> bool:
    """An inflected form of the name's word: plural, definite or gendered endings differ in
    at most the last two letters (query/queries, nøgle/nøglerne, máscara/máscaras)."""
    stem = min(len(name_word), max(3, len(name_word) - 2))
    return text_word[:stem] == name_word[:stem] and len(text_word) >= stem


def _contains(words: list[str], name: list[str]) -> bool:
    if not name:
        return False
    for start in range(len(words) - len(name) + 1):
        if all(_same_word(words[start + i], part) for i, part in enumerate(name)):
            return True
    return False


def _spelling(base: TermBase, lang: str, dictionary: str, lines: list[Line], report) -> None:
    missing = spelling.available(dictionary)
    if missing:
        report.notes.append(f"spelling of '{lang}' not checked: {missing}")
        return
    list_path = base.project.data_dir / "words" / f"{lang}.txt"
    known = spelling.word_list(list_path)
    personal = tuple(sorted(known))
    where: dict[str, list[Line]] = {}
    for item in lines:
        for token in spelling.words(item.plain) if item.spelled else ():
            where.setdefault(token, []).append(item)
            if token.endswith("."):
                where.setdefault(token[:-1], []).append(item)
    every_part = {part for word in where for part in spelling.parts(word)}
    answers = base.project.cache_dir / ANSWERS  # hunspell asked about each word once, across runs
    unknown = spelling.unknown(dictionary, frozenset(where) | every_part, personal, answers)

    def wrong(word: str) -> bool:
        # A compound is right when hunspell knows it whole (Danish compounds, the word list's
        # "decoder-only") or knows each of its parts ("padding-masken", "gray-scale").
        if word not in unknown:
            return False
        return not spelling.parts(word) or any(part in unknown for part in spelling.parts(word))

    # A word before a full stop is fine if the dictionary knows it with the stop (an
    # abbreviation such as "dvs.") or without it (the end of a sentence).
    flagged = sorted((w for w in where if not w.endswith(".") and wrong(w) and
                      ((w + ".") not in where or wrong(w + "."))),
                     key=lambda w: (str(where[w][0].path), where[w][0].line))
    # hunspell's suggestions are slow to compute: for the first few words only.
    guesses = spelling.suggestions(dictionary, tuple(flagged[:SUGGESTED]), personal)
    name = _english_name(lang)
    article = "an" if name[0] in "AEIOU" else "a"
    for word in flagged:
        suggested = guesses.get(word)
        fix = f'did you mean "{suggested[0]}"? (or add it to {base.project.shown(list_path)})' if suggested \
            else f"check the spelling, or add it to {base.project.shown(list_path)}"
        reported = set()
        for item in where[word]:
            if (item.path, item.line) not in reported:
                reported.add((item.path, item.line))
                report.add(item.path, item.line, f'"{word}" is not {article} {name} word', fix)
    # A listed word is needed when the text uses it (alone or in a compound) and the dictionary
    # alone does not know it: any other entry could hide a misspelling, so it must go.
    needed = spelling.unknown(dictionary, frozenset(w for w in where if not w.endswith(".")) | every_part,
                              folder=answers)
    needed_lower = {w.lower() for w in needed}
    for word, number in known.items():
        if word not in needed and word.lower() not in needed_lower:
            report.add(list_path, number, f'"{word}" is not needed: hunspell knows it, or no text uses it',
                       "remove it from the word list")
