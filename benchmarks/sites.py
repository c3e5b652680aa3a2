"""Site builds: this project's build (every language, the others in parallel processes), plain
MkDocs + Material, Zensical and ProperDocs, and the time from saving an edit to `mkdocs serve`
serving it."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from benchmarks.common import DEFAULT, LANGS, WORK, Run, build_env, count_lines, free_port, log, measure, probed_env
from termbase.core.project import load  # noqa: E402  (benchmarks.common puts the project on sys.path)
CACHE_DIRS = (".termbase-cache", ".cache")
ZENSICAL = "0.0.73"  # the newest that installs from this machine's package index (see zensical_newer)
ZENSICAL_VENV = WORK / "zensical-venv"
PROPERDOCS = "1.6.7"
PROPERDOCS_VENV = WORK / "properdocs-venv"
# What a build of this site needs in ProperDocs' own venv: torch from requirements-torch.txt
# (constraints.txt does not pin it, and the build refuses any torch but the pinned one), then
# the site's requirements that the build imports (not the test tools), at the versions
# constraints.txt pins.
PROPERDOCS_NEEDS = ["numpy", "matplotlib", "mkdocs-material", "pymdown-extensions", "mkdocs-jupyter",
                    "jupytext", "nbclient", "nbformat", "ipykernel", "latex2mathml", "PyYAML"]


def clear_caches(project: Path, site_dir: Path | None = None) -> None:
    """Remove the build caches (executed notebooks and blocks, mkdocs-jupyter's) and the site."""
    for name in CACHE_DIRS:
        shutil.rmtree(project / name, ignore_errors=True)
    if site_dir is not None:
        shutil.rmtree(site_dir, ignore_errors=True)


class Logs:
    """The probe's log files for one project (benchmarks/probe/sitecustomize.py)."""

    def __init__(self, folder: Path, name: str, ignore_check: bool = False):
        folder.mkdir(parents=True, exist_ok=True)
        self.notebooks = folder / f"{name}-notebooks.log"
        self.imports = folder / f"{name}-imports.log"
        self.check = folder / f"{name}-check-ignored.log" if ignore_check else None

    def env(self, **extra) -> dict:
        if self.check is not None:
            extra["TERMBASE_BENCH_IGNORE_CHECK"] = str(self.check)
        return probed_env(self.notebooks, self.imports, **extra)

    def imported_from(self) -> list[str]:
        try:
            lines = self.imports.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        return sorted({line.split("\t", 1)[1] for line in lines if "\t" in line})


def termbase_build(project: Path, site_dir: Path, logs: Logs, python: str = sys.executable,
                   tool: str = "mkdocs", **env) -> Run:
    """`<tool> build --strict` of this project, run from the project's folder (so the copy's own
    `termbase` is imported, ahead of the editable install): every language, the others in
    processes of their own (termbase/site/language_process.py)."""
    return measure([python, "-m", tool, "build", "--strict", "--site-dir", str(site_dir)],
                   cwd=project, env=logs.env(**env))


def sum_runs(runs: list[Run]) -> Run:
    """Three per-language builds one after the other, as one figure: times add up, memory is
    the largest."""
    return Run(sum(r.wall_s for r in runs), max(r.peak_rss_mb for r in runs),
               max((r.returncode for r in runs), key=abs), "\n".join(r.output for r in runs if r.returncode),
               sum(r.cpu_s for r in runs),
               max((r.tree_rss_mb for r in runs if r.tree_rss_mb is not None), default=None), runs[-1].load)


def plain_build(roots: dict[str, Path], out: Path) -> Run:
    """Plain MkDocs + Material, no plugin but search, one build per language, in sequence."""
    runs = []
    for lang, root in roots.items():
        site = out / lang
        shutil.rmtree(site, ignore_errors=True)
        runs.append(measure([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)],
                            cwd=root, env=build_env()))
    return sum_runs(runs)


# --------------------------------------------------------------------------- other tools' venvs

def _pip(python: Path, *args, timeout: float = 1800) -> tuple[int, str]:
    result = subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True, timeout=timeout)
    out = "\n".join(line for line in (result.stdout + result.stderr).splitlines()
                    if not line.startswith("WARNING: Location"))  # file:// index mirrors without the package
    return result.returncode, out


def _venv(folder: Path) -> Path:
    python = folder / "bin" / "python"
    if not python.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    return python


def _installed(python: Path, dist: str) -> str | None:
    if not python.exists():
        return None
    result = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                            capture_output=True, text=True)
    return result.stdout.strip() or None if result.returncode == 0 else None


def ensure_zensical(install: bool = True) -> dict:
    """Zensical, pinned, in its own venv under benchmarks/work/ (gitignored), never in the
    project's; and what pip says about the newer releases (measured, not assumed)."""
    python = ZENSICAL_VENV / "bin" / "python"
    found = _installed(python, "zensical")
    out = {"pinned": ZENSICAL, "venv": str(ZENSICAL_VENV)}
    if found != ZENSICAL:
        if not install:
            return {**out, "ok": False, "how": f"not installed in {ZENSICAL_VENV}; run without --no-install"}
        log("installing zensical", ZENSICAL, "into", ZENSICAL_VENV)
        code, text = _pip(_venv(ZENSICAL_VENV), "install", "-q", f"zensical=={ZENSICAL}")
        if code:
            return {**out, "ok": False, "how": text[-2000:]}
    out.update(ok=True, how="installed" if found != ZENSICAL else "already installed")
    if install:
        out["newer"] = {}
        for spec in ("zensical==0.0.74", "zensical>=0.1"):
            code, text = _pip(python, "install", "--dry-run", "-q", spec, timeout=600)
            errors = [line for line in text.splitlines() if line.startswith("ERROR")]
            out["newer"][spec] = "installs" if code == 0 else (" / ".join(errors[:2]) or text[-300:])
    return out


def ensure_properdocs(project: Path, constraints: Path, install: bool = True) -> dict:
    """ProperDocs, pinned, in its own venv under benchmarks/work/ with what this site's build
    imports (our plugin, installed from a copy so that its entry point is registered; the build
    still runs the copy it is started in)."""
    python = PROPERDOCS_VENV / "bin" / "python"
    out = {"pinned": PROPERDOCS, "venv": str(PROPERDOCS_VENV)}
    pin = re.search(r"^torch==([\w.]+)", (project / "requirements-torch.txt").read_text(encoding="utf-8"), re.M)
    torch = (_installed(python, "torch") or "").split("+")[0]
    ready = (_installed(python, "properdocs") == PROPERDOCS and _installed(python, "attention-glossary-termbase")
             and pin is not None and torch == pin.group(1))
    if not ready:
        if not install:
            return {**out, "ok": False, "how": f"not installed in {PROPERDOCS_VENV}; run without --no-install"}
        log("installing properdocs", PROPERDOCS, "and the site's build requirements into", PROPERDOCS_VENV)
        python = _venv(PROPERDOCS_VENV)
        code, text = _pip(python, "install", "-q", "--retries", "0", "--timeout", "10", "-r",
                          str(project / "requirements-torch.txt"))
        if code == 0:
            code, text = _pip(python, "install", "-q", "-c", str(constraints), f"properdocs=={PROPERDOCS}",
                              *PROPERDOCS_NEEDS)
        if code == 0:
            code, text = _pip(python, "install", "-q", "--no-deps", str(project))
        if code:
            return {**out, "ok": False, "how": text[-2000:]}
    return {**out, "ok": True, "how": "installed" if not ready else "already installed",
            "mkdocs_also_installed": _installed(python, "mkdocs")}


def zensical_build(roots: dict[str, Path], clean: bool = True) -> Run:
    """Zensical, one build per language in sequence (it builds one site per config), reading the
    same mkdocs.yml as the plain MkDocs build. `clean` drops its cache first (a cold build)."""
    runs = []
    for lang, root in roots.items():
        if clean:
            shutil.rmtree(root / "site", ignore_errors=True)
            shutil.rmtree(root / ".cache", ignore_errors=True)
        cmd = [str(ZENSICAL_VENV / "bin" / "zensical"), "build", "-f", "mkdocs.yml"] + (["--clean"] if clean else [])
        runs.append(measure(cmd, cwd=root, env=build_env()))
    return sum_runs(runs)


def properdocs_build(project: Path, site_dir: Path, logs: Logs) -> Run:
    """This site, unchanged (our plugin, mkdocs-jupyter, Material), built by ProperDocs."""
    return termbase_build(project, site_dir, logs, python=str(PROPERDOCS_VENV / "bin" / "python"), tool="properdocs")


# --------------------------------------------------------------------------- mkdocs serve

# One sentence per language: real words, so that the check every rebuild runs passes, and a
# number of at most four digits (five need a thousands separator in Spanish and Danish).
EDIT = {"en": "Edit {k} done.", "es": "Edición {k} hecha.", "da": "Redigering {k} udført."}


def _get(url: str, timeout: float = 900) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return None


class Server:
    """`mkdocs serve` in a project, its output timestamped line by line as it arrives."""

    def __init__(self, project: Path, logs: Logs, **env):
        self.project = project
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        self.lines: list[tuple[float, str]] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{self.port}"],
                                     cwd=project, env=logs.env(**env), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.append((time.perf_counter(), raw.decode("utf-8", "replace").rstrip()))

    def output(self, last: int = 60) -> str:
        return "\n".join(line for _, line in self.lines[-last:])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, urls: list[str], timeout: float) -> float:
        start = time.perf_counter()
        for url in urls:
            while _get(self.base + url, timeout=timeout) is None:
                if not self.alive():
                    raise RuntimeError("mkdocs serve exited:\n" + self.output())
                if time.perf_counter() - start > timeout:
                    raise RuntimeError(f"mkdocs serve did not serve /{url} within {timeout:.0f} s:\n" + self.output())
                time.sleep(0.2)
        self.settle(-1, timeout - (time.perf_counter() - start))  # the default language's process has built once
        return time.perf_counter() - start

    def state(self) -> dict | None:
        """/.termbase/serve.json: how far each language has got (termbase/site/serve.py)."""
        body = _get(self.base + ".termbase/serve.json", timeout=60)
        try:
            return json.loads(body) if body else None
        except ValueError:
            return None

    def settle(self, after: int, timeout: float) -> int:
        """Wait until the server has seen more than `after` saves and every language has rebuilt
        from the last of them; the saves seen."""
        start = time.perf_counter()
        while True:
            state = self.state()
            if state and state["changes"] > after and all(
                    lang["built"] == state["changes"] for lang in state["languages"].values()):
                return state["changes"]
            if not self.alive():
                raise RuntimeError("mkdocs serve exited:\n" + self.output())
            if time.perf_counter() - start > timeout:
                raise RuntimeError(f"mkdocs serve did not settle within {timeout:.0f} s ({state}):\n" + self.output())
            time.sleep(0.05)

    def builders(self) -> list[int]:
        """The server's own process and the language processes it spawned (both run the probe);
        never the block runner or a kernel, which a profiler signal would stop."""
        try:
            import psutil

            proc = psutil.Process(self.proc.pid)
            spawned = [c.pid for c in proc.children(recursive=True) if "spawn_main" in " ".join(c.cmdline())]
            return [proc.pid, *spawned]
        except Exception:  # noqa: BLE001 - psutil missing or the process gone
            return [self.proc.pid]

    def signal_builders(self, sig) -> None:
        for pid in self.builders():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


def _watch(server: Server, url: str, token: str, saved: float, timeout: float, found: dict) -> None:
    """Request `url` until its body contains `token`; the time from `saved` into found[url]."""
    while True:
        body = _get(server.base + url, timeout=timeout)
        if body is not None and token in body:
            found[url] = time.perf_counter() - saved
            return
        if not server.alive() or time.perf_counter() - saved > timeout:
            found[url] = None
            return
        time.sleep(0.02)


def _append_sentence(text: str, sentence: str) -> str:
    return text.rstrip("\n") + f"\n\n{sentence}\n"


def _edit_record(text: str, tokens: dict[str, str]) -> str:
    """The record with each language's short definition ending in that language's sentence."""
    record = yaml.safe_load(text)
    for lang, sentence in tokens.items():
        record[lang]["short"] = f"{str(record[lang]['short']).rstrip()} {sentence}"
    return yaml.safe_dump(record, allow_unicode=True, sort_keys=False, width=1000)


def serve_edit_to_visible(project: Path, slug: str, edits: int, logs: Logs, sample_dir: Path | None = None,
                          startup_timeout: float = 3600, edit_timeout: float = 900) -> dict:
    """Start `mkdocs serve` in `project`, then `edits` rounds of four edits, interleaved: the
    English, Spanish and Danish page of entry `slug` (each timed on its own language's page), and
    its term record (each language's short definition; timed on the entry's page in every
    language, each polled from the save on: the edited page is written from its preview ahead of
    the rebuild). Before the next edit, every language has rebuilt (the server's serve.json).
    With `sample_dir`, one more round runs under the probe's sampling profiler (its times are
    reported apart, never in the medians)."""
    docs = load(project).docs  # mkdocs.yml's docs_dir
    pages = {lang: docs / "glossary" / f"{slug}.{lang}.md" for lang in LANGS}
    record_path = project / "termbase" / "data" / "terms" / f"{slug}.yml"
    urls = {lang: ("" if lang == DEFAULT else f"{lang}/") + f"glossary/{slug}/" for lang in LANGS}
    # An edited entry's page is written from its preview ahead of the rebuild (termbase/site/serve.py);
    # every language has rebuilt once the server's serve.json says so.
    originals = {path: path.read_text(encoding="utf-8") for path in [*pages.values(), record_path]}
    kinds = [*LANGS, "record"]
    result = {"slug": slug, "urls": urls, "edits": {k: [] for k in kinds}, "error": None}
    env = {"TERMBASE_BENCH_SAMPLE_DIR": str(sample_dir), "TERMBASE_BENCH_SAMPLE_PAUSED": "1"} if sample_dir else {}
    notebooks_before = count_lines(logs.notebooks)
    server = Server(project, logs, **env)
    numbers = random.Random(slug).sample(range(1000, 10000), 4 * edits + 8)

    def one_edit(kind: str) -> dict:
        k = numbers.pop()
        tokens = {lang: EDIT[lang].format(k=k) for lang in LANGS}
        mark = len(server.lines)
        seen = server.state()["changes"]
        saved = time.perf_counter()
        if kind == "record":
            record_path.write_text(_edit_record(originals[record_path], tokens), encoding="utf-8")
            watched = {urls[lang]: tokens[lang] for lang in LANGS}
        else:  # an edited file keeps its sentence until its next edit replaces it
            pages[kind].write_text(_append_sentence(originals[pages[kind]], tokens[kind]), encoding="utf-8")
            watched = {urls[kind]: tokens[kind]}
        found: dict = {}
        threads = [threading.Thread(target=_watch, args=(server, url, token, saved, edit_timeout, found))
                   for url, token in watched.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if any(v is None for v in found.values()):
            raise RuntimeError(f"the {kind} edit was not visible after {edit_timeout:.0f} s ({found}):\n"
                               + server.output())
        server.settle(seen, edit_timeout)  # every language rebuilt before the next edit
        settled = time.perf_counter() - saved
        timeline = [(round(t - saved, 3), line) for t, line in server.lines[mark:]
                    if re.search(r"Building documentation|Documentation built|building the|[Cc]hange|ahead of|published|ERROR",
                                 line)]
        visible = {lang: found[urls[lang]] for lang in LANGS if urls[lang] in found}
        time.sleep(0.5)
        return {"s": max(visible.values()), "visible_s": visible, "all_rebuilt_s": settled, "timeline": timeline}

    try:
        result["startup_s"] = server.wait_ready(list(urls.values()), startup_timeout)
        time.sleep(1.0)  # let the watcher settle
        for _ in range(edits):
            for kind in kinds:
                result["edits"][kind].append(one_edit(kind))
        if sample_dir:
            server.signal_builders(signal.SIGUSR1)  # the profiler starts: one round, apart
            result["profiled_round"] = {kind: one_edit(kind) for kind in kinds}
            server.signal_builders(signal.SIGUSR2)  # ... and writes what it sampled
            time.sleep(2.0)
        seen = server.state()["changes"]
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
        server.settle(seen, edit_timeout)
        result["notebook_executions_during_edits"] = count_lines(logs.notebooks) - notebooks_before
    except RuntimeError as exc:
        result["error"] = str(exc)[-4000:]
    finally:
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
        server.stop()
    return result
