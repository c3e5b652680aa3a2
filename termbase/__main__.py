"""`python -m termbase check|new|status|export|figures`."""

import argparse
import sys

from termbase import check


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m termbase", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="validate terms, pages and snippets")
    args = parser.parse_args(argv)
    if args.command == "check":
        problems = check.run()
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problem(s)" if problems else "termbase check: everything is in order")
        return 1 if problems else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
