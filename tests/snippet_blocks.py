"""Shared helpers for the snippet tests: sections, blocks, subprocess runs, tolerances.

A section is the text between ``# --8<-- [start:NAME]`` and ``# --8<-- [end:NAME]`` in a
module under snippets/, exactly what pymdownx.snippets pastes into a page (marker lines of
other sections are dropped, as pymdownx does). A block is an ordered list of references
``snippets/<file>.py:<section>``; its sections concatenated must be a complete program.
Each snippet module declares its blocks in a module-level ``BLOCKS`` dict.
"""

import atexit
import io
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import tokenize
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"

MARKER = re.compile(r"^\s*#\s*-+8<-+\s*\[(start|end):([\w-]+)\]\s*$")
BLOCK_TIMEOUT_S = 120

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


def parse_sections(path):
    """{section name: text} of one file, checking that markers pair up and do not overlap."""
    sections, open_name, lines = {}, None, []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        match = MARKER.match(line)
        if not match:
            if open_name is not None:
                lines.append(line)
            continue
        kind, name = match.groups()
        if kind == "start":
            assert open_name is None, f"{path}:{number}: section {name} starts inside {open_name}"
            assert name not in sections, f"{path}:{number}: section {name} defined twice"
            open_name, lines = name, []
        else:
            assert open_name == name, f"{path}:{number}: end:{name} does not close {open_name}"
            sections[name] = "\n".join(lines) + "\n"
            open_name = None
    assert open_name is None, f"{path}: section {open_name} is never closed"
    return sections


def section_text(ref):
    """Text of ``snippets/<file>.py:<section>``, as pymdownx.snippets would include it."""
    path, _, name = ref.rpartition(":")
    sections = parse_sections(ROOT / path)
    assert name in sections, f"{ref}: no such section (have {sorted(sections)})"
    return sections[name]


def compose(refs):
    """The program a page shows for a block: its sections in order, dedented (mkdocs.yml sets
    dedent_subsections) and separated by two blank lines, as termbase's code_block writes them."""
    return "\n\n\n".join(textwrap.dedent(section_text(ref)).strip("\n") for ref in refs) + "\n"


def run_program(source, workdir, name="block.py"):
    """Run source with plain python in workdir (empty), without access to this repo."""
    workdir = Path(workdir)
    assert not any(workdir.iterdir()), f"{workdir} is not empty"
    script = workdir / name
    script.write_text(source, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    return subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )


_POOL = None
_TMP = None


def start_blocks(blocks):
    """Start every block of a {name: refs} dict in fresh interpreters; returns {name: Future}.

    Test modules call this at import, so all blocks of the suite run in the background,
    cpu_count at a time, while the in-process tests run. Each block gets its own empty
    directory under one temporary directory removed at exit.
    """
    # compose now: a broken reference fails at collection
    return {name: run_once(compose(refs)) for name, refs in blocks.items()}


_STARTED = {}  # program text -> Future: a program is run once per test session


def run_once(source):
    """Run a program in a fresh interpreter from its own empty directory, once per session:
    the site's code-block test gets the same result for a block the snippet tests already ran."""
    global _POOL, _TMP
    if _POOL is None:
        _TMP = tempfile.TemporaryDirectory(prefix="snippet-blocks-")
        _POOL = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
        atexit.register(_TMP.cleanup)
        atexit.register(_POOL.shutdown)  # registered last, so it runs before the cleanup
    key = source.strip()
    if key not in _STARTED:
        workdir = Path(tempfile.mkdtemp(dir=_TMP.name))
        _STARTED[key] = _POOL.submit(run_program, key + "\n", workdir)
    return _STARTED[key]


def check_block_run(future, expected_lines):
    """The block exited cleanly, wrote nothing to stderr, and its stdout is exactly
    expected_lines: every printed line, in order, nothing more and nothing less. A mismatch
    names the first line that differs (1-based), expected vs printed."""
    result = future.result()
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    printed = result.stdout.splitlines()
    expected_lines = list(expected_lines)
    if printed == expected_lines:
        return
    number = next(
        n for n in range(1, max(len(printed), len(expected_lines)) + 1)
        if expected_lines[n - 1 : n] != printed[n - 1 : n]
    )

    def shown(lines):
        return repr(lines[number - 1]) if number <= len(lines) else "(no such line)"

    raise AssertionError(
        f"output line {number} differs ({len(expected_lines)} lines expected, {len(printed)} "
        f"printed)\n  expected: {shown(expected_lines)}\n  printed:  {shown(printed)}\n"
        f"--- complete stdout ---\n{result.stdout}"
    )


def module_sections(module_name):
    return parse_sections(SNIPPETS / f"{module_name}.py")


MAX_LINE = 79  # the code box on a desktop page shows 80 columns: a reader never scrolls sideways


def check_module_layout(module):
    """Checks every snippet module must pass: every line (code, comments, docstrings) fits in
    MAX_LINE characters, its BLOCKS use all of its sections, each reference exists, and no
    section imports the snippets package."""
    name = module.__name__.rpartition(".")[2]
    path = SNIPPETS / f"{name}.py"
    too_long = [
        f"snippets/{name}.py:{number}: {len(line)} characters (at most {MAX_LINE})"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > MAX_LINE
    ]
    assert not too_long, "lines too long:\n" + "\n".join(too_long)
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
    blocks runs from an empty directory and prints exactly the expected lines. Use as
    `test_layout, test_block_runs_from_empty_dir = sb.module_tests(mod, EXPECTED_OUTPUT)`."""
    runs = start_blocks(module.BLOCKS)

    def test_layout():
        check_module_layout(module)
        assert set(expected_output) == set(module.BLOCKS)

    @pytest.mark.parametrize("block", sorted(module.BLOCKS))
    def test_block_runs_from_empty_dir(block):
        check_block_run(runs[block], expected_output[block])

    return test_layout, test_block_runs_from_empty_dir
