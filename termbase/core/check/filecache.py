"""What the check finds and reads per file: the problems of the rules that read one file alone,
kept per file and reused while nothing they read has changed, so that an edit to one page
re-checks that page's per-file rules only; and what other rules read of a page (below).

Per file today: `pages._check_page` (front matter, inline Python, snippet references, links,
placeholders, the markers' grammar, `$`, every formula through latex2mathml), about a third of
the check. Its key (made in pages.py, `_cached_page`) is what it reads: the page's path and the
docs folder (both relative to the project's root, so that copies of a project share entries),
its neutral name, language and text; the set of neutral page names (links); the term slugs (a
wrong link's suggestion); the bytes of each snippet file the page's `--8<--` lines name (or that
it is missing); the language's decimal sign (ui.yml: its formulas' numbers); the check's code
(every .py file of termbase/core), Python's version and the versions of the packages it parses
with.

Not per file, run every time: the rules that look across files or whose output depends on all
of them: languages' parity and entry structure (pages.py), the term base (records.py, models.py),
snippets and their tests, notebooks, claims, and the language rules (language.py): hunspell's
suggestions go to the first words of the whole language and a listed word is "not needed" only
when no file uses it, so a file's spelling problems cannot be kept apart from the others'.
What they read and ask is kept, though: each page's prose lines (language.py,
`_stored_page_lines`, keyed by the page's text and the check's code) and hunspell's answer for
each word (termbase/core/spelling.py). With both, `python -m termbase check` of the real site
with every file unchanged took 5.0-5.4 s instead of 6.6-8.1 s (3 runs each, alternated, on 2
cores).

The store is a folder of JSON files (core imports nothing of termbase.run): one per key,
written atomically, touched when used; entries unused for `KEEP_DAYS` go at the end of a run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

KEEP_DAYS = 7
FOLDER = "check-files"  # under the project's cache folder: `python -m termbase check` and the build share it
PACKAGES = ("latex2mathml", "PyYAML", "Markdown")


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """termbase/core's code, Python's version (its Unicode tables: `\\w`, casefold) and the
    versions of the packages the rules parse with."""
    digest = hashlib.sha256(sys.version.encode("utf-8"))
    core = Path(__file__).resolve().parents[1]
    for path in sorted(core.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(core).as_posix().encode("utf-8") + b"\0" + path.read_bytes())
    for name in PACKAGES:
        try:
            digest.update(f"{name}=={version(name)}\0".encode("utf-8"))
        except PackageNotFoundError:
            digest.update(f"{name} missing\0".encode("utf-8"))
    return digest.hexdigest()


def digest(*parts: str) -> str:
    found = hashlib.sha256()
    for part in parts:
        found.update(part.encode("utf-8") + b"\0")
    return found.hexdigest()[:32]


class Store:
    """JSON per key: a page's problems, as [[shown, line, what, fix], ...], or what a rule read
    of it (language.py: its prose lines); `checked` and `reused` count the files whose per-file
    rules ran and the files whose problems were taken from here, this run."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.checked: list[str] = []
        self.reused: list[str] = []
        self._used: set[str] = set()

    def get(self, key: str) -> object | None:
        path = self.folder / f"{key}.json"
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
            os.utime(path)
        except (OSError, ValueError):
            return None
        self._used.add(path.name)
        return found

    def put(self, key: str, value: object) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # "." first: a copy of the project skips it (tests/site/sitetools.py: _ignored)
            with tempfile.NamedTemporaryFile("w", dir=self.folder, prefix=".", suffix=".tmp", delete=False,
                                             encoding="utf-8") as out:
                json.dump(value, out)
            os.replace(out.name, self.folder / f"{key}.json")
            self._used.add(f"{key}.json")
        except OSError:  # a full disk or a read-only tree: only speed is lost
            pass

    def cleanup(self) -> None:
        old = time.time() - KEEP_DAYS * 86400
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            try:
                if path.name not in self._used and path.stat().st_mtime < old:
                    path.unlink()
            except OSError:
                pass
