"""Contributing: every kind of broken contribution is one clear line and a failed build that
leaves nothing behind; `new` scaffolds what `check` then demands; exports parse."""

import csv
import io
import json
from xml.etree import ElementTree as ET

import pytest

from termbase.core import export
from termbase.core.model import TermBase
from tests.site import variant
from tests.site.sitetools import LANGS, PROJECT, ROOT, copy_project, mkdocs_build, prefix
from tests.site.variant import edit, git, termbase_cli

BASE = TermBase(PROJECT)


def terms():
    return BASE.terms


def line_starting(relative: str, start: str) -> int:
    """The number of the first line of a project file that starts with `start` (indentation
    aside): where the checker reports a problem in it."""
    lines = (ROOT / relative).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.lstrip().startswith(start))


ENTRY = "multi-head-attention"
# Breakers spread over several entries, so that more of them share a copy (one file each).
WINDOW = "sliding-window-attention"
WINDOW_FORMULA_LINE = line_starting(f"termbase/data/terms/{WINDOW}.yml", "formula:") + 1


def prepend(path, text):
    path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")


# (what breaks, how to break it, the line the checker must print)
MADE_WITH_LINE = line_starting("termbase/data/ui.yml", "made_with:")
QUOTE_RULE_LINE = line_starting("termbase/data/style/es.yml", "pattern: '[.,]»'")


BROKEN = {
    "missing translation": (lambda p: (p / f"docs/glossary/{ENTRY}.da.md").unlink(),
                            f"docs/glossary/{ENTRY}.en.md:1: no da translation of glossary/{ENTRY}.md - add docs/glossary/{ENTRY}.da.md"),
    "missing field": (lambda p: edit(p / "termbase/data/terms/alibi.yml", "level: intermediate\n", ""),
                      "termbase/data/terms/alibi.yml:1: field 'level' is missing - add `level:`"),
    "missing local field": (lambda p: edit(p / "termbase/data/terms/self-attention.yml", "  short: Attention, hvor",
                                           "  kort: Attention, hvor"),
                            "'da.short' is missing - add `short:` under `da:`"),
    "invalid front matter": (lambda p: prepend(p / "docs/index.da.md", "---\ntitle: [unclosed\n---\n"),
                             "docs/index.da.md:2: invalid front matter: expected ',' or ']', but got '<stream end>'"),
    "invalid YAML": (lambda p: edit(p / f"termbase/data/terms/{ENTRY}.yml", "level: intermediate", "level: [intermediate"),
                     f"termbase/data/terms/{ENTRY}.yml:"),
    "invalid YAML in the sources": (lambda p: (p / "termbase/data/sources.yml").write_text(
                                        (p / "termbase/data/sources.yml").read_text(encoding="utf-8")
                                        + "<<<<<<< HEAD\nleft over from a merge\n", encoding="utf-8"),
                                    "invalid YAML: could not find expected ':' - fix the YAML syntax"),
    "a source id written twice": (lambda p: (p / "termbase/data/sources.yml").write_text(
                                      (p / "termbase/data/sources.yml").read_text(encoding="utf-8")
                                      + "vaswani2017:\n  title: Another paper\n  url: https://arxiv.org/abs/1\n",
                                      encoding="utf-8"),
                                  "key 'vaswani2017' is written twice (also line 2) - keep one, or give the other its own name"),
    "unknown category": (lambda p: edit(p / "termbase/data/terms/causal-mask.yml", "category: mechanism", "category: magic"),
                         "termbase/data/terms/causal-mask.yml:2: unknown category 'magic' - use one of: fundamentals"),
    "unknown level": (lambda p: edit(p / "termbase/data/terms/kv-cache.yml", "level: intermediate", "level: expert"),
                      "termbase/data/terms/kv-cache.yml:3: unknown level 'expert' - use one of: beginner"),
    "missing snippet file": (lambda p: edit(p / "termbase/data/terms/cross-attention.yml",
                                            "snippets/scaled_dot_product_attention.py:code", "snippets/nowhere.py:code"),
                             "snippet file snippets/nowhere.py does not exist - create it"),
    "missing snippet section": (lambda p: edit(p / "snippets/multi_head_attention.py", "[start:demo]", "[start:example]"),
                                "section 'demo' is not marked in snippets/multi_head_attention.py"),
    "snippet without tests": (lambda p: (p / "snippets/orphan.py").write_text("import torch\n", encoding="utf-8"),
                              "snippets/orphan.py:1: snippet module has no test (tests/test_orphan.py is missing)"),
    "broken link": (lambda p: edit(p / "docs/index.es.md", "(glossary/index.md)", "(glossary/nowhere.md)"),
                    "docs/index.es.md:33: link to 'glossary/nowhere.md' leads to no page - link to an existing page"),
    "broken related term": (lambda p: edit(p / f"termbase/data/terms/{ENTRY}.yml", "related: [", "related: [no-such-term, "),
                            f"termbase/data/terms/{ENTRY}.yml:4: related term 'no-such-term' does not exist"),
    "duplicate term": (lambda p: (p / "termbase/data/terms/mha-copy.yml").write_text(
                           (p / f"termbase/data/terms/{ENTRY}.yml").read_text(encoding="utf-8"), encoding="utf-8"),
                       "term 'atención multicabeza' (es) is also the term of"),
    "bad slug": (lambda p: (p / f"termbase/data/terms/{ENTRY}.yml").rename(p / "termbase/data/terms/Multi_Head.yml"),
                 "termbase/data/terms/Multi_Head.yml:1: slug 'Multi_Head' is not lowercase-with-hyphens"),
    "inline python": (lambda p: edit(p / "docs/index.da.md", "\n## Alle opslag", "\n```python\nprint('hej')\n```\n\n## Alle opslag"),
                      "Python written inline in a page - move the code into a module under snippets/"),
    "style pattern that does not compile": (lambda p: edit(p / "termbase/data/style/es.yml", "pattern: '[.,]»'",
                                                           "pattern: '[.,»'"),
                                            f"termbase/data/style/es.yml:{QUOTE_RULE_LINE}:"
                                            " invalid regular expression '[.,»': unterminated character set at position 0"),
    "not UTF-8": (lambda p: (p / "docs/index.da.md").write_bytes("# Forside på dansk\n".encode("latin-1")),
                  "docs/index.da.md:1: not UTF-8 (invalid continuation byte at byte 11) - save the file as UTF-8"),
    "source without URL": (lambda p: edit(p / "termbase/data/sources.yml", "url: https://arxiv.org/abs/1706.03762", "url: arxiv 1706.03762"),
                           "termbase/data/sources.yml:2: source 'vaswani2017' has no https URL"),
    "unknown section": (lambda p: edit(p / "docs/glossary/alibi.es.md", "## Origen", "## Historia"),
                        "unknown section 'Historia' - an entry's sections are, in this order: Significados,"),
    "formula placeholder": (lambda p: edit(p / f"termbase/data/terms/{ENTRY}.yml", "formula:\n  - ",
                                           "formula:\n  - TODO(termbase) LaTeX, e.g. x\n  - "),
                            f"termbase/data/terms/{ENTRY}.yml:7: 'formula.0' is still a placeholder - write it"),
    "formula with a missing brace": (lambda p: edit(p / f"termbase/data/terms/{WINDOW}.yml", "formula:\n  - ",
                                                    "formula:\n  - \\frac{1}{\\tau\n  - "),
                                     f"termbase/data/terms/{WINDOW}.yml:{WINDOW_FORMULA_LINE}: formula 1 does not parse:"
                                     " 1 '{' never closed: the '{' after `\\frac{1}` - fix the LaTeX"),
    "stray dollar in Danish prose": (lambda p: edit(p / "docs/glossary/alibi.da.md", "## Kilder",
                                                    "Det koster $V.\n\n## Kilder"),
                                     "a '$' opens or closes no formula (the page would show it raw) - close the formula"),
    "snippet module without BLOCKS": (lambda p: edit(p / "snippets/softmax.py", "BLOCKS = {", "EXAMPLES = {"),
                                      "snippets/softmax.py:1: the module declares no BLOCKS - add `BLOCKS = {"),
    "block without expected output": (lambda p: edit(p / "tests/test_softmax.py", '"demo": [', '"demonstration": ['),
                                      "block 'demo' of snippets/softmax.py has no expected output - add \"demo\": [every line it prints]"),
    "unknown slug": (lambda p: [(p / f"docs/glossary/attention-haed.{lang}.md").write_text(
                         (p / f"docs/glossary/attention-head.{lang}.md").read_text(encoding="utf-8"), encoding="utf-8")
                         for lang in LANGS],
                     "page for 'attention-haed' has no term-base record - did you mean 'attention-head'?"),
    "related term misspelled": (lambda p: edit(p / "termbase/data/terms/ring-attention.yml", "related: [",
                                               "related: [softmx, "),
                                "related term 'softmx' does not exist - did you mean 'softmax'?"),
    "misspelled Danish word": (lambda p: edit(p / f"docs/glossary/{ENTRY}.da.md", "## Kilder", "Vi gennemgår trinene.\n\n## Kilder"),
                               '"trinene" is not a Danish word - did you mean "trinnene"? (or add it to termbase/data/words/da.txt)'),
    "symbol instead of a no-break space": (lambda p: edit(p / "docs/glossary/causal-mask.es.md", "## Fuentes",
                                                          "Ocupa 320\u237dKiB por token.\n\n## Fuentes"),
                                           "⍽ (U+237D, a visible symbol) in the text - write a no-break space (U+00A0)"),
    "source title for an unknown language": (lambda p: edit(p / "termbase/data/sources.yml",
                                                            "title: Attention Is All You Need",
                                                            "title: {en: Attention Is All You Need, fr: Attention}"),
                                             "source 'vaswani2017' has titles for ['en', 'fr'] - give `en:` and only"),
    "source title repeated as a translation": (lambda p: edit(p / "termbase/data/sources.yml",
                                                              "title: Attention Is All You Need",
                                                              "title: {en: Attention Is All You Need, "
                                                              "da: Attention Is All You Need}"),
                                               "source 'vaswani2017' repeats its English title as a translation"
                                               " - a name that is not translated is one title for all"),
    "misspelled Spanish word": (lambda p: edit(p / f"docs/glossary/{ENTRY}.es.md", "## Fuentes", "La atencion de cada cabeza.\n\n## Fuentes"),
                                '"atencion" is not a Spanish word - did you mean "atención"? (or add it to termbase/data/words/es.txt)'),
    "avoided form on a page": (lambda p: edit(p / f"docs/glossary/{ENTRY}.es.md", "## Fuentes", "Un núcleo fusionado lo calcula.\n\n## Fuentes"),
                               '"núcleo fusionado" - write "kernel fusionado" (style guide: kernel)'),
    "unit after an ordinary space": (lambda p: edit(p / "docs/glossary/kv-cache.es.md", "## Fuentes",
                                                    "Ocupa 320 KiB por token.\n\n## Fuentes"),
                                     '"320 KiB" has an ordinary space between the number and its unit - write 320\u00a0KiB,'
                                     " with a no-break space (U+00A0) (style guide: typography)"),
    "unit with no space in Danish": (lambda p: edit(p / "docs/glossary/kv-cache.da.md", "## Kilder",
                                                    "Cachen fylder 2,5MiB pr. token.\n\n## Kilder"),
                                     '"2,5MiB" has no space between the number and its unit - write 2,5\u00a0MiB'),
    "one count in digits and in words": (lambda p: edit(p / f"docs/glossary/{ENTRY}.es.md", "## Fuentes",
                                                        "Hay 8 cabezas de clave y valor y ocho cabezas de consulta\n"
                                                        "por grupo.\n\n## Fuentes"),
                                         'the count 8 is written both as "8" and as "ocho" in one sentence'
                                         " - write every count of the sentence the same way (style guide: typography)"),
    "kept English term with the wrong gender": (lambda p: edit(p / f"docs/glossary/{ENTRY}.da.md", "## Kilder",
                                                               "Det første token er et attention sink.\n\n## Kilder"),
                                                '"et attention sink": the style guide gives "attention sink" another gender'
                                                ' - write "en attention sink" (style guide: kept English terms)'),
    "literal rendering with a gap": (lambda p: edit(p / f"docs/glossary/{ENTRY}.da.md", "## Kilder",
                                                    "Giv derefter masken\ntil `F.scaled_dot_product_attention`.\n\n## Kilder"),
                                     '"Giv derefter masken til `" - write "sende … til (eller angive)" (style guide: sende-til)'),
    "avoided form in an alt text": (lambda p: edit(p / f"termbase/data/terms/{ENTRY}.yml", "  figure_alt: \"Diagram: inputtet",
                                                   "  figure_alt: \"Diagram med en opmærksomhedsmaske: inputtet"),
                                    '"opmærksomhedsmaske" - write "attention-maske" (style guide: attention-maske)'),
    "claim without a test": (lambda p: edit(p / f"docs/glossary/{ENTRY}.en.md", "## Sources", "PyTorch does it. {{ claim:no-such-claim }}\n\n## Sources"),
                             "claim 'no-such-claim' has no test - add a test decorated @claim(\"no-such-claim\") under tests/claims/"),
    "whole-file include": (lambda p: edit(p / "docs/faq/common-mistakes.en.md", "\n## ", "\n```python\n--8<-- \"snippets/masks.py\"\n```\n\n## "),
                           "'snippets/masks.py' embeds the whole file; embed a section, e.g. 'snippets/masks.py:code'"),
    "link to a misspelt entry": (lambda p: edit(p / f"docs/glossary/{ENTRY}.en.md", "## Sources", "See [softmax](softmx.md).\n\n## Sources"),
                                 "link to 'softmx.md' leads to no page - did you mean 'softmax.md'?"),
    "misspelt marker": (lambda p: edit(p / f"docs/glossary/{ENTRY}.en.md", "{{ summary }}", "{{summary}}"),
                        "marker '{{summary}}' is not written `{{ summary }}` - write `{{ summary }}`"),
    "unknown marker": (lambda p: edit(p / "docs/glossary/alibi.en.md", "{{ summary }}", "{{ sumary }}"),
                       "unknown marker '{{ sumary }}' - did you mean '{{ summary }}'?"),
    "missing interface string": (lambda p: edit(p / "termbase/data/ui.yml", ', da: "Lavet med"}', "}"),
                                 f"termbase/data/ui.yml:{MADE_WITH_LINE}: 'labels.made_with' has no 'da' string - add `da: ...` to it"),
    "term without a status": (lambda p: edit(p / "termbase/data/terms/grouped-query-attention.yml",
                                             '"GQA": {status: admitted, type: acronym, gender: feminine}',
                                             '"GQA": {type: acronym, gender: feminine}'),
                              "'GQA' (es) has no valid status (None) - add `status:` with one of: preferred,"),
    "preferred term neither attested nor proposed": (
        lambda p: edit(p / "termbase/data/terms/online-softmax.yml", "gender: common, proposed: true}", "gender: common}"),
        "preferred term 'online softmax' (da) has neither an attestation nor `proposed: true`"
        " - quote a published sentence that uses it in termbase/data/attestations/da.yml"),
    "attested term marked proposed": (
        lambda p: prepend(p / "termbase/data/attestations/es.yml",
                          "atención multicabeza:\n  - quote: \"La atención multicabeza usa varias cabezas.\"\n"
                          "    source: \"Autor, título\"\n    url: https://example.org/\n    read: 2026-12-03\n"),
        f"termbase/data/terms/{ENTRY}.yml:27: 'atención multicabeza' (es) is marked `proposed: true` but is attested"
        " in use - remove `proposed: true`: termbase/data/attestations/es.yml quotes a published sentence that uses it"),
    "usage claimed for a proposed name": (  # attention-sink: its Danish name is proposed
        lambda p: edit(p / "docs/glossary/attention-sink.da.md", "## Oprindelse\n",
                       "## Oprindelse\n\nDanske fagfolk siger attention sink.\n"),
        '"Danske fagfolk" claims a use that the term base marks proposed (no attestation) - skriv "Dette site'),
    "proposed on a synonym": (
        lambda p: edit(p / "termbase/data/terms/softmax.yml", '"softargmax": {status: admitted, type: fullForm}',
                       '"softargmax": {status: admitted, type: fullForm, proposed: true}'),
        "termbase/data/terms/softmax.yml:21: 'softargmax' (en) is marked `proposed: true`, which only a Spanish or"
        " Danish preferred term can be - remove `proposed: true`"),
    "config key as a name": (
        lambda p: (edit(p / "termbase/data/terms/nope.yml", "NoPE layer, interleaved NoPE]",
                        "NoPE layer, interleaved NoPE, no_rope_layers]"),
                   edit(p / "termbase/data/terms/nope.yml", '    "NoPE": {status: preferred, type: acronym}\n',
                        '    "NoPE": {status: preferred, type: acronym}\n    "no_rope_layers": {status: admitted, type: variant}\n')),
        "termbase/data/terms/nope.yml:21: 'no_rope_layers' (en) is a config.json key, a setting and not a name of"
        " the concept - remove it from the names: termbase/data/config_keys.yml explains the key"),
    "attestation without its term": (lambda p: (p / "termbase/data/attestations/es.yml").write_text(
                                         "atención multicabeza:\n  - quote: \"La atención se reparte entre varias cabezas.\"\n"
                                         "    source: \"Autor, título\"\n    url: https://example.org/\n    read: 2026-12-03\n",
                                         encoding="utf-8"),
                                     "termbase/data/attestations/es.yml:2: attestation 1 does not contain the term"
                                     " 'atención multicabeza' - quote a sentence that uses the term as written"),
    "synonym without a description": (lambda p: edit(p / f"termbase/data/terms/{ENTRY}.yml",
                                                     "synonyms: [multi-head-opmærksomhed, MHA]",
                                                     "synonyms: [multi-head-opmærksomhed, MHA, flerhovedsattention]"),
                                      "'flerhovedsattention' (da.synonyms) has no description under 'da.names'"
                                      " - add `\"flerhovedsattention\": {status: admitted, type: fullForm|"),
    "nav label without translation": (lambda p: edit(p / "mkdocs.yml", "      - Style guide: style-guide.md\n",
                                                     "      - Style guide: style-guide.md\n      - Glossary again: glossary/index.md\n"),
                                      "nav label 'Glossary again' has no translation - add `Glossary again: {es: ..., da: ...}`"),
}


def check_copy(project, store) -> list[str]:
    """The checker's lines for a copy of the project, run in this process (the rules that
    `python -m termbase check` and every build run, there behind the clean result that
    termbase/site/source_check.py keeps; see test_the_cli_and_the_build_refuse_it).
    `store`: the folder of the per-page problems (termbase/core/check/filecache.py), shared by
    the copies as the command and the build share it between runs: a page no kind touched is
    checked in the first copy only. tests/site/test_check_cache.py shows that the output is the
    same with and without it."""
    from termbase.core import check
    from termbase.core.check import filecache
    from termbase.core.project import load

    return [str(problem) for problem in check.run(load(project), store=filecache.Store(store))]


# Broken contributions share copies: each kind goes into the first copy that no other kind in it
# touches a file of, so that each copy is checked once, not once per kind (issue 25.6). A kind
# that hides what other files would report (the check stops, or a record or page goes missing)
# gets a copy of its own: if a new kind's line does not show in its shared copy, add it here.
ALONE = {"invalid YAML", "invalid YAML in the sources", "a source id written twice", "missing interface string", "bad slug",
         "missing translation", "duplicate term", "not UTF-8", "invalid front matter",
         "style pattern that does not compile"}
WATCHED = ("mkdocs.yml", "docs", "termbase/data", "snippets", "tests")


def _stamps(project) -> dict[str, tuple[int, int]]:
    stamps = {}
    for part in WATCHED:
        root = project / part
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                stamps[path.relative_to(project).as_posix()] = (stat.st_mtime_ns, stat.st_size)
    return stamps


def _unit(path: str) -> str:
    """A snippet module and its test are checked together: one unit."""
    folder, _, name = path.rpartition("/")
    return f"snippets/{name[len('test_'):]}" if folder == "tests" and name.startswith("test_") else path


def _touched(scratch) -> dict[str, set[str]]:
    """The files each kind's breaker changes, creates or removes (a test as its snippet module),
    found on one scratch copy that is put back from the sources after each."""
    import shutil

    touched = {}
    before = _stamps(scratch)
    for kind in sorted(BROKEN):
        BROKEN[kind][0](scratch)
        after = _stamps(scratch)
        changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
        touched[kind] = {_unit(path) for path in changed}
        for path in changed:
            (scratch / path).unlink(missing_ok=True)
            if (ROOT / path).is_file():
                shutil.copy2(ROOT / path, scratch / path)
        assert _stamps(scratch).keys() == before.keys(), kind
        before = _stamps(scratch)
    return touched


@pytest.fixture(scope="module")
def broken_copies(tmp_path_factory):
    """kind -> the checker's lines for the shared copy that holds it (checked on first use)."""
    touched = _touched(copy_project(tmp_path_factory.mktemp("scratch") / "project", cache=False))
    groups: list[list[str]] = []
    for kind in sorted(BROKEN):
        free = [group for group in groups if not ALONE & {kind, *group}
                and not any(touched[kind] & touched[other] for other in group)]
        if free:
            free[0].append(kind)
        else:
            groups.append([kind])
    lines: dict[int, list[str]] = {}
    store = tmp_path_factory.mktemp("check-files")

    def lines_for(kind: str) -> tuple[list[str], list[str]]:
        number = next(i for i, group in enumerate(groups) if kind in group)
        if number not in lines:
            project = copy_project(tmp_path_factory.mktemp(f"broken{number}") / "project", cache=False)
            for each in groups[number]:
                BROKEN[each][0](project)
            lines[number] = check_copy(project, store)
        return groups[number], lines[number]

    lines_for.groups, lines_for.touched = groups, touched
    return lines_for


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_contribution_is_one_clear_line(kind, broken_copies):
    group, lines = broken_copies(kind)
    expected = BROKEN[kind][1]
    assert any(expected in line for line in lines), \
        f"{kind!r} not reported in the copy it shares with {group} (see ALONE):\n" + "\n".join(lines)
    for line in lines:
        path_and_line, _, rest = line.partition(": ")
        assert path_and_line.rsplit(":", 1)[1].isdigit() and " - " in rest, line


def test_the_kinds_share_copies_and_each_copy_touches_a_file_once(broken_copies):
    """The grouping itself: fewer copies than kinds, and no file broken twice in one copy."""
    groups, touched = broken_copies.groups, broken_copies.touched
    assert sorted(kind for group in groups for kind in group) == sorted(BROKEN)
    assert len(groups) < len(BROKEN) / 2, groups
    assert all(touched[kind] for kind in BROKEN), "a breaker that changes nothing breaks nothing"
    for group in groups:
        assert len(group) == 1 or not ALONE & set(group), group
        files = [path for kind in group for path in touched[kind]]
        assert len(files) == len(set(files)), group


def test_the_cli_and_the_build_refuse_it(tmp_path):
    project = copy_project(tmp_path / "project")
    breaker, expected = BROKEN["avoided form on a page"]
    breaker(project)
    result = termbase_cli(project, "check")
    assert result.returncode == 1 and expected in result.stdout, result.stdout
    site = tmp_path / "site"
    built = mkdocs_build(project, site)
    assert built.returncode != 0
    assert expected in built.stdout + built.stderr
    assert "Traceback" not in built.stdout + built.stderr
    assert not site.exists(), "a failed build must leave no site for a deploy to pick up"


def test_new_scaffolds_every_file_and_check_rejects_the_placeholders(tmp_path):
    project = copy_project(tmp_path / "project")
    result = termbase_cli(project, "new", "key-padding")
    assert result.returncode == 0, result.stderr
    for path in ["termbase/data/terms/key-padding.yml", "snippets/key_padding.py", "tests/test_key_padding.py",
                 *[f"docs/glossary/key-padding.{lang}.md" for lang in LANGS]]:
        assert (project / path).is_file(), path
        assert path in result.stdout
    da = (project / "docs/glossary/key-padding.da.md").read_text(encoding="utf-8")
    assert "## Betydninger" in da and "## Kilder" in da and "{{ code }}" in da
    checked = termbase_cli(project, "check")
    assert checked.returncode == 1
    assert "docs/glossary/key-padding.es.md:5: unfilled placeholder from `termbase new`" in checked.stdout
    assert "tests/test_key_padding.py:" in checked.stdout
    assert "key-padding.yml:2: 'category' is still a placeholder - use one of: fundamentals" in checked.stdout
    problems = [line for line in checked.stdout.splitlines() if " - " in line]
    # each placeholder once and nothing else: no spelling of the template's words in es or da
    assert problems and all("placeholder" in line for line in problems), checked.stdout
    assert len({line.partition(": ")[0] for line in problems}) == len(problems), checked.stdout
    again = termbase_cli(project, "new", "key-padding")
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = termbase_cli(project, "new", "Key Padding")
    assert bad.returncode == 2 and "lowercase words joined by hyphens" in bad.stderr


def test_exports_parse_with_one_concept_per_entry():
    tbx = ET.fromstring(export.to_tbx(BASE).encode("utf-8"))
    ns = {"t": "urn:iso:std:iso:30042:ed-2"}
    assert tbx.tag == "{urn:iso:std:iso:30042:ed-2}tbx" and tbx.get("type") == "TBX-Basic"
    concepts = tbx.findall("t:text/t:body/t:conceptEntry", ns)
    assert sorted(c.get("id") for c in concepts) == sorted(terms())
    ids = {c.get("id") for c in concepts}
    for concept in concepts:
        langs = [s.get("{http://www.w3.org/XML/1998/namespace}lang") for s in concept.findall("t:langSec", ns)]
        assert langs == list(LANGS)
        for ref in concept.findall("t:ref", ns):
            assert ref.get("target") in ids
        for sec in concept.findall("t:langSec", ns):
            statuses = [n.text for n in sec.findall("t:termSec/t:termNote[@type='administrativeStatus']", ns)]
            assert statuses[0] == "preferredTerm-admn-sts"
    mha = {s.get("{http://www.w3.org/XML/1998/namespace}lang"): s for s in
           tbx.find("t:text/t:body/t:conceptEntry[@id='multi-head-attention']", ns).findall("t:langSec", ns)}
    es_terms = {sec.findtext("t:term", namespaces=ns): sec.find("t:termNote[@type='administrativeStatus']", ns).text
                for sec in mha["es"].findall("t:termSec", ns)}
    assert es_terms["atención multicabeza"] == "preferredTerm-admn-sts"
    assert es_terms["atención multicabezal"] == "deprecatedTerm-admn-sts"
    rows = list(csv.DictReader(io.StringIO(export.to_csv(BASE))))
    assert len(rows) == len(terms()) and {"term_en", "term_es", "term_da", "definition_da"} <= set(rows[0])
    data = json.loads(export.to_json(BASE))
    assert [c["id"] for c in data["concepts"]] == sorted(terms())


def test_exports_are_published_and_linked(built_site):
    site, _ = built_site
    assert ET.parse(site / "termbase.tbx").getroot().tag.endswith("tbx")
    assert json.loads((site / "termbase.json").read_text(encoding="utf-8"))["concepts"]
    assert (site / "termbase.csv").read_text(encoding="utf-8").startswith("id,category,level")
    for lang in LANGS:
        prefix = "" if lang == "en" else f"{lang}/"
        index = (site / prefix / "glossary" / "index.html").read_text(encoding="utf-8")
        assert 'href="../termbase.tbx"' in index and 'href="../termbase.csv"' in index


def committed_copy(target):
    """A copy of the project as one commit of 2026-01-01, for edits dated after it."""
    project = copy_project(target)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "all")):
        git(project, *args, when="2026-01-01T00:00:00")
    return project


def test_outdated_translation_is_flagged_on_the_page_and_in_status(variant_site):
    """An English page edited in a commit after its translations' (tests/site/variant.py)."""
    _, site, ran = variant_site
    entry = variant.OUTDATED
    status = ran["status"]
    assert f"es: glossary/{entry}.md outdated" in status.stdout and f"da: glossary/{entry}.md outdated" in status.stdout
    assert "Dansk" in status.stdout and "1 outdated" in status.stdout
    da = (site / "da/glossary" / entry / "index.html").read_text(encoding="utf-8")
    assert "Denne oversættelse er ældre end den seneste ændring af den engelske original." in da
    assert f'href="/glossary/{entry}/"' in da
    en = (site / "glossary" / entry / "index.html").read_text(encoding="utf-8")
    assert "admonition warning" not in en
    fresh = (site / "da/index.html").read_text(encoding="utf-8")
    assert "ældre end den seneste" not in fresh
    # <wbr>: where a long inline path may wrap on a phone (termbase/site/pages.py, breakable_code)
    status_page = (site / "es/status/index.html").read_text(encoding="utf-8").replace("<wbr>", "")
    assert f"glossary/{entry}.md" in status_page and "Sin actualizar" in status_page


def test_commit_trailers_say_which_english_edits_translations_follow(tmp_path):
    """`Translations: unaffected` keeps a respelling from outdating the translations;
    `Translation-reviewed: <file>` marks one translation checked (docs/how-it-works.en.md, Decisions)."""
    project = committed_copy(tmp_path / "project")
    edit(project / f"docs/glossary/{ENTRY}.en.md", "## Origin", "## Origin\n\nA respelled sentence.\n")
    git(project, "commit", "-qam", "Respell\n\nTranslations: unaffected", when="2026-02-01T00:00:00")
    assert "outdated" not in termbase_cli(project, "status").stdout.split("\n", 2)[-1]
    edit(project / f"docs/glossary/{ENTRY}.en.md", "## Origin", "## Origin\n\nA new English sentence.\n")
    git(project, "commit", "-qam", "English changed", when="2026-03-01T00:00:00")
    status = termbase_cli(project, "status").stdout
    assert f"es: glossary/{ENTRY}.md outdated" in status and f"da: glossary/{ENTRY}.md outdated" in status
    git(project, "commit", "-q", "--allow-empty", "-m",
         f"Checked\n\nTranslation-reviewed: docs/glossary/{ENTRY}.da.md", when="2026-04-01T00:00:00")
    status = termbase_cli(project, "status").stdout
    assert f"es: glossary/{ENTRY}.md outdated" in status and f"da: glossary/{ENTRY}.md" not in status


def test_a_scaffolded_entry_filled_in_builds_in_every_language(variant_site):
    """What the contributing page walks a newcomer through: new, fill in (tests/site/variant.py),
    the quick check, check, build."""
    _, site, ran = variant_site
    assert ran["quick"].returncode == 0, ran["quick"].stdout + ran["quick"].stderr
    assert "prints what its test declares" in ran["quick"].stdout
    assert ran["check"].returncode == 0, ran["check"].stdout
    for lang, name in variant.SCAFFOLDED_NAMES.items():
        page = (site / prefix(lang) / f"glossary/{variant.SCAFFOLDED}/index.html").read_text(encoding="utf-8")
        assert name.capitalize() in page and "language-python" in page
