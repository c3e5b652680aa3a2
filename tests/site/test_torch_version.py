"""The "Verified" and claim marks name the torch that ran the code (the installed one, read
from its metadata), and a build on another torch than the pin fails in one line saying how
to reinstall."""

from importlib import metadata

import pytest
from mkdocs.exceptions import PluginError

from termbase.core.model import TermBase
from termbase.site import verify
from termbase.site.pages import Pages
from tests.site.sitetools import PROJECT


class NoRunner:
    def submit(self, code):
        raise AssertionError("no block may run on the wrong torch")


def test_the_marks_state_the_installed_torch():
    import torch

    base = TermBase(PROJECT)
    installed = metadata.version("torch").split("+")[0]
    assert base.torch_version == installed == torch.__version__.split("+")[0]
    pages = Pages(base, "en", None, "/")
    assert f"PyTorch {installed}" in pages.claim_mark("x") and f"PyTorch {installed}" in pages.code("softmax", "")


def test_the_installed_torch_is_the_pinned_one():
    assert TermBase(PROJECT).torch_problem() is None


@pytest.mark.parametrize("where", ["installed", "pinned"])
def test_another_torch_fails_the_build_in_one_line_saying_how_to_reinstall(where):
    base = TermBase(PROJECT)
    base.__dict__["torch_version" if where == "installed" else "torch_pin"] = "2.12.0"
    with pytest.raises(PluginError) as failed:
        verify.verify(base, NoRunner())
    message = str(failed.value)
    assert "\n" not in message and "2.12.0" in message and "requirements.txt pins torch==" in message
    assert "pip install --retries 0 --timeout 10 -r requirements-torch.txt" in message
    pages = Pages(base, "en", None, "/")
    assert f"PyTorch {base.torch_version}" in pages.claim_mark("x")
