"""The supervisor of the languages' build processes (termbase/site/supervisor.py), with fake
children that answer, die or hang: nothing is ever dropped (docs/how-it-works.en.md: How a build runs).
Each test takes milliseconds; the real processes are covered by test_broken_sources.py."""

from __future__ import annotations

import logging
import multiprocessing
import threading

import pytest

from termbase.site.supervisor import Supervisor


class FakeProcess:
    """A child as the supervisor sees it: a thread at the other end of a real pipe."""

    def __init__(self, behaviour: str, conn, gate: threading.Event | None = None):
        self.behaviour, self.conn, self.gate = behaviour, conn, gate
        self.exitcode = None
        self.requests: list = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.exitcode is None:
            if not self.conn.poll(0.005):  # a short wait: kill() is seen at once
                continue
            request = self.conn.recv()
            if request is None:
                self.exitcode = 0
                break
            self.requests.append(request)
            if self.behaviour == "gated":  # answers once the test opens the gate
                self.gate.wait(10)
                self.conn.send(("ok", None))
            elif self.behaviour == "ok":
                self.conn.send(("ok", None))
            elif self.behaviour == "fails":
                self.conn.send(("failed", "docs/index.da.md:3: broken"))
            elif self.behaviour == "dies":
                self.exitcode = -9  # as a crash or the OOM killer would
            # "hangs": never answers
        self.conn.close()  # the parent's end then reads EOF, as from a process that ended

    def is_alive(self):
        return self.exitcode is None

    def kill(self):
        if self.exitcode is None:
            self.exitcode = -9

    def join(self, timeout=None):
        self.thread.join(timeout)


class Children:
    """start_child for the supervisor: each language's children behave as listed, in turn."""

    def __init__(self, gate=None, **plans):
        self.gate = gate
        self.plans = {lang: list(plan) for lang, plan in plans.items()}
        self.started: dict[str, list[FakeProcess]] = {}

    def __call__(self, lang):
        parent, child = multiprocessing.Pipe()
        plan = self.plans[lang]
        process = FakeProcess(plan.pop(0) if len(plan) > 1 else plan[0], child, self.gate)
        self.started.setdefault(lang, []).append(process)
        return process, parent


def request(lang):
    return {"site_dir": f"site/{lang}"}


@pytest.fixture
def failures():
    return []


def supervise(children, failures, timeout=5.0):
    return Supervisor(["es", "da"], children, timeout, on_failed=lambda lang, message: failures.append((lang, message)))


def test_every_language_builds_and_is_waited_for(failures):
    children = Children(es=["ok"], da=["ok"])
    supervisor = supervise(children, failures)
    supervisor.start(request)
    assert supervisor.wait() == [] and failures == []
    assert [p.requests for p in children.started["da"]] == [[request("da")]]
    supervisor.close()


def test_a_child_that_dies_while_building_is_started_again_and_builds(failures, caplog):
    children = Children(es=["ok"], da=["dies", "ok"])
    supervisor = supervise(children, failures)
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.termbase"):
        supervisor.start(request)
        assert supervisor.wait() == []
    assert len(children.started["da"]) == 2 and children.started["da"][1].requests == [request("da")]
    assert "the da build process ended (exit code -9) while building; starting it again" in caplog.text
    assert failures == [] and supervisor.languages == ["es", "da"]
    supervisor.close()


def test_a_child_that_keeps_dying_is_named_shown_and_started_again_for_the_next_build(failures, caplog):
    children = Children(es=["ok"], da=["dies", "dies", "ok"])
    supervisor = supervise(children, failures)
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.termbase"):
        supervisor.start(request)
        assert supervisor.wait() == ["the da site failed to build: its process ended (exit code -9)"]
    assert failures == [("da", "its process ended (exit code -9)")]
    assert "the da site failed to build" in caplog.text  # a warning, not a debug line
    assert supervisor.languages == ["es", "da"], "a failed language is never dropped"
    supervisor.start(request)  # the next build: a new child, which builds
    assert supervisor.wait() == [] and len(children.started["da"]) == 3
    supervisor.close()


def test_a_child_that_hangs_is_stopped_at_its_deadline_named_and_replaced(failures):
    children = Children(es=["ok"], da=["hangs", "ok"])
    supervisor = supervise(children, failures, timeout=0.05)
    supervisor.start(request)
    assert not supervisor.settled("da") or failures
    assert supervisor.wait() == ["the da site failed to build: it did not finish within 0 s and was stopped"]
    assert failures == [("da", "it did not finish within 0 s and was stopped")]
    assert children.started["da"][0].exitcode == -9, "the hung child was killed"
    assert supervisor.settled("da") and supervisor.languages == ["es", "da"]
    supervisor.start(request)
    assert supervisor.wait() == [] and len(children.started["da"]) == 2
    supervisor.close()


def test_a_build_that_fails_is_named_and_its_child_kept(failures):
    children = Children(es=["ok"], da=["fails"])
    supervisor = supervise(children, failures)
    supervisor.start(request)
    assert supervisor.wait() == ["the da site failed to build: docs/index.da.md:3: broken"]
    assert failures == [("da", "docs/index.da.md:3: broken")] and len(children.started["da"]) == 1
    supervisor.close()


def test_a_child_found_dead_between_builds_is_started_again(failures):
    children = Children(es=["ok"], da=["ok"])
    supervisor = supervise(children, failures)
    children.started["da"][0].kill()  # between builds
    supervisor.start(request)
    assert supervisor.wait() == [] and len(children.started["da"]) == 2
    supervisor.close()


def test_under_serve_a_failed_language_shows_the_failure_on_its_pages_never_a_404(tmp_path):
    from termbase.core.model import TermBase
    from termbase.site.problems import failure_pages
    from tests.site.sitetools import PROJECT

    written = failure_pages(TermBase(PROJECT), str(tmp_path), "es", "it did not finish within 900 s and was stopped")
    entry = (tmp_path / "es" / "glossary" / "softmax" / "index.html").read_text(encoding="utf-8")
    assert "Español: no se pudo generar el sitio en este idioma" in entry and "within 900 s" in entry
    assert (tmp_path / "es" / "index.html").is_file() and (tmp_path / "es" / "404.html") in written
    assert not (tmp_path / "da").exists() and not (tmp_path / "glossary").exists(), "only that language's pages"


def test_under_serve_a_build_asked_for_while_one_runs_follows_it_and_only_the_latest(failures):
    """Saves made while a language builds: its next build reads them all, once."""
    gate = threading.Event()
    built = []

    class Listener:
        def built(self, lang, outcome, request):
            built.append((lang, request["change"]))

    children = Children(gate=gate, es=["ok"], da=["gated"])
    supervisor = Supervisor(["es", "da"], children, 5.0, listener=Listener())
    supervisor.ask("da", {"change": 1})
    supervisor.ask("da", {"change": 2})  # while the first runs: kept
    supervisor.ask("da", {"change": 3})  # replaces it
    assert not supervisor.settled("da")
    gate.set()
    assert supervisor.wait() == []
    assert children.started["da"][0].requests == [{"change": 1}, {"change": 3}]
    assert built == [("da", 1), ("da", 3)] and supervisor.settled("da")
    supervisor.close()


def test_the_default_language_failing_under_serve_shows_at_the_site_root(tmp_path):
    from termbase.core.model import TermBase
    from termbase.site.problems import failure_pages
    from tests.site.sitetools import PROJECT

    failure_pages(TermBase(PROJECT), str(tmp_path), "en", "its process ended (exit code -9)")
    assert "exit code -9" in (tmp_path / "glossary" / "softmax" / "index.html").read_text(encoding="utf-8")
    assert (tmp_path / "404.html").is_file() and not (tmp_path / "en").exists()


def test_a_child_whose_parent_has_gone_ends_quietly(capsys):
    """Serve stopped (Ctrl+C, or a test's terminate) while a child held an unread answer: its
    pipe reads 'connection reset', not EOF. The child ends without a traceback either way."""
    from termbase.site.language_process import _answer, _worker_main

    for unread in (True, False):
        parent, child = multiprocessing.Pipe()
        if unread:
            child.send(("ok", None))  # the parent never read it: the reset comes from this
        parent.close()
        _worker_main(child, "mkdocs.yml", "docs", "da", {}, logging.WARNING, "mkdocs")
        assert not _answer(child, ("ok", None)), "an answer to a parent that has gone is not sent"
    assert "Traceback" not in capsys.readouterr().err
