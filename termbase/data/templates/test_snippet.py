"""Tests for snippets/{module}.py: prove it equal to PyTorch's own implementation."""

import pytest

from snippets.{module} import {function}  # noqa: F401


def test_matches_pytorch():
    pytest.fail("TODO(termbase): compare {function} with torch's reference implementation")
