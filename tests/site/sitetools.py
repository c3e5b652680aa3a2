"""Helpers shared by the tests that look at the built site or at a copy of the project."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from termbase.core.check.filecache import FOLDER
from termbase.core.check.language import ANSWERS
from termbase.core.project import load
from termbase.site.code_blocks import python_blocks  # noqa: F401  (the copy button's text)

ROOT = Path(__file__).resolve().parents[2]
PROJECT = load(ROOT)
LANGS = PROJECT.languages  # declared once, in mkdocs.yml
DEFAULT = PROJECT.default_language
# The cache holds executed notebooks and blocks: sharing it keeps copies from re-running them.
# The requirements come with their constraints: the benchmark installs ProperDocs from a copy.
PROJECT_PARTS = ("mkdocs.yml", "requirements.txt", "requirements-torch.txt", "constraints.txt", "pyproject.toml",
                 "docs", "overrides", "termbase", "snippets", "tests", "benchmarks", ".termbase-cache")


def build_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SITE_URL")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(extra)
    return env


def mkdocs_build(project: Path, site_dir: Path, *args, **env) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` as a contributor runs it, in `project`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir), *args],
        cwd=project, capture_output=True, text=True, env=build_env(**env), timeout=900,
    )


def copy_project(dest: Path, *, cache: bool = True) -> Path:
    """A private copy of the sources, for tests that break something on purpose; with
    `cache=False` without the executed notebooks and blocks (for tests that only check), but
    with what the check keeps (CHECK_CACHE: hunspell's answers, each page's problems and prose
    lines, all keyed by what they were found from), which spares a check of the copy 2 s."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in PROJECT_PARTS:
        src = ROOT / part
        if not src.exists():
            continue
        if part == ".termbase-cache" and not cache:
            for kept in CHECK_CACHE:
                if (src / kept).is_dir():
                    shutil.copytree(src / kept, dest / part / kept, ignore=_ignored, copy_function=_copy_if_there)
        elif src.is_dir():
            shutil.copytree(src, dest / part, ignore=_ignored, copy_function=_copy_if_there)
        else:
            shutil.copy2(src, dest / part)
    return dest


CHECK_CACHE = (ANSWERS, FOLDER)  # the folders of .termbase-cache that only the check reads
_IGNORED = shutil.ignore_patterns("__pycache__", ".hypothesis", "artifacts", ".locks", "*.egg-info", "work")


def _copy_if_there(src, dst):
    """A file that another test process removed while the folder was copied (a cache entry past
    its age, at the end of that process's check) is left out, not an error."""
    try:
        return shutil.copy2(src, dst)
    except FileNotFoundError:
        return dst


def _ignored(folder: str, names: list[str]) -> set[str]:
    """Not copied: generated files, the stored pages (a copy renders its own; they are MBs), the
    browser's kept records (tests/browser/crawl.py: a copy is never crawled), and the cache's
    entries still being written by another test process (`.<entry>-XXXX` folders, renamed when
    done: termbase/run/cache.py), which could vanish in the middle of the copy."""
    cache_pages = {"pages", "page-additions", "browser-crawl"} if Path(folder).name == ".termbase-cache" else set()
    in_cache = ".termbase-cache" in Path(folder).parts
    writing = {name for name in names if in_cache and name.startswith(".")}
    return set(_IGNORED(folder, names)) | cache_pages | writing


def prefix(lang: str) -> str:
    return "" if lang == DEFAULT else f"{lang}/"


def run_folder(tmp_path_factory) -> Path:
    """The folder of this test run that its test processes share (pytest-xdist's workers, pytest.ini:
    their base folders are siblings in it); without workers, the run's base folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def page_for(site: Path, lang: str, url: str) -> Path:
    return site / prefix(lang) / url / "index.html"


def demo_line(module: str = "softmax", block: str = "demo") -> int:
    """The line of a block's key in its test's EXPECTED_OUTPUT, found by reading the file as a
    contributor would (the messages that name it are what the tests check)."""
    lines = (ROOT / "tests" / f"test_{module}.py").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("EXPECTED_OUTPUT"))
    return next(i for i, line in enumerate(lines[start:], start + 1) if line.strip().startswith(f'"{block}":'))
