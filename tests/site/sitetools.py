"""Helpers shared by the tests that look at the built site or at a copy of the project."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "es", "da")
# .termbase-cache holds executed notebooks: sharing it keeps copies from re-running them.
PROJECT_PARTS = ("mkdocs.yml", "requirements.txt", "docs", "termbase", "snippets", "tests", ".termbase-cache")


def build_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SITE_URL")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(extra)
    return env


def mkdocs_build(project: Path, site_dir: Path, **env) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` as a contributor runs it, in `project`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=project, capture_output=True, text=True, env=build_env(**env), timeout=600,
    )


def copy_project(dest: Path) -> Path:
    """A private copy of the sources, for tests that break something on purpose."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in PROJECT_PARTS:
        src = ROOT / part
        if not src.exists():
            continue
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", "artifacts"))
        else:
            shutil.copy2(src, dest / part)
    return dest


def page_for(site: Path, lang: str, url: str) -> Path:
    prefix = "" if lang == "en" else f"{lang}/"
    return site / prefix / url / "index.html"


class _CodeBlocks(HTMLParser):
    """Text of every <code> inside a `language-python` block, as the copy button copies it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self._depth = 0  # >0 while inside a python highlight div
        self._in_code = False
        self._buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and "language-python" in classes:
            self._depth = 1
        elif tag == "div" and self._depth:
            self._depth += 1
        elif tag == "code" and self._depth:
            self._in_code, self._buf = True, []

    def handle_endtag(self, tag):
        if tag == "code" and self._in_code:
            self.blocks.append("".join(self._buf))
            self._in_code = False
        elif tag == "div" and self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._in_code:
            self._buf.append(data)


def python_blocks(page: Path) -> list[str]:
    parser = _CodeBlocks()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.blocks
