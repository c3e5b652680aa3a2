"""Translation coverage and freshness.

A translation is outdated when its English source was committed after it. Dates come from
git (one `git log` for the whole docs folder); a file with uncommitted changes counts as
changed now, so an uncommitted English edit marks its translations outdated until they are
edited too (or committed after it). Without git history (a shallow or exported tree) nothing
is reported outdated.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass

from termbase.core.model import page_lang
from termbase.core.project import Project


@dataclass(frozen=True)
class PageStatus:
    page: str  # language-neutral path, e.g. glossary/causal-mask.md
    lang: str
    exists: bool
    outdated: bool


def commit_times(project: Project) -> dict[str, float]:
    """Path (relative to the project) -> time of the last commit that touched it, or now."""
    try:
        log = subprocess.run(
            ["git", "log", "--format=@%ct", "--name-only", "--no-renames", "--", "docs"],
            cwd=project.root, capture_output=True, text=True, check=True,
        ).stdout
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", "docs"],
            cwd=project.root, capture_output=True, text=True, check=True,
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
    now = time.time()
    for line in dirty.splitlines():
        times[line[3:].strip().strip('"')] = now
    return times


class Status:
    """The translation status of a project, computed once (one git call) when made."""

    def __init__(self, project: Project):
        self.project = project
        times = commit_times(project)
        groups: dict[str, dict[str, str]] = {}
        for path in project.docs.rglob("*.md"):
            parsed = page_lang(path.relative_to(project.docs).as_posix(), project.languages)
            if parsed:
                groups.setdefault(parsed[0], {})[parsed[1]] = path.relative_to(project.root).as_posix()
        rows = []
        for page, files in sorted(groups.items()):
            source = times.get(files.get(project.default_language, ""), 0.0)
            for lang in project.other_languages:
                exists = lang in files
                rows.append(PageStatus(page, lang, exists, exists and times.get(files[lang], 0.0) < source))
        self.pages: tuple[PageStatus, ...] = tuple(rows)
        self._outdated = frozenset((s.page, s.lang) for s in rows if s.outdated)

    def is_outdated(self, page: str, lang: str) -> bool:
        return (page, lang) in self._outdated

    def summary(self) -> dict[str, dict[str, int]]:
        result = {}
        for lang in self.project.other_languages:
            rows = [s for s in self.pages if s.lang == lang]
            result[lang] = {"pages": len(rows), "translated": sum(s.exists for s in rows),
                            "outdated": sum(s.outdated for s in rows)}
        return result
