"""Runs the site's code blocks, each once per content and versions (the cache), in a worker
that imports torch once and forks a child per block (termbase/run/block_worker.py).

The build runs every block a page embeds before anything is written; the tests use the same
runner, so a block the build already ran is not run again by the suite, and vice versa.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from termbase.run.cache import Cache, key

RUNNER_VERSION = "2"  # bump when the way blocks are run changes what they print
WORKER = Path(__file__).with_name("block_worker.py")
NAMESPACE = "blocks"
TIMEOUT_S = 300


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str
    seconds: float = 0.0
    cached: bool = False


def block_key(code: str) -> str:
    return key(RUNNER_VERSION, code)


class BlockRunner:
    """Submit programs, get Futures of Results. One worker process, started on first need."""

    def __init__(self, cache: Cache | None = None, timeout_s: float = TIMEOUT_S):
        self.cache = cache
        self.timeout_s = timeout_s
        self._worker: subprocess.Popen | None = None
        self._futures: dict[int, tuple[Future, str]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._folder = None

    def submit(self, code: str) -> Future:
        future: Future = Future()
        entry = block_key(code)
        hit = self.cache.get_json(NAMESPACE, entry) if self.cache else None
        if hit is not None:
            future.set_result(Result(hit["returncode"], hit["stdout"], hit["stderr"], hit.get("seconds", 0.0), True))
            return future
        with self._lock:
            worker = self._start()
            request_id = next(self._ids)
            self._futures[request_id] = (future, entry)
            worker.stdin.write(json.dumps({"id": request_id, "code": code, "timeout": self.timeout_s}) + "\n")
            worker.stdin.flush()
        return future

    def run(self, code: str) -> Result:
        return self.submit(code).result()

    def run_all(self, codes) -> dict[str, Result]:
        futures = {code: self.submit(code) for code in dict.fromkeys(codes)}
        return {code: future.result() for code, future in futures.items()}

    def _start(self) -> subprocess.Popen:
        if self._worker is not None and self._worker.poll() is None:
            return self._worker
        self._folder = tempfile.mkdtemp(prefix="termbase-runner-")
        # -I: isolated, so the copied code sees neither this repository nor PYTHONPATH.
        self._worker = subprocess.Popen(
            [sys.executable, "-I", str(WORKER)], cwd=self._folder, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
        )
        threading.Thread(target=self._read, args=(self._worker,), daemon=True).start()
        return self._worker

    def _read(self, worker: subprocess.Popen) -> None:
        for line in worker.stdout:
            reply = json.loads(line)
            with self._lock:
                future, entry = self._futures.pop(reply["id"])
            result = Result(reply["returncode"], reply["stdout"], reply["stderr"], reply["seconds"])
            if self.cache is not None and result.returncode in (0, 1):  # not a timeout or a kill
                self.cache.put_json(NAMESPACE, entry, reply | {"id": None})
            future.set_result(result)
        # The worker is gone: whatever it still owed fails, with what it said last.
        error = worker.stderr.read() if worker.stderr else ""
        with self._lock:
            owed, self._futures = list(self._futures.values()), {}
        for future, _ in owed:
            future.set_result(Result(-1, "", f"the block runner stopped: {error[-2000:]}"))

    def close(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stdin.close()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        if self._folder:
            import shutil

            shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def first_difference(expected: list[str], printed: str) -> str | None:
    """None when `printed` is exactly `expected` (every line), else where they first differ."""
    lines = printed.splitlines()
    for number, (want, got) in enumerate(zip(expected, lines), 1):
        if want != got:
            return f"line {number}: expected {want!r}, printed {got!r}"
    if len(lines) > len(expected):
        return f"line {len(expected) + 1}: printed {lines[len(expected)]!r}, expected nothing more"
    if len(lines) < len(expected):
        return f"line {len(lines) + 1}: expected {expected[len(lines)]!r}, printed nothing more"
    return None
