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
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
WORK = BENCH / "work"  # gitignored: the Zensical venv and nothing else that must survive a run
GNU_TIME = "/usr/bin/time"
PROBE = BENCH / "probe"  # sitecustomize that counts notebook executions in a build


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


@dataclass
class Run:
    """One measured child process."""

    wall_s: float
    peak_rss_mb: float  # largest resident set of the process or any descendant it waited for
    returncode: int
    output: str = ""
    cpu_s: float = 0.0  # user + system CPU of the process and the descendants it waited for


def measure(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float = 1800) -> Run:
    """Run `cmd` and return its wall time and peak memory (wait4's rusage of that one child)."""
    # Peak memory comes from GNU time when there is one: a child forked from this (possibly large,
    # e.g. torch-holding) process inherits its RSS high-water mark, so wait4's ru_maxrss of a
    # direct child can report the parent's size instead of the build's.
    rss_file = None
    if Path(GNU_TIME).exists():
        fd, rss_file = tempfile.mkstemp(prefix="bench-rss-")
        os.close(fd)
        cmd = [GNU_TIME, "-q", "-f", "%M", "-o", rss_file, *cmd]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # Drain the output in a thread so that a chatty build never blocks on a full pipe.
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
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
    return Run(wall, peak_kb / 1024, proc.returncode, output, usage.ru_utime + usage.ru_stime)


@dataclass
class Figure:
    """A measured quantity: every run, the median, and optionally the ratio to a baseline."""

    name: str
    unit: str
    runs: list[float]
    median: float = 0.0
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.median = statistics.median(self.runs) if self.runs else float("nan")

    def to_dict(self) -> dict:
        return asdict(self)


def median(values) -> float:
    values = list(values)
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float | None:
    if not a or not b or a != a or b != b:
        return None
    return a / b


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_env(**extra) -> dict:
    """The environment a contributor's build sees (no PYTHONPATH, no SITE_URL), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SITE_URL")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(extra)
    return env


def probed_env(log_file: Path, **extra) -> dict:
    """A build environment whose Python counts notebook kernel starts into `log_file`."""
    return build_env(PYTHONPATH=str(PROBE), TERMBASE_BENCH_NOTEBOOK_LOG=str(log_file), **extra)


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


def versions(zensical_python: Path | None = None) -> dict:
    from importlib import metadata

    out = {}
    for dist in ("mkdocs", "mkdocs-material", "pymdown-extensions", "Markdown", "mkdocs-jupyter",
                 "latex2mathml", "torch", "pytest", "playwright"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["python"] = sys.version.split()[0]
    if zensical_python and zensical_python.exists():
        result = subprocess.run([str(zensical_python), "-c", "import importlib.metadata as m; print(m.version('zensical'))"],
                                capture_output=True, text=True)
        out["zensical"] = result.stdout.strip() or None
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if Path(chromium).exists():
        result = subprocess.run([chromium, "--version"], capture_output=True, text=True)
        out["chromium"] = result.stdout.strip() or None
    return out


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
