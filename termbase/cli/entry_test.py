"""`python -m termbase test <slug>`: the quick check of one entry, in seconds.

1. the tests of every snippet module the entry's code uses (pytest);
2. each of the entry's code blocks as every language's page shows it (the page's Markdown
   rendered with mkdocs.yml's extensions, the code read from the HTML like the copy button),
   run fresh from an empty folder and compared with the output its test declares: each
   distinct program once, however many languages show it.
"""

from __future__ import annotations

import subprocess
import sys

from termbase.core import blocks, sections
from termbase.core.check.records import did_you_mean
from termbase.core.model import TermBase
from termbase.core.project import Project


def _markdown(project: Project):
    import markdown
    from mkdocs.config import load_config

    config = load_config(str(project.root / "mkdocs.yml"))
    return markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)


def run(project: Project, slug: str) -> int:
    base = TermBase(project)
    if slug not in base.terms:
        print(f"termbase test: no entry '{slug}' - {did_you_mean(slug, base.terms)}", file=sys.stderr)
        return 2
    refs_of_blocks = [tuple(refs) for refs in base.terms[slug].get("code") or []]
    modules = sorted({sections.split(ref)[0].removeprefix("snippets/").removesuffix(".py")
                      for refs in refs_of_blocks for ref in refs})
    tests = [f"tests/test_{module}.py" for module in modules if (project.tests / f"test_{module}.py").is_file()]
    print(f"termbase test {slug}: pytest {' '.join(tests)}")
    # "-n 0": one entry's few test files start faster in this process than in pytest.ini's workers
    failed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *tests],
                            cwd=project.root).returncode != 0
    from termbase.run.blocks import BlockRunner, first_difference
    from termbase.site.code_blocks import python_blocks
    from termbase.site.pages import Pages

    declared = blocks.declared(project)
    md = _markdown(project)
    shown: dict[str, list[tuple[str, tuple[str, ...]]]] = {}  # program -> (language, refs) showing it
    for lang in base.languages:
        pages = Pages(base, lang, status=None, home="/")
        html = md.reset().convert("\n\n".join(pages.code_block(refs) for refs in refs_of_blocks))
        for refs, code in zip(refs_of_blocks, python_blocks(html)):
            shown.setdefault(code, []).append((lang, refs))
    with BlockRunner() as runner:  # no cache: this check runs the code now
        results = runner.run_all(shown)
        for code, places in shown.items():
            result = results[code]
            for refs in dict.fromkeys(refs for _, refs in places):
                block = declared.get(refs)
                langs = ",".join(lang for lang, r in places if r == refs)
                where = f"docs/glossary/{slug}.{{{langs}}}.md, block '{block.name if block else '?'}'"
                if result.returncode != 0 or result.stderr:
                    print(f"{where}: exit {result.returncode}\n{result.stderr}")
                    failed = True
                elif block is None or block.expected is None:
                    print(f"{where}: no expected output declared in tests/test_<module>.py")
                    failed = True
                elif (difference := first_difference(block.expected, result.stdout)):
                    print(f"{where}: {difference} - fix the code or {block.expectation()}")
                    failed = True
                else:
                    print(f"{where}: prints what its test declares ({result.seconds:.2f} s)")
    print(f"termbase test {slug}: {'FAILED' if failed else 'everything passes'}")
    return 1 if failed else 0
