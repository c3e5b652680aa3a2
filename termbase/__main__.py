"""`python -m termbase check|new|test|status|export|figures|notebooks`: the term base's command-line tool.

`check`, `status` and `export` import neither MkDocs nor torch; `figures` and `test` run code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SETUP = ("python3 -m venv .venv && .venv/bin/pip install -q --retries 0 --timeout 10 -r requirements-torch.txt "
         "&& .venv/bin/pip install -q -r requirements.txt (the README's command: torch's CPU build first), "
         "then run it as .venv/bin/python -m termbase")


def cmd_check(args) -> int:
    from termbase.cli import cached_blocks
    from termbase.site import source_check

    project = _project()
    # As a build checks: nothing again when nothing it reads changed since it last found nothing
    # wrong (but with --fresh), and a clean result found here spares the next build its check.
    report = source_check.run(project, fresh=args.fresh, spelling=not args.no_spelling)
    for problem in report:
        print(problem)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report:
        print(f"{len(report)} problem(s)")
        return 1
    # The sources are in order; the code is compared only where its last run is cached.
    code = cached_blocks.compare(project)
    for problem in code.problems:
        print(problem)
    if code.problems:
        print(f"{len(code.problems)} problem(s); {code.summary()}")
        return 1
    print(f"termbase check: the sources are in order; {code.summary()}")
    return 0


def cmd_new(args) -> int:
    from termbase.cli import new
    from termbase.core.model import TermBase

    project = _project()
    try:
        created = new.scaffold(TermBase(project), args.slug)
    except (ValueError, FileExistsError) as exc:
        print(f"termbase new: {exc}", file=sys.stderr)
        return 2
    for path in created:
        print("created", project.shown(path))
    print(new.NEXT_STEPS.format(slug=args.slug, module=args.slug.replace("-", "_")))
    return 0


def cmd_status(args) -> int:
    from termbase.core.model import TermBase
    from termbase.core.status import Status

    project = _project()
    base = TermBase(project)
    status = Status(project)
    for lang, numbers in status.summary().items():
        print(f"{base.language_name(lang):8} {numbers['translated']}/{numbers['pages']} pages translated, "
              f"{numbers['outdated']} outdated")
    for row in status.pages:
        if row.outdated or not row.exists:
            print(f"  {row.lang}: {row.page} {'outdated' if row.exists else 'missing'}")
    return 0


def cmd_export(args) -> int:
    from termbase.core import export
    from termbase.core.model import TermBase

    text = export.render(TermBase(_project()), args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_figures(args) -> int:
    # The drawings are content, not machinery: figures/ at the project's root, beside snippets/
    # whose computations they draw (matplotlib and torch, imported only for this command).
    sys.path.insert(0, str(_project().root))
    import figures

    for path in figures.draw_all(args.out or figures.OUT):
        print("drew", path)
    return 0


def cmd_notebooks(args) -> int:
    from termbase.cli import colab

    project = _project()
    for path in colab.write_all(project, args.out):
        print("wrote", project.shown(path))
    return 0


def cmd_test(args) -> int:
    from termbase.cli import entry_test

    return entry_test.run(_project(), args.slug)


def _project():
    from termbase.core.project import ConfigError, load

    try:
        return load(Path.cwd() if (Path.cwd() / "mkdocs.yml").is_file() else None)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m termbase", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate terms, pages, snippets and the prose of every language")
    check.add_argument("--no-spelling", action="store_true", help="skip hunspell (the build never skips it)")
    check.add_argument("--fresh", action="store_true",
                       help="run every rule on every file even when nothing changed since the last clean check")
    check.set_defaults(run=cmd_check)
    new = sub.add_parser("new", help="scaffold an entry in every language, its record, snippet and test")
    new.add_argument("slug", help="lowercase-with-hyphens, e.g. causal-mask")
    new.set_defaults(run=cmd_new)
    sub.add_parser("status", help="translation coverage and outdated pages").set_defaults(run=cmd_status)
    export = sub.add_parser("export", help="the term base as TBX, CSV or JSON")
    export.add_argument("--format", choices=("tbx", "csv", "json"), required=True)
    export.add_argument("--output", "-o", help="file to write (default: standard output)")
    export.set_defaults(run=cmd_export)
    figures = sub.add_parser("figures", help="redraw every SVG in docs/assets/figures from its code")
    figures.add_argument("--out", help="folder to write into (default: docs/assets/figures)")
    figures.set_defaults(run=cmd_figures)
    notebooks = sub.add_parser("notebooks", help="write notebooks/<lang>/*.ipynb (no outputs), which Colab opens")
    notebooks.add_argument("--out", help="folder to write into (default: notebooks/)")
    notebooks.set_defaults(run=cmd_notebooks)
    test = sub.add_parser("test", help="one entry: its snippet tests, and its blocks as every language's page shows them")
    test.add_argument("slug", help="the entry, e.g. causal-mask")
    test.set_defaults(run=cmd_test)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ModuleNotFoundError as exc:  # run outside the project's virtual environment
        print(f"termbase: {exc.name} is not installed here - set up first: {SETUP}", file=sys.stderr)
        sys.exit(2)
