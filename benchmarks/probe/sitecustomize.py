"""Loaded by the builds that benchmarks/ measures (PYTHONPATH=benchmarks/probe): appends one line
to $TERMBASE_BENCH_NOTEBOOK_LOG each time a Jupyter kernel is started to execute a notebook
(nbclient, which nbconvert and mkdocs-jupyter use), and, at exit, one line to
$TERMBASE_BENCH_IMPORT_LOG naming the file `termbase` was imported from (the benchmarks check that
a build of a copy runs the copy's plugin, not the editable install's). Nothing else changes;
without the variables this file does nothing."""

import os
import sys


def _on_import(target: str, patch) -> None:
    """Call patch(module) once `target` has been imported, wherever the import comes from."""
    import importlib.abc
    import importlib.util

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target_=None):
            if name != target:
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def patched(module):
                exec_module(module)
                patch(module)

            spec.loader.exec_module = patched
            return spec

    sys.meta_path.insert(0, _Finder())

_IMPORTS = os.environ.get("TERMBASE_BENCH_IMPORT_LOG")

if _IMPORTS:
    import atexit

    def _name_termbase():
        module = sys.modules.get("termbase")
        if module is not None:
            with open(_IMPORTS, "a", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()}\t{getattr(module, '__file__', None)}\n")

    atexit.register(_name_termbase)

_LOG = os.environ.get("TERMBASE_BENCH_NOTEBOOK_LOG")

if _LOG:
    import time

    def _patch(module):
        client = getattr(module, "NotebookClient", None)
        if client is None or getattr(client, "_termbase_probe", False):
            return
        original_async = client.async_start_new_kernel
        original_sync = client.start_new_kernel  # run_sync(original_async), bound at class creation

        def note(self):
            resources = getattr(self, "resources", None) or {}
            where = (resources.get("metadata") or {}).get("path") or os.getcwd()
            with open(_LOG, "a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.3f}\t{os.getpid()}\t{where}\n")

        async def async_start_new_kernel(self, *args, **kwargs):
            note(self)
            return await original_async(self, *args, **kwargs)

        def start_new_kernel(self, *args, **kwargs):
            note(self)
            return original_sync(self, *args, **kwargs)

        client.async_start_new_kernel = async_start_new_kernel
        client.start_new_kernel = start_new_kernel
        client._termbase_probe = True

    _on_import("nbclient.client", _patch)

# TERMBASE_BENCH_IGNORE_CHECK=<file>: the build runs `termbase check` in full (its cost stays in
# the measurement) but goes on when the sources have problems, and writes how many to <file>.
# Only for a tree whose own sources fail the check (run.py says so in RESULTS.md): the time of
# a build is still measured, where it would otherwise stop before writing anything.
_IGNORE = os.environ.get("TERMBASE_BENCH_IGNORE_CHECK")

if _IGNORE:

    def _wrap_check(module):
        original = module.run

        def run(*args, **kwargs):
            report = original(*args, **kwargs)
            if len(report):
                with open(_IGNORE, "a", encoding="utf-8") as fh:
                    fh.write(f"{len(report)}\t{report[0]}\n")
                del report[:]
            return report

        module.run = run

    _on_import("termbase.core.check", _wrap_check)

# TERMBASE_BENCH_SAMPLE_DIR=<folder>: a sampling profiler in every process of a build (MkDocs'
# own, each language's, mkdocs serve's build thread). Every 5 ms a thread records the stack of
# each thread that is inside a build (a frame of mkdocs/commands/build.py's `build`), weighted
# by the wall time since the previous sample: for every function on the stack (inclusive), for
# the one on top (self), and for the phase (the two calls below `build`). Wall-clock time, so
# waiting shows too (for a subprocess, a lock, another language). SIGUSR1 starts over (mkdocs
# serve: after start-up); at exit the counts go to <folder>/<pid>.json. With
# TERMBASE_BENCH_SAMPLE_PAUSED=1 it samples nothing until SIGUSR1; SIGUSR2 writes the counts now
# and pauses (mkdocs serve: only the edits between the two signals are profiled).
_SAMPLES = os.environ.get("TERMBASE_BENCH_SAMPLE_DIR")

if _SAMPLES:
    import atexit as _atexit
    import json as _json
    import signal as _signal
    import threading as _threading
    import time as _time

    _INTERVAL = 0.005
    _state = {"inclusive": {}, "self": {}, "phases": {}, "samples": 0, "seconds_in_build": 0.0,
              "since": _time.time(), "cpu_since": _time.process_time(),
              "on": os.environ.get("TERMBASE_BENCH_SAMPLE_PAUSED") != "1"}

    def _where(code):
        name = code.co_filename
        for marker in ("site-packages/", "/lib/python3.11/"):
            if marker in name:
                name = name.split(marker, 1)[1]
                break
        else:
            if "/termbase/" in name:
                name = "termbase/" + name.split("/termbase/", 1)[1]
        return f"{name}:{code.co_firstlineno}({code.co_name})"

    def _is_build(code):
        return code.co_name == "build" and code.co_filename.endswith(("mkdocs/commands/build.py",
                                                                      "properdocs/commands/build.py"))

    def _phase(frame):
        """The stack below `build`, two levels deep (MkDocs' event dispatch skipped), e.g.
        `_build_page > ...` or `on_pre_build > run`: None when the thread is not building."""
        stack = []
        while frame is not None:
            if _is_build(frame.f_code):
                callees = [c for c in reversed(stack) if not c.co_filename.endswith(("/plugins.py", "/contextlib.py",
                                                                                      "sitecustomize.py"))
                           or "/termbase/" in c.co_filename]
                return " > ".join(_where(c) for c in callees[:2]) or "build"
            stack.append(frame.f_code)
            frame = frame.f_back
        return None

    def _sample():
        me = _threading.get_ident()
        last = _time.perf_counter()
        while True:
            _time.sleep(_INTERVAL)
            # Each sample stands for the wall time since the previous one: on a busy machine this
            # thread wakes late, and counting samples would undercount the stacks that compute.
            now = _time.perf_counter()
            weight, last = now - last, now
            if not _state["on"]:
                continue
            for ident, frame in list(sys._current_frames().items()):
                phase = None if ident == me else _phase(frame)
                if phase is None:
                    continue
                _state["samples"] += 1
                _state["seconds_in_build"] += weight
                _state["phases"][phase] = _state["phases"].get(phase, 0) + weight
                top = _where(frame.f_code)
                _state["self"][top] = _state["self"].get(top, 0) + weight
                seen = set()
                while frame is not None:
                    seen.add(_where(frame.f_code))
                    frame = frame.f_back
                for name in seen:
                    _state["inclusive"][name] = _state["inclusive"].get(name, 0) + weight

    def _reset(*_):
        _state.update(inclusive={}, self={}, phases={}, samples=0, seconds_in_build=0.0, since=_time.time(),
                      cpu_since=_time.process_time(), on=True)

    def _dump_now(*_):
        _state["on"] = False
        _dump()
        _state.update(samples=0)  # written: nothing more at exit

    def _dump():
        if not _state["samples"]:
            return
        os.makedirs(_SAMPLES, exist_ok=True)
        with open(os.path.join(_SAMPLES, f"{os.getpid()}.json"), "w", encoding="utf-8") as fh:
            process = sys.modules.get("multiprocessing")
            name = process.current_process().name if process else "MainProcess"
            _json.dump({"pid": os.getpid(), "argv": sys.argv, "process": name, "interval_s": _INTERVAL,
                        "seconds": _time.time() - _state["since"],
                        "cpu_s": _time.process_time() - _state["cpu_since"], **_state}, fh)

    try:
        _signal.signal(_signal.SIGUSR1, _reset)
        _signal.signal(_signal.SIGUSR2, _dump_now)
    except ValueError:  # not the main thread
        pass
    _threading.Thread(target=_sample, name="termbase-bench-sampler", daemon=True).start()
    _atexit.register(_dump)
