"""Under `mkdocs serve`, a language's rebuild goes live only once it has finished.

A language rebuilds into a folder of its own (MkDocs empties that folder first, so building
straight into the served one would answer 404 until the build ends), then `publish` makes the
served folder hold exactly what the build wrote: each file that differs is replaced in one step
(written beside it, then renamed over it), each file the build no longer writes is removed.
A page is therefore either the old one or the new one, never missing and never half written,
and after the publish nothing older than the build is left (the previews of edited pages
included: termbase/site/serve.py). `keep` names entries at the top of the served folder that
belong to someone else (the other languages' folders under the default language's root).
"""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path


def write(target: Path, content: bytes) -> None:
    """Replace `target` with `content` in one step (a reader sees the old file or the new one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.termbase-new")  # one per writing process
    temporary.write_bytes(content)
    os.replace(temporary, target)


def publish(built: Path, served: Path, keep: frozenset[str] | set[str] = frozenset()) -> int:
    """Make `served` hold what `built` holds, `keep` aside; the number of files changed."""
    changed = 0
    wanted: set[Path] = set()
    for folder, dirs, files in os.walk(built):
        here = Path(folder)
        relative = here.relative_to(built)
        if relative == Path("."):
            dirs[:] = [d for d in dirs if d not in keep]
        (served / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            wanted.add(relative / name)
            source, target = here / name, served / relative / name
            if target.is_file() and filecmp.cmp(source, target, shallow=False):
                continue
            temporary = target.with_name(f".{name}.termbase-new")
            shutil.copyfile(source, temporary)
            os.replace(temporary, target)
            changed += 1
    for folder, dirs, files in os.walk(served, topdown=False):
        here = Path(folder)
        relative = here.relative_to(served)
        if relative.parts and relative.parts[0] in keep:
            continue
        for name in files:
            if relative == Path(".") and name in keep or relative / name in wanted:
                continue
            (here / name).unlink(missing_ok=True)
            changed += 1
        if relative != Path(".") and not any(here.iterdir()):
            here.rmdir()
    return changed
