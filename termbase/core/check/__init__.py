"""Validates the sources of the site before anything is built.

Every problem is one line, `path:line: what is wrong - how to fix it`. The same rules run from
`python -m termbase check`, from the test suite and at the start of every MkDocs build, and
every error the build could raise on bad sources has a rule here, so it is reported this way
first. Each module of this package holds the rules for one kind of source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from termbase.core.model import TermBase
from termbase.core.project import Project


@dataclass(frozen=True)
class Problem:
    shown: str  # the file, relative to the project root
    line: int
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.shown}:{self.line}: {self.what} - {self.fix}"


class Report(list):
    def __init__(self, project: Project):
        super().__init__()
        self.project = project
        self.notes: list[str] = []  # what could not be checked here, and why (not problems)

    def add(self, path, line, what, fix):
        self.append(Problem(self.project.shown(Path(path)), line, what, fix))


def run(project: Project, *, spelling: bool = True, store=None) -> Report:
    """Every problem of the project's sources. `spelling=False` skips hunspell (tests of
    other rules; the command, the build and CI always spell-check). `store`: a
    check/filecache.Store that keeps the per-file rules' problems (None: all run)."""
    from termbase.core.check import claims, language, models, notebooks, pages, records, snippets, styles

    report = Report(project)
    base = TermBase(project)
    if not records.check_data(base, report):
        return report  # without readable interface strings nothing else can be named
    usable = styles.check_styles(base, report)
    records.check_records(base, report)
    models.check_models(base, report)
    models.check_config_keys(base, report)
    models.check_model_configs(base, report)
    snippets.check_modules(project, report)
    notebooks.check_notebooks(project, report)
    page_texts = pages.check_pages(base, report, store)
    snippets.check_page_blocks(base, page_texts, report)
    claims.check_claims(project, page_texts, report)
    language.check_language(base, page_texts, report, spell=spelling, store=store,
                            languages=[lang for lang in base.languages if lang in usable])
    for lang in base.languages:
        if lang not in usable:
            report.notes.append(f"the language rules of {lang} did not run: mend "
                                f"{project.shown(project.data_dir / 'style' / f'{lang}.yml')} (above)")
    return report
