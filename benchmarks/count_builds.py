"""A pytest plugin the benchmark loads into the suite it times (`-p benchmarks.count_builds`):
every `mkdocs build` or `mkdocs serve` that a test starts, through subprocess, is appended to
$TERMBASE_BENCH_BUILD_LOG as `command<TAB>folder`. The benchmark counts them per session (the
issue's "at most 3 full builds of the real site per run"). Without the variable it does nothing;
the tests themselves never load it."""

from __future__ import annotations

import os
import subprocess

_LOG = os.environ.get("TERMBASE_BENCH_BUILD_LOG")


def _note(args, cwd) -> None:
    argv = [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
    if "mkdocs" in argv and ("build" in argv or "serve" in argv):
        command = "serve" if "serve" in argv else "build"
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{command}\t{os.path.abspath(str(cwd or os.getcwd()))}\n")


if _LOG:
    _init = subprocess.Popen.__init__

    def _counted_init(self, args, *rest, **kwargs):
        _note(args, kwargs.get("cwd"))
        _init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = _counted_init  # subprocess.run and check_output go through Popen
