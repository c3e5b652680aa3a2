"""The processes that build the other languages, and what happens when one dies or hangs.

Each language other than the default one builds in a child process (termbase/site/
language_process.py starts the real ones; a test passes fake ones). The supervisor asks each
child to build, one build at a time, and holds the deadline itself (`language_timeout`): a
child still building at its deadline is killed. Nothing is ever dropped:
- a child that dies in the middle of a build (a crash, the OOM killer) is started again and
  asked for the same build once more; if that one fails too, the build has failed;
- a child that hangs is killed at the deadline and the build has failed; a new child is started
  for the next build;
- a child found dead between builds is started again before its next build;
- every failure is returned by `wait()`, named by language (`mkdocs build` fails with it), and
  reported as it happens to `on_failed` (under `mkdocs serve`: a warning in the terminal and the
  failure on that language's pages, termbase/site/problems.py) and logged at warning level.
Under `mkdocs serve` a build may be asked for while the last one is still running: it is kept
and sent when that one ends (only the latest: it reads the sources as they are then), and the
`listener` (termbase/site/serve.py) hears of each build that ended and each preview written.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger("mkdocs.plugins.termbase")
GRACE = 30.0  # seconds a killed child may take to be gone, beyond the deadline


class Worker:
    """One language's child: its current process and pipe, and the build it owes."""

    def __init__(self, lang: str, supervisor: "Supervisor"):
        self.lang = lang
        self.supervisor = supervisor
        self.changed = threading.Condition()
        self.busy = False  # a build was asked for and is not answered yet
        self.request: dict | None = None
        self.next: dict | None = None  # asked for while busy: sent when the build under way ends
        self.retried = False
        self.killed = False  # at the deadline, by the supervisor
        self.timer: threading.Timer | None = None
        self.answers: list[tuple[str, str | None]] = []
        self.starts = 0
        self.closing = False
        self.process = self.conn = None
        self._spawn()

    def _spawn(self) -> None:
        self.process, self.conn = self.supervisor.start_child(self.lang)
        self.killed = False
        self.starts += 1
        threading.Thread(target=self._read, args=(self.process, self.conn), name=f"termbase-{self.lang}-answers",
                         daemon=True).start()

    def ask(self, request: dict) -> None:
        with self.changed:
            if self.busy:
                self.next = request
                return
            self._begin(request)

    def _begin(self, request: dict) -> None:
        if not self.process.is_alive():
            log.warning("termbase: the %s build process had ended (exit code %s); starting a new one",
                        self.lang, self.process.exitcode)
            self._spawn()
        self.busy, self.request, self.retried = True, request, False
        self._arm()
        self._send(request)

    def preview(self, request: dict) -> bool:
        """Ask for previews (answered ahead of any build asked for later); False if the child is
        building now (it answers when that build ends) or gone (the next build starts a new one)."""
        with self.changed:
            if not self.process.is_alive():
                return False
            self._send(request)
            return not self.busy

    def _send(self, request) -> None:
        try:
            self.conn.send(request)
        except (OSError, ValueError):  # already gone: its reader reports it
            pass

    def _arm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = threading.Timer(self.supervisor.timeout, self._expire, args=(self.process,))
        self.timer.daemon = True
        self.timer.start()

    def _expire(self, process) -> None:
        with self.changed:
            if not self.busy or process is not self.process:
                return
            self.killed = True
        log.warning("termbase: the %s site did not finish within %.0f s; stopping its process", self.lang,
                    self.supervisor.timeout)
        process.kill()

    def _read(self, process, conn) -> None:
        while True:
            try:
                answer = conn.recv()
            except (EOFError, OSError):
                answer = None
            if answer is not None and answer[0] == "preview":  # pages ahead of a rebuild, not a build
                listener = self.supervisor.listener
                if listener is not None:
                    listener.previewed(self.lang, answer[1])
                continue
            if answer is None:
                process.join(timeout=5)
            with self.changed:
                if process is not self.process:
                    return  # the pipe of a child that was replaced
                if answer is None and self.closing:
                    return
                if answer is None and not self.busy:
                    log.warning("termbase: the %s build process ended (exit code %s); a new one starts with "
                                "the next build", self.lang, process.exitcode)
                    return
                if answer is None and not self.killed and not self.retried:
                    log.warning("termbase: the %s build process ended (exit code %s) while building; starting it "
                                "again", self.lang, process.exitcode)
                    self.retried = True
                    self._spawn()
                    self._arm()
                    self._send(self.request)
                    return
                if answer is None:
                    outcome = ("failed", f"it did not finish within {self.supervisor.timeout:.0f} s and was stopped"
                               if self.killed else f"its process ended (exit code {process.exitcode})")
                else:
                    outcome = answer
                if self.timer is not None:
                    self.timer.cancel()
            self.supervisor.settled_one(self.lang, outcome, self.request)  # before anyone waiting hears of it
            with self.changed:
                self.answers.append(outcome)
                following, self.next = self.next, None
                if following is not None and not self.closing:
                    self._begin(following)
                else:
                    self.busy = False
                self.changed.notify_all()
            if answer is None:
                return

    def wait(self, timeout: float | None = None) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: not self.busy, timeout=timeout)


class Supervisor:
    """`start_child(lang) -> (process, conn)`: a started child and the parent's end of its pipe;
    `process` has is_alive(), kill(), join(timeout) and exitcode (multiprocessing.Process)."""

    def __init__(self, languages, start_child: Callable, timeout: float, listener=None,
                 on_failed: Callable[[str, str], None] | None = None):
        self.start_child = start_child
        self.timeout = timeout
        self.listener = listener  # under `mkdocs serve`: told of previews and of each finished build
        self.on_failed = on_failed
        self.workers = [Worker(lang, self) for lang in languages]

    def add(self, lang: str) -> None:
        """Supervise one more language (under `mkdocs serve`: the default one, which MkDocs'
        process built first and a child of its own rebuilds)."""
        if lang not in self.languages:
            self.workers.append(Worker(lang, self))

    def start(self, requests: Callable[[str], dict]) -> None:
        """Ask every language to build (`requests(lang)`: its request)."""
        for worker in self.workers:
            worker.ask(requests(worker.lang))

    def ask(self, lang: str, request: dict) -> None:
        """Ask one language to build."""
        for worker in self.workers:
            if worker.lang == lang:
                worker.ask(request)

    def settled_one(self, lang: str, outcome, request: dict | None = None) -> None:
        status, message = outcome
        if status != "ok":
            log.warning("termbase: the %s site failed to build: %s", lang, message)
            if self.on_failed is not None:
                try:
                    self.on_failed(lang, message)
                except Exception as exc:  # noqa: BLE001 - the terminal still says it
                    log.warning("termbase: could not show the %s failure on its pages: %s", lang, exc)
        if self.listener is not None:
            self.listener.built(lang, outcome, request)

    def wait(self) -> list[str]:
        """Wait for every build asked for (each ends by its deadline); one line per language that
        failed. Every language stays supervised: a dead child is started again for the next build."""
        failed = []
        for worker in self.workers:
            if not worker.wait(self.timeout + GRACE):
                with worker.changed:  # killed, and still not gone: count it failed anyway
                    worker.busy = False
                    worker.answers.append(("failed", f"it did not finish within {self.timeout:.0f} s"))
            with worker.changed:
                failures = [message for status, message in worker.answers if status != "ok"]
                worker.answers.clear()
            if failures:
                failed.append(f"the {worker.lang} site failed to build: {failures[-1]}")
        return failed

    def preview(self, requests: dict[str, dict]) -> set[str]:
        """Ask each language of `requests` for its previews, ahead of any build asked for later;
        the languages that answer now (the others: when the build under way ends)."""
        return {worker.lang for worker in self.workers if worker.lang in requests
                and worker.preview(requests[worker.lang])}

    def settled(self, lang: str) -> bool:
        return all(not worker.busy for worker in self.workers if worker.lang == lang)

    @property
    def languages(self) -> list[str]:
        return [worker.lang for worker in self.workers]

    def close(self) -> None:
        for worker in self.workers:
            with worker.changed:
                worker.closing = True
                worker.next = None
            if worker.timer is not None:
                worker.timer.cancel()
            worker._send(None)
        for worker in self.workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.kill()
        self.workers = []
