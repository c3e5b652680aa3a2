"""Site builds: this project's three-language build, plain MkDocs + Material and Zensical on
the same pages, and the time from saving an entry to `mkdocs serve` serving the change."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from benchmarks.common import WORK, Run, build_env, count_lines, free_port, log, measure, probed_env

LANGS = ("en", "es", "da")
ZENSICAL_VENV = WORK / "zensical-venv"
CACHE_DIRS = (".termbase-cache", ".cache")


def clear_caches(project: Path, site_dir: Path | None = None, keep: tuple[str, ...] = ()) -> None:
    """Remove the build caches (all of them, or all but the `keep` entries of each) and the site."""
    for name in CACHE_DIRS:
        cache = project / name
        if not keep:
            shutil.rmtree(cache, ignore_errors=True)
        elif cache.is_dir():
            for entry in cache.iterdir():
                if entry.name not in keep:
                    shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink()
    if site_dir is not None:
        shutil.rmtree(site_dir, ignore_errors=True)


def termbase_build(project: Path, site_dir: Path, notebook_log: Path) -> Run:
    """`mkdocs build --strict` of this project (English, then Spanish and Danish via the hooks)."""
    return measure([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
                   cwd=project, env=probed_env(notebook_log))


def sum_runs(runs: list[Run]) -> Run:
    """Three per-language builds as one figure: times add up, memory is the largest."""
    return Run(sum(r.wall_s for r in runs), max(r.peak_rss_mb for r in runs),
               max((r.returncode for r in runs), key=abs), "\n".join(r.output for r in runs if r.returncode),
               sum(r.cpu_s for r in runs))


def plain_build(roots: dict[str, Path], out: Path) -> Run:
    """Plain MkDocs + Material, no plugins or hooks, one build per language."""
    runs = []
    for lang, root in roots.items():
        site = out / lang
        shutil.rmtree(site, ignore_errors=True)
        runs.append(measure([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)],
                            cwd=root, env=build_env()))
    return sum_runs(runs)


# --------------------------------------------------------------------------- Zensical

def zensical_python() -> Path:
    return ZENSICAL_VENV / "bin" / "python"


def ensure_zensical(install: bool = True) -> tuple[bool, str]:
    """Zensical in its own venv under benchmarks/work/ (gitignored), never in the project's."""
    if (ZENSICAL_VENV / "bin" / "zensical").exists():
        return True, "already installed"
    if not install:
        return False, f"not installed ({ZENSICAL_VENV}); run without --no-install"
    log("installing zensical into", ZENSICAL_VENV)
    ZENSICAL_VENV.parent.mkdir(parents=True, exist_ok=True)
    steps = [[sys.executable, "-m", "venv", str(ZENSICAL_VENV)],
             [str(zensical_python()), "-m", "pip", "install", "-q", "zensical"]]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True)
        if result.returncode:
            return False, (result.stdout + result.stderr)[-2000:]
    return True, "installed"


def zensical_build(roots: dict[str, Path], clean: bool = True) -> Run:
    """Zensical, one build per language (it builds one site per config), reading the same
    mkdocs.yml as the plain MkDocs build. `clean` drops its cache first (a cold build)."""
    runs = []
    for lang, root in roots.items():
        if clean:
            shutil.rmtree(root / "site", ignore_errors=True)
        cmd = [str(ZENSICAL_VENV / "bin" / "zensical"), "build", "-f", "mkdocs.yml"] + (["--clean"] if clean else [])
        runs.append(measure(cmd, cwd=root, env=build_env()))
    return sum_runs(runs)


# --------------------------------------------------------------------------- mkdocs serve

def _get(url: str, timeout: float = 600) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return None


def serve_edit_to_visible(project: Path, page: Path, url_path: str, edits: int, notebook_log: Path,
                          startup_timeout: float = 1200, edit_timeout: float = 900) -> dict:
    """Start `mkdocs serve` in `project`, then `edits` times: append a unique sentence to `page`,
    and time from the save until the served `url_path` contains it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    out_file = project / ".serve.log"
    out = open(out_file, "wb")
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
                            cwd=project, env=probed_env(notebook_log), stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    result = {"url": url_path, "page": str(page.relative_to(project)), "runs_s": [], "error": None}
    try:
        start = time.perf_counter()
        while time.perf_counter() - start < startup_timeout:
            if proc.poll() is not None:
                raise RuntimeError("mkdocs serve exited: " + out_file.read_text(errors="replace")[-3000:])
            body = _get(base + url_path, timeout=startup_timeout)
            if body is not None:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("mkdocs serve did not serve the page in time")
        result["startup_s"] = time.perf_counter() - start
        time.sleep(1.0)  # let the watcher settle
        notebooks_before = count_lines(notebook_log)
        original = page.read_text(encoding="utf-8")
        for k in range(edits):
            token = f"benchmarkedit{uuid.uuid4().hex[:12]}"
            saved = time.perf_counter()
            page.write_text(original.rstrip("\n") + f"\n\nEdited {k}: {token}.\n", encoding="utf-8")
            while True:
                body = _get(base + url_path, timeout=edit_timeout)
                if body is not None and token in body:
                    result["runs_s"].append(time.perf_counter() - saved)
                    break
                if proc.poll() is not None:
                    raise RuntimeError("mkdocs serve exited: " + out_file.read_text(errors="replace")[-3000:])
                if time.perf_counter() - saved > edit_timeout:
                    raise RuntimeError(f"edit {k} not visible after {edit_timeout} s")
                time.sleep(0.02)
            time.sleep(0.5)
        page.write_text(original, encoding="utf-8")
        result["notebook_executions_during_edits"] = count_lines(notebook_log) - notebooks_before
    except RuntimeError as exc:
        result["error"] = str(exc)
    finally:
        try:
            import os

            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        out.close()
    return result
