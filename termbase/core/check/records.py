"""Rules for the data: interface strings (ui.yml), sources and term records."""

from __future__ import annotations

import difflib
import re

from termbase.core import mathml, terminology
from termbase.core.markdown import SLUG
from termbase.core.check import yamlfile
from termbase.core.check.formulas import RECORD_SIGN, check_formula
from termbase.core.model import TermBase
from termbase.core.project import mkdocs_config, nav_labels

PLACEHOLDER = re.compile(r"TODO\(termbase\)")
REQUIRED = ("category", "level", "related", "sources", "code", "formula")
LOCAL_REQUIRED = ("term", "short")
UI_REQUIRED = ("site_name", "language_name", "nav", "sections", "labels", "categories", "levels")


def did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else "use the slug of an existing entry"


def check_data(base: TermBase, report) -> bool:
    """ui.yml and sources.yml (the style guides: styles.py); False when ui.yml is unusable."""
    data = base.project.data_dir
    ui, lines = yamlfile.load(data / "ui.yml", report)
    if not isinstance(ui, dict):
        if ui is not None:
            report.add(data / "ui.yml", 1, "ui.yml is not a mapping", "keep its groups: " + ", ".join(UI_REQUIRED))
        return False
    for group in UI_REQUIRED:
        if group not in ui:
            report.add(data / "ui.yml", 1, f"group '{group}' is missing", f"add `{group}:` with strings per language")
            return False
    default = base.default_language
    for group, entries in ui.items():
        if group in ("site_name", "language_name"):
            _languages_of(base, report, lines, (group,), entries, required=base.languages)
        elif group == "nav":  # English is the key itself
            for label, per in (entries or {}).items():
                _languages_of(base, report, lines, (group, label), per, required=base.project.other_languages)
        elif group == "formula_text":
            _formula_text(base, report, lines, entries)
        elif group == "agreement":
            _agreement(base, report, lines, entries)
        elif group == "formula_labels" and not (isinstance(entries, list)
                                                and all(isinstance(x, str) for x in entries)):
            report.add(data / "ui.yml", yamlfile.line_of(lines, (group,)), "'formula_labels' is not a list of strings",
                       "write `formula_labels: [model, dtype, ...]`")
        elif isinstance(entries, dict):
            for key, per in entries.items():
                _languages_of(base, report, lines, (group, key), per, required=base.languages, empty_ok=(default,))
    config_nav = mkdocs_config(base.project).get("nav")
    for label in nav_labels(config_nav):
        if label not in (ui.get("nav") or {}):
            report.add(base.project.root / "mkdocs.yml", 1, f"nav label '{label}' has no translation",
                       f"add `{label}: {{{', '.join(f'{x}: ...' for x in base.project.other_languages)}}}` "
                       "under `nav:` in termbase/data/ui.yml")
    before = len(report)
    sources, source_lines = yamlfile.load(data / "sources.yml", report)
    if len(report) > before:
        return False  # unreadable sources: every record cites them, so they are reported alone
    for sid, src in (sources or {}).items():
        if not str((src or {}).get("url", "")).startswith("https://"):
            report.add(data / "sources.yml", source_lines.get((sid,), 1), f"source '{sid}' has no https URL",
                       "add `url: https://...` pointing at the paper or documentation")
        title = (src or {}).get("title")
        if not title:
            report.add(data / "sources.yml", source_lines.get((sid,), 1), f"source '{sid}' has no title",
                       "add `title:` as the source itself writes it")
        elif isinstance(title, dict) and (not title.get(base.default_language)
                                          or set(title) - set(base.languages)):
            report.add(data / "sources.yml", source_lines.get((sid, "title"), 1),
                       f"source '{sid}' has titles for {sorted(title)}",
                       f"give `{base.default_language}:` and only the site's languages "
                       f"({', '.join(base.languages)}), or one title for all")
        elif isinstance(title, dict) and [lang for lang, text in title.items()
                                          if lang != base.default_language and text == title[base.default_language]]:
            report.add(data / "sources.yml", source_lines.get((sid, "title"), 1),
                       f"source '{sid}' repeats its English title as a translation",
                       "a name that is not translated is one title for all: `title: '...'`")
    return True


def _formula_text(base, report, lines, entries) -> None:
    """`formula_text`: English word -> {lang: word}, for every other language, each a string a
    formula can hold (core/mathml.py NOT_IN_WORDS)."""
    path = base.project.data_dir / "ui.yml"
    if not isinstance(entries, dict):
        report.add(path, yamlfile.line_of(lines, ("formula_text",)), "'formula_text' is not a mapping",
                   "write one `\"<English word>\": {es: ..., da: ...}` line per word")
        return
    for word, per in entries.items():
        _languages_of(base, report, lines, ("formula_text", word), per, required=base.project.other_languages)
        for lang, text in (per.items() if isinstance(per, dict) else ()):
            if not isinstance(text, str) or set(text) & mathml.NOT_IN_WORDS:
                report.add(path, yamlfile.line_of(lines, ("formula_text", word, lang)),
                           f"'formula_text.\"{word}\".{lang}' is not plain words: {text!r}",
                           "write it as a quoted string without { } \\ $ < > & % # ^ _ ~")


def _agreement(base, report, lines, entries) -> None:
    """`agreement`: lang -> gender, or gender and `plural` -> {status word: the form that agrees
    with such a name}. A word that is not one of the language's status words would never be used."""
    path = base.project.data_dir / "ui.yml"
    if not isinstance(entries, dict):
        report.add(path, yamlfile.line_of(lines, ("agreement",)), "'agreement' is not a mapping",
                   "write `agreement: {es: {feminine: {admitido: admitida}}}`")
        return
    terminology_ui = base.ui.get("terminology") or {}
    for lang, genders in entries.items():
        if lang not in terminology.GENDERS or not isinstance(genders, dict):
            report.add(path, yamlfile.line_of(lines, ("agreement", lang)),
                       f"'agreement.{lang}' is not a language with genders mapped to forms",
                       f"use one of {', '.join(terminology.GENDERS)}, each `<gender>: {{word: form}}`")
            continue
        words = {per.get(lang) for per in terminology_ui.values() if isinstance(per, dict)}
        kinds = [terminology.agreement_kind(g, n) for g in terminology.GENDERS[lang] for n in terminology.NUMBERS]
        for gender, forms in genders.items():
            key = ("agreement", lang, gender)
            if gender not in kinds or not isinstance(forms, dict):
                report.add(path, yamlfile.line_of(lines, key), f"'agreement.{lang}.{gender}' is not a gender of "
                           f"{lang} mapped to forms", f"use one of {', '.join(kinds)}")
                continue
            for word, form in forms.items():
                if word not in words or not isinstance(form, str) or not form:
                    report.add(path, yamlfile.line_of(lines, key + (word,)),
                               f"'agreement.{lang}.{gender}.{word}' does not give a form for one of the "
                               f"{lang} status words of `terminology:`",
                               f"key it by a {lang} word of `terminology:` and give the agreeing form")


def _languages_of(base, report, lines, key, per, required, empty_ok=()):
    path = base.project.data_dir / "ui.yml"
    line = yamlfile.line_of(lines, key)
    if not isinstance(per, dict):
        report.add(path, line, f"'{'.'.join(key)}' is not a mapping of languages",
                   f"write `{{{', '.join(f'{x}: ...' for x in required)}}}`")
        return
    for lang in required:
        value = per.get(lang)
        if value is None or (value == "" and lang not in empty_ok):
            report.add(path, line, f"'{'.'.join(key)}' has no '{lang}' string", f"add `{lang}: ...` to it")


def check_records(base: TermBase, report) -> dict:
    """Every term record: fields, references, formulas, placeholders, one name per concept."""
    ui = base.ui
    sources = base.sources or {}
    formula_words = _FormulaWords(base)
    records = {}
    for path in base.term_files():
        record, lines = yamlfile.load(path, report)
        if record is None:
            continue
        if not isinstance(record, dict):
            report.add(path, 1, "the record is not a mapping", "see termbase/data/terms/README.md for the layout")
            continue
        records[path.stem] = (path, record, lines)
    seen = {lang: {} for lang in base.languages}
    config_keys = {terminology.normalized(str(key)) for key in base.config_keys}  # no name may be one
    for slug, (path, term, lines) in records.items():
        def at(*keys):
            return yamlfile.line_of(lines, keys)

        if not SLUG.fullmatch(slug):
            report.add(path, 1, f"slug '{slug}' is not lowercase-with-hyphens", "rename the file, e.g. 'causal-mask.yml'")
        for field in REQUIRED:
            if field not in term:
                report.add(path, 1, f"field '{field}' is missing", f"add `{field}:` (see termbase/data/terms/README.md)")
        choices = {("category",): ui["categories"], ("level",): ui["levels"]}
        for key_path, value in yamlfile.walk(term):
            if PLACEHOLDER.search(value):  # one line per placeholder, and no other rule on it
                fix = f"use one of: {', '.join(choices[key_path])}" if key_path in choices else "write it"
                report.add(path, at(*key_path), f"'{'.'.join(map(str, key_path))}' is still a placeholder", fix)
        unfilled = {key for key in ("category", "level") if PLACEHOLDER.search(str(term.get(key, "")))}
        if "category" in term and "category" not in unfilled and term["category"] not in ui["categories"]:
            report.add(path, at("category"), f"unknown category '{term['category']}'", f"use one of: {', '.join(ui['categories'])}")
        if "level" in term and "level" not in unfilled and term["level"] not in ui["levels"]:
            report.add(path, at("level"), f"unknown level '{term['level']}'", f"use one of: {', '.join(ui['levels'])}")
        for index, other in enumerate(term.get("related") or []):
            if other not in records:
                report.add(path, at("related", index), f"related term '{other}' does not exist", did_you_mean(other, records))
        for index, sid in enumerate(term.get("sources") or []):
            if sid not in sources:
                close = difflib.get_close_matches(str(sid), list(sources), n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'?" if close else "add it to termbase/data/sources.yml with title and url"
                report.add(path, at("sources", index), f"source '{sid}' is not in termbase/data/sources.yml", hint)
        for index, tex in enumerate(term.get("formula") or [], 1):
            if not isinstance(tex, str):
                report.add(path, at("formula", index - 1), f"formula {index} is not text", "write the LaTeX as a string")
            elif not PLACEHOLDER.search(tex):
                check_formula(report, path, at("formula", index - 1), f"formula {index}", tex, ".", RECORD_SIGN)
                formula_words.check(report, path, at("formula", index - 1), index, tex.strip())
        for name in term.get("notebooks") or []:
            if not (base.project.docs / "notebooks" / f"{name}.py").is_file():
                report.add(path, at("notebooks"), f"notebook docs/notebooks/{name}.py does not exist",
                           "use the name of a notebook in docs/notebooks/, without .py")
        if term.get("figure"):
            for variant in ("", "-dark"):
                fig = base.project.docs / "assets" / "figures" / f"{term['figure']}{variant}.svg"
                if not fig.is_file():
                    report.add(path, at("figure"), f"figure {base.project.shown(fig)} does not exist",
                               "draw it with `python -m termbase figures` or remove `figure:`")
        for lang in base.languages:
            local = term.get(lang)
            if not isinstance(local, dict):
                report.add(path, 1, f"no '{lang}' record", f"add `{lang}:` with term and short")
                continue
            for field in LOCAL_REQUIRED:
                if field not in local:
                    report.add(path, at(lang), f"'{lang}.{field}' is missing", f"add `{field}:` under `{lang}:`")
            if term.get("figure") and not local.get("figure_alt"):
                report.add(path, at(lang), f"a figure but no '{lang}.figure_alt'", "describe the picture in that language")
            if "$" in str(local.get("short", "")):
                report.add(path, at(lang, "short"), f"'{lang}.short' has math: tooltips show it as raw text",
                           "write it in words, or as `code`")
            name = str(local.get("term", "")).lower()
            if name and name in seen[lang]:
                report.add(path, at(lang, "term"), f"term '{name}' ({lang}) is also the term of '{seen[lang][name]}'",
                           "terms must be unique per language")
            seen[lang][name] = slug
            _check_names(base, report, path, lang, local, at, config_keys)
    _check_attestations(base, report, {slug: record for slug, (_, record, _) in records.items()})
    if len(records) == len(base.term_files()):  # a record that cannot be read uses words too
        formula_words.unused(report)
    return {slug: record for slug, (_, record, _) in records.items()}


class _FormulaWords:
    """A record's formula is shown in every language: each `\\text{...}` in it is either a word
    with its translations (ui.yml `formula_text`) or a label kept in every language
    (`formula_labels`), and the formula still parses with each language's words. Both lists and
    each language's words are read once per check; `unused` names the entries no formula used."""

    def __init__(self, base: TermBase):
        self.base = base
        table, labels = base.ui.get("formula_text"), base.ui.get("formula_labels")
        self.table = table if isinstance(table, dict) else {}
        self.labels = labels if isinstance(labels, list) else []
        self.words = {lang: base.formula_words(lang) for lang in base.project.other_languages}
        self.decimal = {lang: str(base.t("decimal_separator", lang)) for lang in self.words}
        self.used: set[str] = set()

    def check(self, report, path, line, index, tex) -> None:
        if mathml.odd_text(tex):
            report.add(path, line, f"formula {index} writes words another way than \\text{{...}} (\\textbf, \\mbox, "
                       "braces inside \\text): they would stay in English on every page",
                       "write each word as \\text{...} with no braces inside (ui.yml `formula_text` translates it)")
        for run in dict.fromkeys(mathml.text_runs(tex)):  # each once per formula
            self.used.add(run)
            if run not in self.table and run not in self.labels:
                report.add(path, line, f"formula {index}: \\text{{{run}}} is shown as it is in every language",
                           f"add `\"{run}\": {{{', '.join(f'{x}: ...' for x in self.words)}}}` "
                           "under `formula_text:` in termbase/data/ui.yml, or, for a name that stays the same in "
                           "every language, add it to `formula_labels:` there")
        if mathml.problem(tex):
            return  # reported as such
        for lang, words in self.words.items():
            reason = mathml.problem(mathml.in_language(tex, words, self.decimal[lang]))
            if reason:
                report.add(path, line, f"formula {index} does not parse with the {lang} words of `formula_text`: "
                           f"{reason}", "fix those words in termbase/data/ui.yml (no braces, no backslashes)")

    def unused(self, report) -> None:
        path = self.base.project.data_dir / "ui.yml"
        _, lines = yamlfile.load(path, yamlfile.Ignore())  # its problems: `check_data`
        for word in self.table:
            if word not in self.used:
                report.add(path, yamlfile.line_of(lines, ("formula_text", word)),
                           f"'{word}' is in no formula of a term record", "remove it from `formula_text:`")
        for i, label in enumerate(self.labels):
            if label not in self.used:
                report.add(path, yamlfile.line_of(lines, ("formula_labels", i)),
                           f"'{label}' is in no formula of a term record", "remove it from `formula_labels:`")


def _check_names(base, report, path, lang, local, at, config_keys: set[str]) -> None:
    """Every name of a language block (term, synonyms, avoid) is described once under `names:`,
    with an explicit status that matches where it sits, a term type, and the gender where the
    language has one; a Spanish or Danish preferred term is attested or marked proposed, and no
    attested name is marked proposed. A config.json key is never a name (`config_keys`: the keys of
    config_keys.yml, normalized as search compares them)."""
    meta = local.get("names")
    if meta is not None and not isinstance(meta, dict):
        report.add(path, at(lang, "names"), f"'{lang}.names' is not a mapping",
                   "write one `\"name\": {status: ..., type: ...}` line per name")
        return
    meta = meta or {}
    genders = terminology.GENDERS.get(lang)
    listed = dict(terminology.names_of(local))
    for name, field in terminology.names_of(local):
        if PLACEHOLDER.search(str(name)):
            continue  # the placeholder itself is reported once, as such
        fields = meta.get(name)
        hint_gender = f", gender: {'|'.join(genders)}" if genders else ""
        if not isinstance(fields, dict):
            status = next(s for s, (_, home) in terminology.STATUSES.items() if home == field)
            report.add(path, at(lang, "names") if "names" in local else at(lang, field),
                       f"'{name}' ({lang}.{field}) has no description under '{lang}.names'",
                       f"add `\"{name}\": {{status: {status}, type: {'|'.join(terminology.TYPES)}{hint_gender}}}`"
                       f" under `names:` in `{lang}:`")
            continue
        line = at(lang, "names", name)
        if terminology.normalized(str(name)) in config_keys:
            report.add(path, line, f"'{name}' ({lang}) is a config.json key, a setting and not a name of the concept",
                       "remove it from the names: termbase/data/config_keys.yml explains the key, links it to its"
                       " entry, and search finds it there")
        status = fields.get("status")
        if status not in terminology.STATUSES:
            report.add(path, line, f"'{name}' ({lang}) has no valid status ({status!r})",
                       f"add `status:` with one of: {', '.join(terminology.STATUSES)}")
        elif terminology.STATUSES[status][1] != field:
            report.add(path, line, f"'{name}' ({lang}) is {status} but sits in `{field}`",
                       f"a {status} name belongs in `{terminology.STATUSES[status][1]}`: move it or change its status")
        if fields.get("type") not in terminology.TYPES:
            report.add(path, line, f"'{name}' ({lang}) has no valid term type ({fields.get('type')!r})",
                       f"add `type:` with one of: {', '.join(terminology.TYPES)}")
        if genders and fields.get("gender") not in genders:
            report.add(path, line, f"'{name}' ({lang}) has no valid gender ({fields.get('gender')!r})",
                       f"add `gender:` with one of: {', '.join(genders)}")
        if not genders and "gender" in fields:
            report.add(path, line, f"'{name}' ({lang}) has a gender, which {lang} does not mark",
                       "remove `gender:`")
        usage = fields.get("usage")
        if usage is not None and not re.fullmatch(rf"{lang}-([A-Z]{{2}}|[0-9]{{3}})", str(usage)):
            report.add(path, line, f"'{name}' ({lang}) has usage '{usage}', not a region of {lang}",
                       f"write a BCP 47 tag such as {lang}-ES or {lang}-419, or remove `usage:`")
        if fields.get("number", "singular") not in terminology.NUMBERS:
            report.add(path, line, f"'{name}' ({lang}) has number {fields.get('number')!r}",
                       "write `number: plural` for a plural name (the words that follow it agree), or remove it")
        unknown = set(fields) - {"status", "type", "gender", "number", "usage", "proposed"}
        if unknown:
            report.add(path, line, f"'{name}' ({lang}) has unknown fields {sorted(unknown)}",
                       "use status, type, gender, number, usage and proposed")
        if lang in terminology.ATTESTED and field == "term" and not fields.get("proposed") \
                and not base.attestations(lang).get(name):
            report.add(path, line, f"preferred term '{name}' ({lang}) has neither an attestation nor `proposed: true`",
                       f"quote a published sentence that uses it in termbase/data/attestations/{lang}.yml,"
                       " or add `proposed: true` (proposed by this site)")
        if fields.get("proposed") and (lang not in terminology.ATTESTED or field != "term"):
            report.add(path, line, f"'{name}' ({lang}) is marked `proposed: true`, which only a Spanish or Danish"
                       " preferred term can be", "remove `proposed: true`")
        elif fields.get("proposed") and base.attestations(lang).get(name):
            report.add(path, line, f"'{name}' ({lang}) is marked `proposed: true` but is attested in use",
                       f"remove `proposed: true`: termbase/data/attestations/{lang}.yml quotes a published"
                       " sentence that uses it")
    for name in meta:
        if name not in listed:
            report.add(path, at(lang, "names", name), f"'{name}' under '{lang}.names' is not a name of the record",
                       f"add it to `term`, `synonyms` or `avoid` of `{lang}:`, or remove it from `names:`")


def _check_attestations(base, report, records) -> None:
    """termbase/data/attestations/<lang>.yml: each quote names a term of the base, contains it,
    and says where and when it was read."""
    for lang in terminology.ATTESTED:
        path = base.project.data_dir / "attestations" / f"{lang}.yml"
        if not path.is_file():
            continue
        data, lines = yamlfile.load(path, report)
        if data is None:
            continue
        if not isinstance(data, dict):
            report.add(path, 1, "the attestations are not a mapping", "key them by term: `term: [{quote: ..., ...}]`")
            continue
        names = {name for record in records.values() if isinstance(record.get(lang), dict)
                 for name, _ in terminology.names_of(record[lang])}
        for name, items in data.items():
            line = yamlfile.line_of(lines, (name,))
            if name not in names:
                report.add(path, line, f"'{name}' is no {lang} name of any term record",
                           did_you_mean(str(name), names).replace("an existing entry", "a term"))
            if not isinstance(items, list) or not items:
                report.add(path, line, f"'{name}' has no list of attestations", "write `- quote: ...` items")
                continue
            for index, item in enumerate(items):
                at = yamlfile.line_of(lines, (name, index))
                item = item if isinstance(item, dict) else {}
                missing = [f for f in terminology.ATTESTATION_FIELDS if not item.get(f)]
                if missing or not (str(item.get("url", "")).startswith("https://") or "url" not in item):
                    report.add(path, at, f"attestation {index + 1} of '{name}' lacks {', '.join(missing) or 'an https url'}",
                               "give quote, source (author, title), url (https) or a bibliographic source, and read (date)")
                quote = str(item.get("quote", ""))
                if quote and str(name).casefold() not in quote.casefold():
                    report.add(path, at, f"attestation {index + 1} does not contain the term '{name}'",
                               "quote a sentence that uses the term as written, or key it by the form it uses")
