"""snippets/{module}.py against PyTorch's own implementation."""

import pytest

import snippets.{module} as mod
from snippets.{module} import {function}  # noqa: F401
from tests import snippet_blocks as sb

# Every line each block prints, exactly: the build refuses a page whose block prints anything
# else, so a demo that prints `False` where `True` is declared never reaches the site.
EXPECTED_OUTPUT = {{
    "demo": [
        "output shape: (2, 3)",
    ],
}}

test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)


def test_matches_pytorch():
    pytest.fail("TODO(termbase): compare {function} with torch's reference implementation")
