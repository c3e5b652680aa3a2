"""Translation coverage and freshness.

A translation is outdated when its English source was committed after it. Dates come from
git (one `git log` for the whole docs folder); a file with uncommitted changes counts as
changed now, so an uncommitted English edit marks its translations outdated until they are
edited too (or committed after it). Without git history (a shallow or exported tree) nothing
is reported outdated.

Two commit trailers say what the dates cannot (docs/how-it-works.en.md, Decisions):
- `Translations: unaffected` on a commit whose English edits need no translation (a typo, a
  respelling): its English files keep the date they had before it.
- `Translation-reviewed: docs/glossary/softmax.es.md` (one line per file) on a commit that
  touches nothing, or anything: a translator checked that file against its English page, so it
  counts as changed by that commit.
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


UNAFFECTED = "Translations"  # trailer key; the value "unaffected" skips English files
REVIEWED = "Translation-reviewed"  # trailer key; the value is a translation's path


def _git(project: Project, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project.root, capture_output=True, text=True,
                          check=True).stdout


def commit_times(project: Project) -> dict[str, float]:
    """Path (relative to the project) -> time of the last commit that changed it, or now."""
    # A commit's header line: @time, a tab, its `Translations:` trailer values.
    header = f"@%ct%x09%(trailers:key={UNAFFECTED},valueonly,separator=%x2C)"
    try:
        docs = project.shown(project.docs)  # mkdocs.yml's docs_dir, relative to the project
        log = _git(project, "log", f"--format={header}", "--name-only", "--no-renames", "--", docs)
        reviews = _git(project, "log", f"--format=@%ct%n%(trailers:key={REVIEWED},valueonly)")
        dirty = _git(project, "status", "--porcelain", "--untracked-files=all", "--", docs)
    except (OSError, subprocess.CalledProcessError):
        return {}
    times: dict[str, float] = {}
    current, unaffected = 0.0, False
    for line in log.splitlines():
        if line.startswith("@"):
            stamp, _, trailer = line[1:].partition("\t")
            current = float(stamp)
            unaffected = "unaffected" in trailer.lower()
        elif line and line not in times and not (unaffected and _is_source(project, line)):
            times[line] = current  # newest first: the first time seen is the last change
    current = 0.0
    for line in reviews.splitlines():
        if line.startswith("@"):
            current = float(line[1:])
        elif line.strip() and times.get(line.strip(), 0.0) < current:
            times[line.strip()] = current
    now = time.time()
    for line in dirty.splitlines():
        times[line[3:].strip().strip('"')] = now
    return times


def _is_source(project: Project, path: str) -> bool:
    """Whether `path` (docs/..., relative to the project) is a page in the default language,
    which translations follow."""
    parsed = page_lang(path.removeprefix(project.shown(project.docs) + "/"), project.languages)
    return parsed is not None and parsed[1] == project.default_language


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
