import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.site.sitetools import mkdocs_build  # noqa: E402


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The whole site, built once per test session exactly as `mkdocs build --strict` builds it."""
    site = tmp_path_factory.mktemp("site")
    result = mkdocs_build(ROOT, site)
    assert result.returncode == 0, result.stdout + result.stderr
    return site, result
