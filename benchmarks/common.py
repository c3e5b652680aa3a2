"""Timing, memory and machine helpers shared by every benchmark."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"


def _languages() -> tuple[tuple[str, ...], str]:
    """The languages as mkdocs.yml declares them (the termbase plugin's options), read once."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from termbase.core.project import load

    project = load(ROOT)
    return project.languages, project.default_language


LANGS, DEFAULT = _languages()
WORK = BENCH / "work"  # gitignored: the Zensical and ProperDocs venvs, nothing else that must survive a run
GNU_TIME = "/usr/bin/time"
PROBE = BENCH / "probe"  # sitecustomize that counts notebook executions and names the termbase imported


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


@dataclass
class Run:
    """One measured child process (and every process it started)."""

    wall_s: float
    peak_rss_mb: float  # largest resident set of any one process of the tree (rusage of the children)
    returncode: int
    output: str = ""
    cpu_s: float = 0.0  # user + system CPU of the process and every descendant it waited for
    tree_rss_mb: float | None = None  # largest sum of the tree's resident sets, sampled (psutil)
    load: float | None = None  # 1-minute load average when it ended


def _tree_rss(proc) -> float:
    """Sum of the resident sets of a process and all its descendants, in bytes."""
    import psutil

    total = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float = 3600) -> Run:
    """Run `cmd`: wall time, CPU time and peak memory of it and everything it starts."""
    # Peak memory of one process comes from GNU time when there is one: a child forked from this
    # (possibly large, e.g. torch-holding) process inherits its RSS high-water mark, so wait4's
    # ru_maxrss of a direct child can report the parent's size instead of the build's. GNU time
    # is small, and reports the rusage of what it starts (the largest process of that tree).
    rss_file = None
    if Path(GNU_TIME).exists():
        fd, rss_file = tempfile.mkstemp(prefix="bench-rss-")
        os.close(fd)
        cmd = [GNU_TIME, "-q", "-f", "%M", "-o", rss_file, *cmd]
    try:
        import psutil
    except ImportError:  # the tree's summed memory is then not measured
        psutil = None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # Drain the output in a thread so that a chatty build never blocks on a full pipe.
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    handle = psutil.Process(proc.pid) if psutil else None
    tree_peak = 0
    deadline = start + timeout
    next_sample = start
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        now = time.perf_counter()
        if now > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        if handle is not None and now >= next_sample:
            tree_peak = max(tree_peak, _tree_rss(handle))
            next_sample = now + 0.1
        time.sleep(0.005)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=10)
    output = b"".join(out_chunks).decode("utf-8", "replace")
    peak_kb = usage.ru_maxrss
    if rss_file:
        try:
            peak_kb = int(Path(rss_file).read_text().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(rss_file)
    return Run(wall, peak_kb / 1024, proc.returncode, output, usage.ru_utime + usage.ru_stime,
               tree_peak / 2**20 if handle is not None else None, os.getloadavg()[0])


def median(values) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def ratio(a: float | None, b: float | None) -> float | None:
    if not a or not b or a != a or b != b:
        return None
    return a / b


def summarise(runs: list[Run]) -> dict:
    """A figure: the median of the runs that succeeded, every run, the largest memory."""
    ok = [r for r in runs if r.returncode == 0]
    return {
        "median_s": median(r.wall_s for r in ok),
        "cpu_median_s": median(r.cpu_s for r in ok),
        "runs_s": [round(r.wall_s, 3) for r in runs],
        "cpu_runs_s": [round(r.cpu_s, 3) for r in runs],
        "peak_rss_mb": max((r.peak_rss_mb for r in runs), default=None),
        "tree_rss_mb": max((r.tree_rss_mb for r in runs if r.tree_rss_mb is not None), default=None),
        "load_1min": [round(r.load, 2) for r in runs if r.load is not None],
        "failed_runs": len(runs) - len(ok),
        "error": next((r.output[-4000:] for r in runs if r.returncode), None),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_env(**extra) -> dict:
    """The environment a contributor's build sees (no PYTHONPATH, no SITE_URL), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SITE_URL")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    env["DISABLE_MKDOCS_2_WARNING"] = "true"  # ProperDocs' spelling of the same switch
    env.update(extra)
    return env


def probed_env(notebook_log: Path, import_log: Path | None = None, **extra) -> dict:
    """A build environment whose Python counts notebook kernel starts into `notebook_log` and
    writes where `termbase` was imported from into `import_log`."""
    more = {"TERMBASE_BENCH_IMPORT_LOG": str(import_log)} if import_log else {}
    return build_env(PYTHONPATH=str(PROBE), TERMBASE_BENCH_NOTEBOOK_LOG=str(notebook_log), **more, **extra)


def count_lines(path: Path) -> int:
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        return 0


def machine() -> dict:
    info = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        match = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
        info["cpu_model"] = match.group(1).strip() if match else platform.processor()
    except OSError:
        info["cpu_model"] = platform.processor() or "unknown"
    try:
        info["nproc"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        meminfo = Path("/proc/meminfo").read_text()
        kb = int(re.search(r"^MemTotal:\s*(\d+)", meminfo, re.M).group(1))
        info["ram_gib"] = round(kb / 1024 / 1024, 1)
    except (OSError, AttributeError):
        info["ram_gib"] = None
    return info


def git_state(root: Path = ROOT) -> dict:
    """The commit measured, and whether the tree differed from it (tracked changes or untracked
    files git does not ignore) when the run started."""
    def git(*args):
        result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None

    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": bool(status) if status is not None else None,
            "dirty_files": status.splitlines()[:20] if status else []}


def versions(venvs: dict[str, Path] | None = None) -> dict:
    from importlib import metadata

    out = {}
    for dist in ("mkdocs", "mkdocs-material", "pymdown-extensions", "Markdown", "mkdocs-jupyter",
                 "latex2mathml", "torch", "pytest", "playwright"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["python"] = sys.version.split()[0]
    for dist, python in (venvs or {}).items():
        if python.exists():
            result = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                    capture_output=True, text=True)
            out[dist] = result.stdout.strip() or None
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if Path(chromium).exists():
        result = subprocess.run([chromium, "--version"], capture_output=True, text=True)
        out["chromium"] = result.stdout.strip() or None
    return out


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
