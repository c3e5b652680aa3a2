"""The layers hold: imports flow one way (core <- run <- site <- cli) and modules stay
short; the checks import neither MkDocs nor torch; the one cache is safe across processes;
Material's markup that the site overrides is still what the overrides copied."""

import ast
import re
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import material

from termbase.run.cache import Cache
from tests.site.sitetools import ROOT, build_env


def test_the_sources_pass_the_check_which_imports_neither_mkdocs_nor_torch():
    """`python -m termbase check` on the repository's sources, spelling included, as a
    contributor runs it: it passes, and it never imports MkDocs, Material, Jinja or torch (both
    asked of one run: the check of the whole site costs seconds). `--fresh`: every rule runs
    on every file, whatever clean result the run's own build or an earlier check left."""
    probe = ("import sys, runpy\n"
             "sys.argv = ['termbase', 'check', '--fresh']\n"
             "try:\n    runpy.run_module('termbase', run_name='__main__')\n"
             "except SystemExit as done:\n    print('EXIT', done.code)\n"
             "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'mkdocs', 'torch', 'material', 'jinja2'})\n"
             "print('HEAVY', heavy)\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, env=build_env())
    assert "\nEXIT 0\n" in result.stdout, result.stdout + result.stderr
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr


WRITER = """
import sys, time
from pathlib import Path
from termbase.run.cache import Cache
cache = Cache(Path(sys.argv[1]))
with cache.lock("notebooks", "k1"):
    if cache.get("notebooks", "k1") is None:
        print("started", flush=True)
        time.sleep(1.0)  # a long computation: the other process must wait for it, not redo it
        cache.put_json("notebooks", "k1", {"by": sys.argv[2]})
        print("computed", flush=True)
    else:
        print("reused", flush=True)
"""


def test_two_processes_computing_one_entry_compute_it_once(tmp_path):
    def start(name):
        return subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name], cwd=ROOT, env=build_env(),
                                stdout=subprocess.PIPE, text=True)

    first = start("first")
    assert first.stdout.readline().strip() == "started"
    second = start("second")  # starts while the first holds the lock
    outputs = [first.communicate(timeout=60)[0].split(), second.communicate(timeout=60)[0].split()]
    assert outputs == [["computed"], ["reused"]]
    assert Cache(tmp_path).get_json("notebooks", "k1") == {"by": "first"}
    assert not [p for p in (tmp_path / "notebooks").iterdir() if p.name.startswith(".")], "no temporary folder left"


def test_a_failed_write_leaves_no_entry(tmp_path):
    cache = Cache(tmp_path)

    def broken(folder):
        (folder / "half").write_text("x")
        raise RuntimeError("interrupted")

    try:
        cache.put("blocks", "k2", broken)
    except RuntimeError:
        pass
    assert cache.get("blocks", "k2") is None
    assert list((tmp_path / "blocks").iterdir()) == []


# Material's own templates that overrides/ copies or extends, as they were when the overrides
# were written (9.8.2). If Material changes one, re-read it and update the override, then this.
UPSTREAM = {
    "partials/alternate.html": "572b1d4dae61",
    "partials/copyright.html": "bc86bca3bf75",
    "404.html": "80c93494b543",
}


def test_the_overridden_material_templates_are_unchanged_upstream():
    templates = Path(material.__file__).parent / "templates"
    found = {name: hashlib.sha256((templates / name).read_bytes()).hexdigest()[:12] for name in UPSTREAM}
    assert found == UPSTREAM, f"Material's templates changed: review overrides/ against them ({found})"
    base = (templates / "base.html").read_text(encoding="utf-8")
    for block in ("site_meta", "extrahead", "content", "scripts"):
        assert "{% block " + block + " %}" in base, f"Material's base.html has no block {block} any more"
    assert "config.extra.alternate is iterable" in base, "the head's alternate links changed (see languages.Switcher)"


LAYERS = {  # package -> the termbase packages its modules may import
    "core": {"core"},
    "run": {"core", "run"},
    "site": {"core", "run", "site"},
    "cli": {"core", "run", "site", "cli"},  # `termbase test` renders a page as the site does
}
LONGEST_MODULE = 400  # lines; the largest is about 320


def _termbase_imports(path: Path) -> set[str]:
    """The termbase packages (core, run, site, cli) a module imports, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            parts = name.split(".")
            if parts[0] == "termbase" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_imports_flow_one_way_and_modules_stay_short():
    """core <- run <- site <- cli: what MkDocs runs never imports a contributor command, and
    nothing in core knows about running code or about MkDocs."""
    package = ROOT / "termbase"
    wrong, long = [], []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] in LAYERS:
            layer = relative.parts[0]
            extra = _termbase_imports(path) - LAYERS[layer] - {"data"}
            if extra:
                wrong.append(f"termbase/{relative.as_posix()} ({layer}) imports termbase.{sorted(extra)}")
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LONGEST_MODULE:
            long.append(f"termbase/{relative.as_posix()}: {lines} lines")
    for path in sorted((ROOT / "figures").rglob("*.py")):  # the drawings: content, same limit
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LONGEST_MODULE:
            long.append(f"{path.relative_to(ROOT).as_posix()}: {lines} lines")
    assert not wrong, "\n".join(wrong)
    assert not long, "split these modules: " + ", ".join(long)


def test_the_drawings_are_content_outside_the_package():
    """figures/ draws docs/assets/figures from snippets/; no module of termbase imports it but
    the command that runs it, and it imports nothing of termbase's machinery."""
    assert not (ROOT / "termbase" / "cli" / "figures").exists()
    importers = [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "termbase").rglob("*.py"))
                 if re.search(r"^\s*(import figures|from figures\b)", path.read_text(encoding="utf-8"), re.M)]
    assert importers == ["termbase/__main__.py"], importers
    for path in sorted((ROOT / "figures").rglob("*.py")):
        assert not _termbase_imports(path), f"{path.relative_to(ROOT)} imports termbase"


def test_core_imports_neither_mkdocs_nor_torch():
    third_party = set()
    for path in sorted((ROOT / "termbase" / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                third_party |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                third_party.add(node.module.split(".")[0])
    assert not third_party & {"mkdocs", "material", "markdown", "torch", "numpy", "nbclient"}, third_party


def test_the_longest_test_files_listed_to_run_first_exist():
    """tests/conftest.py orders them first; a renamed file would silently lose its place."""
    from tests.conftest import LONGEST_FIRST

    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"tests/conftest.py: LONGEST_FIRST names {missing} - update the list"
