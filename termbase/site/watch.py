"""What `mkdocs serve` watches, and the one change it cannot apply while running.

MkDocs watches docs/ and mkdocs.yml; the site also reads the snippets, the term base, the
tests (each block's EXPECTED_OUTPUT, the claims), the theme overrides, the pinned versions and
the benchmark results, so a save in any of them rebuilds too (`server.watch`, MkDocs' public
API, from the plugin's `on_serve`). The server imports the site's own Python once: after an
edit under termbase/ every page says to restart it, and serving goes on with the old code.
"""

from __future__ import annotations

import logging
from pathlib import Path

from termbase.core.project import Project

log = logging.getLogger("mkdocs.plugins.termbase")


def watched(project: Project) -> list[Path]:
    """What the site reads besides docs/ and mkdocs.yml (which MkDocs watches itself)."""
    root = project.root
    paths = [project.snippets, project.data_dir, root / "termbase", project.tests, root / "overrides",
             root / "requirements.txt", root / "requirements-torch.txt", root / "benchmarks" / "results.json"]
    return [path for path in dict.fromkeys(paths) if path.exists()]


def _version(project: Project) -> dict[str, int]:
    return {p.as_posix(): p.stat().st_mtime_ns for p in (project.root / "termbase").rglob("*.py")}


class Code:
    """The site's code as `mkdocs serve` imported it."""

    def __init__(self, project: Project):
        self.project = project
        self.started = _version(project)

    def stale(self) -> str | None:
        """What to tell the contributor when a module changed since the server started, or None."""
        now = _version(self.project)
        changed = sorted(path for path, mtime in now.items() if self.started.get(path) != mtime)
        if not changed:
            return None
        message = (f"{self.project.shown(Path(changed[0]))} changed since `mkdocs serve` started, and the server "
                   "still runs the old code - stop it (Ctrl+C) and start `mkdocs serve` again")
        log.warning("termbase: %s", message)
        return message
