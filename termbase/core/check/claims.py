"""Rules for the claims: every citation has its test, every test is cited, and every language
of a page cites the same claims in the same order."""

from __future__ import annotations

from termbase.core import claims, markdown, notebook_source
from termbase.core.project import Project


def check_claims(project: Project, pages, report) -> None:
    tested = claims.tests(project)
    cited: dict[str, list] = {}
    by_page: dict[str, dict[str, list[str]]] = {}
    for page in pages.values():
        found = claims.citations(page.text)
        by_page.setdefault(page.neutral, {})[page.lang] = [claim_id for _, claim_id in found]
        for number, claim_id in found:
            cited.setdefault(claim_id, []).append((page.path, number))
    for path in notebook_source.source_paths(project):
        source = notebook_source.read_source(path)
        per_lang: dict[str, list[str]] = {}
        for lang, line, text in notebook_source.prose_cells(source):
            for token in markdown.page_tokens(text):  # a notebook renders no marker
                if token.problem or token.kind == "marker":
                    report.add(path, line + token.line - 1, token.problem or f"marker '{token.raw}' in a notebook",
                               token.fix or "notebooks have no markers: write the text itself")
            for offset, claim_id in claims.citations(text):
                cited.setdefault(claim_id, []).append((path, line + offset - 1))
                per_lang.setdefault(lang, []).append(claim_id)
        _same_in_every_language(project, {lang: path for lang in project.languages}, per_lang, report)
    for claim_id, places in sorted(cited.items()):
        if claim_id not in tested:
            for path, number in places:
                report.add(path, number, f"claim '{claim_id}' has no test",
                           f'add a test decorated @claim("{claim_id}") under tests/claims/, or cite an existing claim')
    for claim_id, found in sorted(tested.items()):
        if claim_id not in cited:
            report.add(found[0].path, found[0].line, f"claim '{claim_id}' is tested but no page cites it",
                       "cite it with {{ claim:" + claim_id + " }} after the sentence it proves, or remove the test")
        for extra in found[1:]:
            report.add(extra.path, extra.line, f"claim '{claim_id}' has a second test ({extra.function})",
                       f"one test per claim: merge it into {found[0].function}")
    for neutral, per_lang in sorted(by_page.items()):
        paths = {page.lang: page.path for page in pages.values() if page.neutral == neutral}
        _same_in_every_language(project, paths, per_lang, report)


def _same_in_every_language(project: Project, paths: dict, per_lang: dict[str, list[str]], report) -> None:
    reference = per_lang.get(project.default_language, [])
    for lang, path in paths.items():
        found = per_lang.get(lang, [])
        if found != reference:
            report.add(path, 1, f"the {lang} text cites the claims {found or '[]'} where the {project.default_language} "
                       f"text cites {reference or '[]'}", "cite the same claims after the same sentences in every language")
