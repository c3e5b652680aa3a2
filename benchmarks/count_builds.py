"""A pytest plugin the benchmark loads into the suite it times (`-p benchmarks.count_builds`):
every `mkdocs build` or `mkdocs serve` that a test starts, through subprocess, is appended to
$TERMBASE_BENCH_BUILD_LOG as `command<TAB>folder<TAB>pages<TAB>returncode`: the pages are the
Markdown files under the folder's docs/ when it started (so that a build of the small fixture
project is told from one of the real site), the return code is what it ended with when the test
waited for it in a `with` block or through subprocess.run ('-' for a server stopped by the test).
The benchmark counts the full builds of the real site per session (the issue's "at most 3"):
a serve, or a build that succeeded, of a project with at least the real site's pages. Without the
variable it does nothing; the tests themselves never load it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_LOG = os.environ.get("TERMBASE_BENCH_BUILD_LOG")


def _started(args, cwd) -> tuple[str, str, int] | None:
    argv = [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
    if "mkdocs" not in argv or not ("build" in argv or "serve" in argv):
        return None
    folder = os.path.abspath(str(cwd or os.getcwd()))
    pages = sum(1 for _ in (Path(folder) / "docs").rglob("*.md"))
    return ("serve" if "serve" in argv else "build"), folder, pages


def _write(note, returncode) -> None:
    with open(_LOG, "a", encoding="utf-8") as fh:
        fh.write("\t".join(map(str, (*note, returncode))) + "\n")


if _LOG:
    _init, _exit = subprocess.Popen.__init__, subprocess.Popen.__exit__

    def _counted_init(self, args, *rest, **kwargs):
        self._bench_note = _started(args, kwargs.get("cwd"))
        _init(self, args, *rest, **kwargs)
        if self._bench_note and self._bench_note[0] == "serve":
            _write(self._bench_note, "-")

    def _counted_exit(self, *exc):
        try:
            return _exit(self, *exc)
        finally:
            note = getattr(self, "_bench_note", None)
            if note and note[0] == "build":
                _write(note, self.returncode)

    subprocess.Popen.__init__ = _counted_init  # subprocess.run and check_output go through Popen
    subprocess.Popen.__exit__ = _counted_exit  # ... and leave it through its `with` block
