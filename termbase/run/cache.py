"""One content-addressed cache for everything that runs code, safe across processes.

An entry is a folder `<cache_dir>/<namespace>/<key>/`, where the key is a hash of everything
that changes the result: the code, the runner's version, and the versions of Python, torch,
numpy (and any other package the runner names). An entry is written into a temporary folder
and renamed into place, so a reader sees a complete entry or none; writers of the same key
take a file lock, so `mkdocs serve`, the tests and a build can share one cache while all run.
Old entries are removed lazily: an entry nobody has used for `MAX_AGE_S` goes at the next
cleanup, never one another process may still be reading.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

MAX_AGE_S = 7 * 24 * 3600
_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def key(*parts: str, packages=("torch", "numpy")) -> str:
    """The hash of `parts` and of every version that can change what running them gives."""
    digest = hashlib.sha256()
    versions = [sys.version, platform.machine(), *(f"{p}=={version(p)}" for p in packages)]
    for part in [*versions, *parts]:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()[:24]


class Cache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, namespace: str, entry: str) -> Path:
        return self.root / namespace / entry

    def get(self, namespace: str, entry: str) -> Path | None:
        path = self.path(namespace, entry)
        if path.is_dir():
            with contextlib.suppress(OSError):
                os.utime(path)  # used now: not old
            return path
        return None

    @contextlib.contextmanager
    def lock(self, namespace: str, entry: str):
        """Held while one process (and one thread) computes an entry."""
        name = f"{namespace}-{entry}"
        with _thread_locks_guard:
            thread_lock = _thread_locks.setdefault(name, threading.Lock())
        locks = self.root / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        with thread_lock, open(locks / f"{name}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def put(self, namespace: str, entry: str, write) -> Path:
        """Call `write(folder)` on a temporary folder, then move it into place atomically."""
        final = self.path(namespace, entry)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{entry}-", dir=final.parent))
        try:
            write(tmp)
            try:
                os.replace(tmp, final)
            except OSError:  # another process put the same entry first: theirs is as good
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    def get_json(self, namespace: str, entry: str):
        path = self.get(namespace, entry)
        if path is None:
            return None
        try:
            return json.loads((path / "result.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put_json(self, namespace: str, entry: str, value) -> None:
        def write(folder: Path):
            (folder / "result.json").write_text(json.dumps(value), encoding="utf-8")

        self.put(namespace, entry, write)

    def replace_json(self, namespace: str, entry: str, value) -> None:
        """Write `value` as the entry, in place of what it held (`put_json` keeps the first
        writer's): renamed into place, so a reader sees the old value or the new one, whole."""
        folder = self.path(namespace, entry)
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f".result-{os.getpid()}-{threading.get_ident()}.json"
        try:
            part.write_text(json.dumps(value), encoding="utf-8")
            os.replace(part, folder / "result.json")
        finally:
            with contextlib.suppress(OSError):
                part.unlink()

    def cleanup(self, namespace: str, max_age_s: float = MAX_AGE_S) -> None:
        """Remove the entries of `namespace` that nobody used for `max_age_s`."""
        folder = self.root / namespace
        if not folder.is_dir():
            return
        limit = time.time() - max_age_s
        for entry in folder.iterdir():
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < limit:
                    shutil.rmtree(entry, ignore_errors=True)

    def keep_newest(self, namespace: str, count: int) -> None:
        """Remove all but the `count` entries of `namespace` used last (for entries of a few MB
        that every edit under `mkdocs serve` makes anew)."""
        folder = self.root / namespace
        entries = []
        for entry in folder.iterdir() if folder.is_dir() else ():
            with contextlib.suppress(OSError):
                entries.append((entry.stat().st_mtime, entry))
        for _, entry in sorted(entries, reverse=True)[count:]:
            shutil.rmtree(entry, ignore_errors=True)
