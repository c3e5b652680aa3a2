import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from termbase.run.blocks import BlockRunner
from termbase.run.cache import Cache
from tests.site.sitetools import PROJECT, ROOT, mkdocs_build, run_folder

# One torch thread in each test process when pytest-xdist runs one process per core (pytest.ini):
# with a thread per core in each, OpenMP threads spun while they waited for each other on busy
# cores, and the quick tier took twice as long (72.6 s against 37.2 s, side by side on 2 cores).
# This process only: the builds, blocks and notebooks it starts keep torch's default, because
# while one process builds the site the other often waits for it (the whole command took 502 s
# with their default and 523 s with one thread for them too). OMP_NUM_THREADS, if set, rules.
THREADS_GIVEN = "OMP_NUM_THREADS" in os.environ  # by whoever ran pytest, before anything here
if os.environ.get("PYTEST_XDIST_WORKER") and not THREADS_GIVEN:
    torch.set_num_threads(1)


def _once_per_run(tmp_path_factory, name: str, make) -> dict:
    """`make(folder)` run once per test run, its JSON-able result kept beside `folder`. The test
    processes (pytest-xdist's workers, pytest.ini) share it: the first that needs it makes it
    while holding a lock; the others wait for it and read the same folder."""
    shared = run_folder(tmp_path_factory)
    folder, log = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not log.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a process that failed here left half made
            log.write_text(json.dumps(make(folder)), encoding="utf-8")
    return {"folder": folder, **json.loads(log.read_text(encoding="utf-8"))}


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The whole site, built once per test run exactly as `mkdocs build --strict` builds it."""
    def build(site):
        # The hosted repository's address, as the deploy workflow passes it (docs/how-it-works.en.md: Deployment).
        done = mkdocs_build(ROOT, site, REPO_URL="https://github.com/attention-glossary/attention-glossary")
        return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "args": done.args}

    made = _once_per_run(tmp_path_factory, "built-site", build)
    result = subprocess.CompletedProcess(**{k: made[k] for k in ("args", "returncode", "stdout", "stderr")})
    assert result.returncode == 0, result.stdout + result.stderr
    return made["folder"], result


@pytest.fixture(scope="session")
def variant_site(tmp_path_factory):
    """One copy with a scaffolded entry, an outdated translation and a fourth language, built
    once per run (tests/site/variant.py): (project, site, {command: its result})."""
    from tests.site import variant

    made = _once_per_run(tmp_path_factory, "variant", variant.make)
    ran = {k: subprocess.CompletedProcess([k], **v) for k, v in made.items() if k != "folder"}
    assert ran["build"].returncode == 0, ran["build"].stdout + ran["build"].stderr
    return made["folder"] / "project", made["folder"] / "site", ran


@pytest.fixture(scope="session")
def mini_template(tmp_path_factory):
    """The small project of tests/site/mini.py, made once per run and shared by the test
    processes; a test never changes it: it takes a `mini_project`."""
    from tests.site import mini

    def make_mini(folder):
        mini.make(folder)
        return {}

    return _once_per_run(tmp_path_factory, "mini", make_mini)["folder"]


@pytest.fixture
def mini_project(mini_template, tmp_path):
    """A private copy of the small project (tests/site/mini.py), for a test of the machinery
    (build, serve, cache, verified blocks, notebooks) that may break it on purpose."""
    from tests.site import mini

    return mini.copy(mini_template, tmp_path / "project")


# The files that take longest (pytest --durations=0 summed per file, 2026-12-04, 2 cores), in that
# order: run first, so that with one file per process (pytest.ini: --dist loadfile) no process
# is left with a long file while the other has finished. The two that read the browser's crawl
# (tests/browser/crawl.py) come first, so that the two processes crawl two languages at once.
# Only the order changes, never a test.
LONGEST_FIRST = ["tests/browser/test_accessibility.py", "tests/browser/test_reading.py",
                 "tests/site/test_contributions.py", "tests/site/test_serve.py", "tests/site/test_notebooks.py",
                 "tests/site/test_broken_sources.py", "tests/browser/test_takeaway.py",
                 "tests/site/test_page_cache.py", "tests/site/test_fourth_language.py", "tests/site/test_verified.py"]


# What makes a test `slow`: it builds, serves or copies a project (these names, reached from the
# test or its fixtures through the module's own functions). `browser`: it is under tests/browser.
# scale_project (benchmarks/generate.py) copies the project to grow it; called as an attribute of
# a module imported inside the test, it is matched by its name like the others.
SLOW_NAMES = {"built_site", "variant_site", "copy_project", "mkdocs_build", "mkdocs_serve", "committed_copy",
              "mini_template", "mini_project", "make_mini", "scale_project"}


def _reaches_slow(func, module, seen) -> bool:
    code = getattr(func, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names = set(code.co_names) | {n for c in code.co_consts if hasattr(c, "co_names") for n in c.co_names}
    if names & SLOW_NAMES:
        return True
    return any(_reaches_slow(getattr(module, name), module, seen)
               for name in names if callable(getattr(module, name, None)))


def _is_slow(item) -> bool:
    if SLOW_NAMES & set(getattr(item, "fixturenames", ())):
        return True
    seen: set = set()
    funcs = [getattr(item, "function", None)]
    for defs in getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values():
        funcs += [d.func for d in defs]
    return any(_reaches_slow(f, sys.modules.get(f.__module__), seen) for f in funcs if f is not None)


def pytest_collection_modifyitems(session, config, items):
    """Tiers, applied here so that a new test gets its marker by what it does: `browser` for
    tests/browser, `slow` for a test that builds, serves or copies a project. A contributor runs
    `pytest -m "not slow and not browser"` before a commit; CI runs everything."""
    for item in items:
        if item.nodeid.startswith("tests/browser/"):
            item.add_marker(pytest.mark.browser)
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: files stay in order


def pytest_collection_finish(session):
    """Remember the programs the selected tests will run, so the runner can start them all at
    once, in parallel, when the first of them needs its result (and nothing else runs)."""
    programs = []
    for item in session.items:
        blocks = getattr(getattr(item, "function", None), "termbase_programs", None)
        callspec = getattr(item, "callspec", None)
        if blocks and callspec and callspec.params.get("block") in blocks:
            programs.append(blocks[callspec.params["block"]])
    session.config.termbase_programs = programs


@pytest.fixture(scope="session")
def block_runner(request):
    """Runs programs as a reader runs a copied block, sharing the site's cache (a block the
    build already ran is not run again, and the other way round)."""
    runner = BlockRunner(Cache(PROJECT.cache_dir))
    for program in getattr(request.config, "termbase_programs", []):
        runner.submit(program)
    yield runner
    runner.close()


def whole_command(config) -> bool:
    """Whether this is the README's whole test command: the test paths of pytest.ini, no test
    left out by -k, -m, --deselect or --ignore."""
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS
            and not any(config.getoption(name) for name in ("keyword", "markexpr", "deselect", "ignore", "ignore_glob")))


CRAWL_RUN = "termbase_crawl_run"


def pytest_configure(config):
    """In the process that runs the session (not in a pytest-xdist worker): the folder where the
    test processes share the browser's crawl of this run (the workers get it from
    pytest_configure_node, never from the environment a nested pytest would inherit)."""
    if not hasattr(config, "workerinput"):
        setattr(config, CRAWL_RUN, tempfile.mkdtemp(prefix="termbase-crawl-"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput[CRAWL_RUN] = getattr(node.config, CRAWL_RUN)


def crawl_run(config) -> Path:
    """This run's crawl folder, in the process that runs the session and in each worker."""
    workerinput = getattr(config, "workerinput", None)
    return Path(workerinput[CRAWL_RUN] if workerinput is not None else getattr(config, CRAWL_RUN))


def pytest_sessionfinish(session, exitstatus):
    """After the whole test command passed, the pages the browser visited are kept for later
    runs (tests/browser/crawl.py); after any other session they are not. A failure to keep
    them is a warning: the tests passed."""
    from tests.browser.crawl import keep

    run = getattr(session.config, CRAWL_RUN, None)
    if run is None or exitstatus != pytest.ExitCode.OK or not whole_command(session.config):
        return
    try:
        keep(Cache(PROJECT.cache_dir), Path(run))
    except Exception as exc:  # noqa: BLE001 - reported, and the next run visits the pages
        print(f"\nwarning: the browser's records of this run were not kept ({type(exc).__name__}: {exc})",
              file=sys.stderr)


def pytest_unconfigure(config):
    run = getattr(config, CRAWL_RUN, None)
    if run is not None:
        shutil.rmtree(run, ignore_errors=True)
