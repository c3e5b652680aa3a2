"""Shared helpers for the snippet tests: sections, blocks, tolerances, and the two tests every
snippet module gets (`module_tests`).

A section is the text between ``# --8<-- [start:NAME]`` and ``# --8<-- [end:NAME]`` in a module
under snippets/, exactly what a page shows for it (termbase/core/sections.py, the one parser).
A block is an ordered list of references ``snippets/<file>.py:<section>``; its sections,
composed as the page composes them, are one complete program. Each snippet module declares its
blocks in ``BLOCKS``; its test declares in ``EXPECTED_OUTPUT`` every line each block prints.
"""

import contextlib
import io
import re
import textwrap
import tokenize
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from termbase.core import sections
from termbase.core.blocks import MAX_LINE
from termbase.run.blocks import first_difference

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"

# Tolerances per dtype for comparing our code with PyTorch's own kernels. float64 is
# tight enough to catch any real difference; half precisions only keep 3 (float16) or
# 2 (bfloat16) significant digits, and the order of the reductions differs between paths.
TOLERANCES = {
    torch.float64: {"atol": 1e-10, "rtol": 1e-8},
    torch.float32: {"atol": 1e-5, "rtol": 1e-4},
    torch.float16: {"atol": 1e-2, "rtol": 1e-2},
    torch.bfloat16: {"atol": 5e-2, "rtol": 5e-2},
}


def assert_close(actual, expected, dtype=None):
    """torch.testing.assert_close with this suite's tolerance for the dtype."""
    dtype = dtype or actual.dtype
    torch.testing.assert_close(actual, expected, **TOLERANCES[dtype], equal_nan=False)


class _StrayTensorsOnMeta(TorchFunctionMode):
    """torch.device("meta") as a context, except that torch.as_tensor of a
    tensor keeps that tensor's device, as it does outside any context."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        keeps_device = (func in (torch.as_tensor, torch.asarray) and args
                        and isinstance(args[0], torch.Tensor))
        if (func in _device_constructors() and kwargs.get("device") is None
                and not keeps_device):
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


@contextlib.contextmanager
def stray_tensors_on_meta():
    """Inside, a tensor created without `device=` lands on the 'meta' device.

    No GPU is needed to catch code that creates tensors on the default device
    instead of its inputs' device: run it here on CPU inputs. Code whose
    tensors follow its inputs runs unchanged and gives the same numbers; a
    tensor made on the default device is a meta tensor, which raises as soon
    as it meets a CPU tensor, or shows up in a result on 'meta'. (Build
    modules outside: nn.Module parameters would land on meta too.)
    """
    with _StrayTensorsOnMeta():
        yield


def assert_same_device_and_values(actual, expected):
    """A result of code run under stray_tensors_on_meta: on the expected
    tensor's device, with its values."""
    assert actual.device == expected.device, (actual.device, expected.device)
    assert_close(actual, expected)


def parse_sections(path):
    """{section name: text} of one file; markers must pair up and not overlap."""
    parsed = sections.parse_file(Path(path))
    assert not parsed.problems, [f"{path}:{line}: {what}" for line, what, _ in parsed.problems]
    return {name: section.text + "\n" for name, section in parsed.sections.items()}


def section_text(ref):
    """Text of ``snippets/<file>.py:<section>``, as the page shows it."""
    missing = sections.missing(ROOT, ref)
    assert missing is None, f"{ref}: {missing}"
    return sections.text(ROOT, ref) + "\n"


def compose(refs):
    """The program a page shows for a block: its sections, two blank lines apart."""
    for ref in refs:
        section_text(ref)
    return sections.compose(ROOT, refs)


def check_block_run(result, expected_lines):
    """The block exited cleanly, wrote nothing to stderr, and printed exactly the expected lines."""
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    difference = first_difference(list(expected_lines), result.stdout)
    assert difference is None, f"{difference}\n--- printed ---\n{result.stdout}"


def module_sections(module_name):
    return parse_sections(SNIPPETS / f"{module_name}.py")


def check_module_layout(module):
    """Checks every snippet module must pass: its BLOCKS use all of its sections, each
    reference exists, no section imports the snippets package, and no line is too long."""
    name = module.__name__.rpartition(".")[2]
    path = SNIPPETS / f"{name}.py"
    long = [f"{path.name}:{n}: {len(line)} characters" for n, line in
            enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"lines over {MAX_LINE} characters (a reader would scroll sideways): {long}"
    own = module_sections(name)
    assert own, f"{name} has no sections"
    used = set()
    for block, refs in module.BLOCKS.items():
        assert refs, f"{name}: block {block} is empty"
        for ref in refs:
            text = section_text(ref)  # raises if the reference is broken
            assert not re.search(r"^\s*(from|import)\s+snippets\b", text, re.M), ref
            if ref.startswith(f"snippets/{name}.py:"):
                used.add(ref.rpartition(":")[2])
    assert used == set(own), f"{name}: sections in no block: {sorted(set(own) - used)}"
    for section, text in own.items():
        if not section.endswith("_wrong"):  # comments and docstrings may still say why
            assert not _huge_literals(text), f"{name}:{section}: mask with torch.finfo(dtype).min"


def _huge_literals(source):
    """Numeric literals of 1e9 or more in magnitude (like the -1e9 of a careless mask)."""
    source = textwrap.dedent(source)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string for t in tokens if t.type == tokenize.NUMBER and abs(complex(t.string)) >= 1e9]


def module_tests(module, expected_output):
    """The two tests every snippet module gets: its sections are laid out right, and each of its
    blocks runs as a reader runs it (from an empty folder, nothing but torch installed) and
    prints exactly the expected lines. Use as
    `test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)`.
    Nothing runs at import: the programs run through the session's `block_runner` fixture."""
    programs = {block: compose(refs) for block, refs in module.BLOCKS.items()}

    def test_layout():
        check_module_layout(module)
        assert set(expected_output) == set(module.BLOCKS)

    @pytest.mark.parametrize("block", sorted(module.BLOCKS))
    def test_block_runs_from_empty_dir(block, block_runner):
        check_block_run(block_runner.run(programs[block]), expected_output[block])

    test_block_runs_from_empty_dir.termbase_programs = programs
    return test_layout, test_block_runs_from_empty_dir
