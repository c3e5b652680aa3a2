"""Rules for the claims: every citation has its test, every test is cited, and every language
of a page cites the same claims in the same order."""

from __future__ import annotations

from termbase.core import claims, markdown, notebook_source
from termbase.core.project import Project


def check_claims(project: Project, pages, report) -> None:
    tested = claims.tests(project)
    cited: dict[str, list] = {}
    by_page: dict[str, dict[str, list[tuple[int, str]]]] = {}  # page -> lang -> (line, claim)
    for page in pages.values():
        found = claims.citations(page.text)
        by_page.setdefault(page.neutral, {})[page.lang] = list(found)
        for number, claim_id in found:
            cited.setdefault(claim_id, []).append((page.path, number))
    for path in notebook_source.source_paths(project):
        source = notebook_source.read_source(path)
        per_lang: dict[str, list[tuple[int, str]]] = {}
        for lang, line, text in notebook_source.prose_cells(source):
            for token in markdown.page_tokens(text):  # a notebook renders no marker
                if token.problem or token.kind == "marker":
                    report.add(path, line + token.line - 1, token.problem or f"marker '{token.raw}' in a notebook",
                               token.fix or "notebooks have no markers: write the text itself")
            for offset, claim_id in claims.citations(text):
                cited.setdefault(claim_id, []).append((path, line + offset - 1))
                per_lang.setdefault(lang, []).append((line + offset - 1, claim_id))
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


def _same_in_every_language(project: Project, paths: dict, per_lang: dict[str, list[tuple[int, str]]],
                            report) -> None:
    """Each language cites the default language's claims in its order; a difference is named at
    the translation's first citation that differs (or its last one), with the line of the
    default language's citation it should match."""
    default = project.default_language
    reference = per_lang.get(default, [])
    wanted = [claim_id for _, claim_id in reference]
    for lang, path in paths.items():
        found = per_lang.get(lang, [])
        ids = [claim_id for _, claim_id in found]
        if ids == wanted:
            continue
        first = next((i for i, (a, b) in enumerate(zip(ids, wanted)) if a != b), min(len(ids), len(wanted)))
        line = found[first][0] if first < len(found) else (found[-1][0] if found else 1)
        hint = (f"; the first difference: '{wanted[first]}', cited at line {reference[first][0]} of the {default} text"
                if first < len(wanted) else f"; '{ids[first]}' is not cited in the {default} text")
        report.add(path, line, f"the {lang} text cites the claims {ids or '[]'} where the {default} text cites "
                   f"{wanted or '[]'}{hint}", "cite the same claims after the same sentences in every language")
