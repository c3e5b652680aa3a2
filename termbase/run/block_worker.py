"""Runs code blocks as a reader runs them, `python block.py` in an empty folder, but fast:
this process imports torch once, then forks one child per block.

It is started as a script in isolated mode (`python -I block_worker.py`), so neither this
repository nor the caller's folder is importable, exactly as for a reader who copied the code.
It runs no torch operation itself before forking (OpenMP's threads are not fork-safe; importing
torch starts none). Protocol: one JSON request per line on stdin, {"id", "code", "timeout"};
one JSON answer per line on stdout, {"id", "returncode", "stdout", "stderr", "seconds"}.
Only the standard library and the packages a reader installs are imported here.
"""

import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types

import torch  # noqa: F401  imported once, before any fork: what every block pays for otherwise

try:
    import numpy  # noqa: F401
except ImportError:
    pass

PARALLEL = max(1, os.cpu_count() or 1)


def child(code: str, folder: str) -> None:
    """In the forked child: become `python block.py` run from `folder`, and exit."""
    out = os.open(os.path.join(folder, ".stdout"), os.O_WRONLY | os.O_CREAT)
    err = os.open(os.path.join(folder, ".stderr"), os.O_WRONLY | os.O_CREAT)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(0)
    work = os.path.join(folder, "work")  # empty but for block.py, as a reader's folder
    os.mkdir(work)
    os.chdir(work)
    script = os.path.join(work, "block.py")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(code)
    sys.argv = ["block.py"]
    sys.path[0:0] = [work]
    code_object = compile(code, script, "exec")
    # A real module registered as __main__, as `python block.py` makes: code that looks itself
    # up there (pickle, torch.compile's guards in flex_attention) finds its own globals.
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(code_object, main.__dict__)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - reported as Python reports it
        # Print as the interpreter would: the block's own frames, not this runner's.
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def main() -> None:
    base = tempfile.mkdtemp(prefix="termbase-blocks-")
    running = {}  # pid -> (request, folder, started)
    waiting = []
    pending = b""  # bytes read from stdin, not yet a whole line (os.read: no hidden buffer)
    stdin_open = True
    try:
        while stdin_open or waiting or running:
            while waiting and len(running) < PARALLEL:
                request = waiting.pop(0)
                folder = tempfile.mkdtemp(dir=base)
                sys.stdout.flush()
                pid = os.fork()
                if pid == 0:
                    child(request["code"], folder)
                running[pid] = (request, folder, time.monotonic())
            if stdin_open:
                ready, _, _ = select.select([0], [], [], 0.005 if running else None)
                if ready:
                    chunk = os.read(0, 1 << 16)
                    stdin_open = bool(chunk)
                    *lines, pending = (pending + chunk).split(b"\n")
                    waiting += [json.loads(line) for line in lines if line.strip()]
            reap(running)
    finally:
        for pid in running:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)


def reap(running) -> None:
    for pid in list(running):
        request, folder, started = running[pid]
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            if time.monotonic() - started > request.get("timeout", 120):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                answer(request, folder, started, -9, f"\ntimed out after {request.get('timeout', 120)} s")
                del running[pid]
            continue
        code = os.waitstatus_to_exitcode(status)
        answer(request, folder, started, code, "")
        del running[pid]
    if running:
        time.sleep(0.002)


def answer(request, folder, started, returncode, extra_stderr) -> None:
    def read(name):
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
            return handle.read()

    reply = {"id": request["id"], "returncode": returncode, "stdout": read(".stdout"),
             "stderr": read(".stderr") + extra_stderr, "seconds": round(time.monotonic() - started, 3)}
    shutil.rmtree(folder, ignore_errors=True)
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
