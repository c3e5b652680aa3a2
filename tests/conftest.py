import pytest

from termbase.run.blocks import BlockRunner
from termbase.run.cache import Cache
from tests.site.sitetools import PROJECT, ROOT, mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The whole site, built once per test session exactly as `mkdocs build --strict` builds it."""
    site = tmp_path_factory.mktemp("site")
    # The hosted repository's address, as the deploy workflow passes it (README: Deployment).
    result = mkdocs_build(ROOT, site, REPO_URL="https://github.com/attention-glossary/attention-glossary")
    assert result.returncode == 0, result.stdout + result.stderr
    return site, result


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
