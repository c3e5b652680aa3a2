"""`python -m termbase check|new|status|export|figures`: the term base's command-line tool."""

import argparse
import sys
from pathlib import Path

from termbase import check


def cmd_check(args) -> int:
    problems = check.run()
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "termbase check: everything is in order")
    return 1 if problems else 0


def cmd_new(args) -> int:
    from termbase import new
    from termbase.model import ROOT

    try:
        created = new.scaffold(args.slug)
    except (ValueError, FileExistsError) as exc:
        print(f"termbase new: {exc}", file=sys.stderr)
        return 2
    for path in created:
        print("created", path.relative_to(ROOT))
    print(new.NEXT_STEPS.format(slug=args.slug, module=args.slug.replace("-", "_")))
    return 0


def cmd_status(args) -> int:
    from termbase import status
    from termbase.model import ui

    for lang, numbers in status.summary().items():
        print(f"{ui()['language_name'][lang]:8} {numbers['translated']}/{numbers['pages']} pages translated, "
              f"{numbers['outdated']} outdated")
    for row in status.page_statuses():
        if row.outdated or not row.exists:
            print(f"  {row.lang}: {row.page} {'outdated' if row.exists else 'missing'}")
    return 0


def cmd_export(args) -> int:
    from termbase import export

    text = export.render(args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_figures(args) -> int:
    from termbase import figures  # matplotlib and torch: imported only for this command

    for path in figures.draw_all(args.out or figures.OUT):
        print("drew", path)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m termbase", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="validate terms, pages and snippets").set_defaults(run=cmd_check)
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
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
