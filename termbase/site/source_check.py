"""`termbase check` at the start of a build and in `python -m termbase check`, skipped when
nothing it reads has changed since it last found nothing wrong, in a build or in the command
(but with `--fresh`; `--no-spelling` checks less, so it neither skips nor keeps).

The check reads sources all over the project (pages, records, snippets and their tests, the
notebooks, the word lists, the style guides) and its own code; a hash of every file of the
project outside generated folders, plus the hunspell dictionaries and the versions of the
packages it parses with, costs about 30 ms on the real site, against about 5 s for the check
(`python -m termbase check`, 2 cores). Only a clean result is remembered: a
project with problems is checked again every time, so every build lists them. When the check
runs, the rules that read one file alone reuse their problems per file (termbase/core/check/
filecache.py), so an edit to one page re-checks that page's per-file rules only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from termbase.core import check
from termbase.core.check import filecache
from termbase.core.project import PACKAGE, Project
from termbase.run.cache import Cache, key

NAMESPACE = "check"
# Generated or installed, never read by the check, wherever they are: caches, test artefacts,
# virtual environments (also any folder holding a pyvenv.cfg). The site folders: see `inputs`.
SKIPPED = {"__pycache__", "node_modules", "artifacts"}
DICTIONARIES = Path("/usr/share/hunspell")


def _tree(digest, root: Path, skipped: set[Path]) -> None:
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED and not d.endswith(".egg-info")
                         and (here / d).resolve() not in skipped and not (here / d / "pyvenv.cfg").exists())
        for name in sorted(files):
            path = here / name
            try:
                content = path.read_bytes()
            except OSError:
                continue
            digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(content).digest())


def inputs(project: Project, site_dir: Path | None = None, *more_site_dirs: Path) -> str:
    """A hash of everything `check.run` reads (`site_dir`: where this build writes, skipped)."""
    # `site/`: MkDocs' default site_dir, at the root only (termbase/site/ is code).
    skipped = {project.cache_dir.resolve(), (project.root / "benchmarks" / "work").resolve(),
               (project.root / "site").resolve()}
    skipped |= {Path(folder).resolve() for folder in (site_dir, *more_site_dirs) if folder is not None}
    digest = hashlib.sha256()
    _tree(digest, project.root, skipped)
    if not PACKAGE.is_relative_to(project.root.resolve()):
        _tree(digest, PACKAGE, skipped)  # the check's own code, installed elsewhere
    hunspell = shutil.which("hunspell")  # the program too: another version may answer otherwise
    files = sorted(DICTIONARIES.glob("*")) if DICTIONARIES.is_dir() else []
    for path in files + ([Path(hunspell)] if hunspell else []):
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\0".encode("utf-8"))
    return key(digest.hexdigest(), os.environ.get("PATH", ""), packages=("PyYAML", "latex2mathml", "Markdown"))


def run(project: Project, site_dir: Path | None = None, entry: str | None = None, *,
        fresh: bool = False, spelling: bool = True) -> check.Report:
    """`check.run(project)`, or an empty report when the same inputs were found clean before
    (`entry`: their hash, if the caller has made it with `inputs`). `fresh`: every rule runs
    now, on every file (no clean result, nothing of filecache's store; hunspell's answers are
    still reused); a clean result is kept as always. `spelling=False` (`termbase check
    --no-spelling`) checks less: no clean result is read or kept."""
    cache = Cache(project.cache_dir)
    entry = (entry or inputs(project, site_dir)) if spelling else None
    if entry and not fresh and cache.get_json(NAMESPACE, entry) is not None:
        return check.Report(project)
    store = None if fresh else filecache.Store(project.cache_dir / filecache.FOLDER)
    report = check.run(project, spelling=spelling, store=store)
    if store is not None:
        store.cleanup()
    if entry and not report and not report.notes:
        with contextlib.suppress(OSError):  # a read-only or full disk: only speed is lost
            cache.put_json(NAMESPACE, entry, {"problems": 0})
            cache.cleanup(NAMESPACE)
    return report
