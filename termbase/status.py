"""Translation coverage and freshness.

A translation is outdated when its English source was committed after it. Dates come from
git (one `git log` for the whole tree); a file with uncommitted changes counts as changed now.
Without git history (e.g. a shallow or exported tree) nothing is reported outdated.
"""

from __future__ import annotations

import functools
import subprocess
import time
from dataclasses import dataclass

from termbase.model import DEFAULT_LANG, DOCS, LANGS, ROOT, page_lang


@functools.lru_cache(maxsize=1)
def _commit_times(stamp: float) -> dict[str, float]:
    """Path (relative to the repo) -> time of the last commit that touched it."""
    try:
        log = subprocess.run(
            ["git", "log", "--format=@%ct", "--name-only", "--no-renames", "--", "docs"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", "docs"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    times: dict[str, float] = {}
    current = 0.0
    for line in log.splitlines():
        if line.startswith("@"):
            current = float(line[1:])
        elif line and line not in times:
            times[line] = current  # newest first: the first time seen is the last change
    for line in dirty.splitlines():
        times[line[3:].strip().strip('"')] = stamp
    return times


def commit_times() -> dict[str, float]:
    return _commit_times(round(time.time()))


@dataclass
class PageStatus:
    page: str  # language-neutral path, e.g. glossary/causal-mask.md
    lang: str
    exists: bool
    outdated: bool


def page_statuses() -> list[PageStatus]:
    times = commit_times()
    groups: dict[str, dict[str, str]] = {}
    for path in DOCS.rglob("*.md"):
        rel = path.relative_to(DOCS).as_posix()
        parsed = page_lang(rel)
        if parsed:
            groups.setdefault(parsed[0], {})[parsed[1]] = path.relative_to(ROOT).as_posix()
    out = []
    for page, files in sorted(groups.items()):
        english = times.get(files.get(DEFAULT_LANG, ""), 0.0)
        for lang in LANGS:
            if lang == DEFAULT_LANG:
                continue
            exists = lang in files
            outdated = exists and times.get(files[lang], 0.0) < english
            out.append(PageStatus(page, lang, exists, outdated))
    return out


def is_outdated(page: str, lang: str) -> bool:
    return (page, lang) in _outdated()


@functools.lru_cache(maxsize=1)
def _outdated() -> frozenset[tuple[str, str]]:
    """Asked once per page: a set, not a scan of every page's status."""
    return frozenset((s.page, s.lang) for s in page_statuses_cached() if s.outdated)


@functools.lru_cache(maxsize=1)
def page_statuses_cached() -> tuple[PageStatus, ...]:
    return tuple(page_statuses())


def summary() -> dict[str, dict[str, int]]:
    result = {}
    for lang in LANGS:
        if lang == DEFAULT_LANG:
            continue
        rows = [s for s in page_statuses_cached() if s.lang == lang]
        result[lang] = {
            "pages": len(rows),
            "translated": sum(s.exists for s in rows),
            "outdated": sum(s.outdated for s in rows),
        }
    return result


def forget() -> None:
    _commit_times.cache_clear()
    page_statuses_cached.cache_clear()
    _outdated.cache_clear()
