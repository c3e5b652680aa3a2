"""The figures in docs/assets/figures are what figures/ (at the repository root) draws (to a hundredth of a
point), and fit the site.

The SVGs are committed (the site build does not run matplotlib), so this is what keeps a figure
from drifting away from its code: change the code, run `python -m termbase figures`, commit both.
"""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import figures

FIGURES = figures.load_all()
from termbase.run.cache import Cache, key
from tests.site.sitetools import PROJECT, ROOT, build_env

COMMITTED = ROOT / "docs" / "assets" / "figures"
SVG = "{http://www.w3.org/2000/svg}"
MAX_BYTES = 60_000
# The only words a figure may show: one figure serves the English, Spanish and Danish pages.
ALLOWED_WORDS = {"MHA", "GQA", "MQA"}  # acronyms, as plain text
ALLOWED_MATH_NAMES = {"softmax"}  # function names, as \mathrm{...} in mathtext


# `python -m termbase figures --out <folder>` as a contributor runs it, in a fresh process (a
# figure must not depend on what else ran), with figures.draw_all also keeping each figure's
# strings for test_figure_holds_no_words: every figure is drawn once for both.
REDRAW = """import json, runpy, sys
import figures
out, kept = sys.argv[1:]
labels, draw_all = {}, figures.draw_all
figures.draw_all = lambda folder: draw_all(folder, labels)
sys.argv = ["termbase", "figures", "--out", out]
try:
    runpy.run_module("termbase", run_name="__main__")
except SystemExit as done:
    assert not done.code, done.code
with open(kept, "w", encoding="utf-8") as file:
    json.dump(labels, file)
"""


# What a drawing depends on: the Python of figures/, of the snippets it computes with and of
# termbase (the command), REDRAW, and the versions of Python, matplotlib, torch and numpy.
DRAWN_FROM = ("figures", "snippets", "termbase")
NAMESPACE = "figures-drawn"


def drawing_key(root: Path) -> str:
    parts = [REDRAW]
    for folder in DRAWN_FROM:
        for path in sorted((root / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                parts += [path.relative_to(root).as_posix(), hashlib.sha256(path.read_bytes()).hexdigest()]
    return key(*parts, packages=("matplotlib", "torch", "numpy"))


def test_the_drawing_key_changes_with_the_code_that_draws(tmp_path):
    for folder in DRAWN_FROM:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert drawing_key(tmp_path) == drawing_key(ROOT)
    for module in ("figures/entropy.py", "snippets/softmax.py", "termbase/__main__.py"):
        (tmp_path / module).write_text((ROOT / module).read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        assert drawing_key(tmp_path) != drawing_key(ROOT), module
        shutil.copy2(ROOT / module, tmp_path / module)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    """(the folder the command drew into, {figure: its strings}). Drawn once per set of inputs
    (drawing_key) on a machine: a later run with the same code reads that drawing from the
    project's cache (.termbase-cache/figures-drawn/), as the suite reads executed blocks; a
    fresh clone, as in CI, draws."""
    cache, entry = Cache(PROJECT.cache_dir), drawing_key(ROOT)
    with cache.lock(NAMESPACE, entry):
        found = cache.get(NAMESPACE, entry)
        if found is None:
            def draw(folder: Path):
                out, labels = folder / "svg", folder / "labels.json"
                result = subprocess.run([sys.executable, "-c", REDRAW, str(out), str(labels)], cwd=ROOT,
                                        capture_output=True, text=True, env=build_env(), timeout=300)
                assert result.returncode == 0, result.stdout + result.stderr
                assert result.stdout.count("drew ") == 2 * len(FIGURES), result.stdout

            found = cache.put(NAMESPACE, entry, draw)
            cache.keep_newest(NAMESPACE, 3)
    return found / "svg", json.loads((found / "labels.json").read_text(encoding="utf-8"))


# A number in an SVG (a coordinate in points, a colour's alpha, a font size).
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# How far a coordinate may move between two CPUs: float32 sums and exps end in different digits
# under AVX2 and AVX-512 (seen in attention-entropy), a hundredth of a point is invisible.
POINT_TOLERANCE = 0.01


def same_drawing(a: str, b: str) -> bool:
    """The same SVG text, each number equal to within POINT_TOLERANCE."""
    if NUMBER.split(a) != NUMBER.split(b):
        return False
    numbers = list(zip(NUMBER.findall(a), NUMBER.findall(b)))
    return all(x == y or abs(float(x) - float(y)) <= POINT_TOLERANCE for x, y in numbers)


def test_same_drawing_tells_a_moved_point_from_a_rounding_digit():
    path = '<path d="M 64.8 44.056632 L 82.44 44.058949"/>'
    assert same_drawing(path, path.replace("44.058949", "44.058921"))
    assert not same_drawing(path, path.replace("44.058949", "44.158949"))
    assert not same_drawing(path, path.replace("L 82.44", "M 82.44"))
    assert not same_drawing(path, path + " ")


def test_committed_figures_are_what_the_code_draws(regenerated):
    out, _ = regenerated
    drawn = sorted(p.name for p in out.glob("*.svg"))
    committed = sorted(p.name for p in COMMITTED.glob("*.svg"))
    assert drawn == sorted(f"{name}{variant}.svg" for name in FIGURES for variant in ("", "-dark"))
    assert committed == drawn, "run `python -m termbase figures` and commit docs/assets/figures"
    stale = [name for name in drawn
             if not same_drawing((out / name).read_text(encoding="utf-8"), (COMMITTED / name).read_text(encoding="utf-8"))]
    assert not stale, f"{stale} differ from their code: run `python -m termbase figures` and commit them"


@pytest.mark.parametrize("name", sorted(FIGURES))
@pytest.mark.parametrize("variant,paper", [("", "#ffffff"), ("-dark", figures.DARK[figures.PAPER])])
def test_figure_is_a_small_self_contained_svg_on_its_paper(name, variant, paper):
    path = COMMITTED / f"{name}{variant}.svg"
    data = path.read_bytes()
    assert len(data) < MAX_BYTES, f"{path.name}: {len(data)} bytes"
    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg"
    for element in root.iter():
        for attr, value in element.attrib.items():
            if attr.rsplit("}", 1)[-1] in ("href", "src"):
                assert value.startswith("#"), f"{path.name}: external reference {attr}={value!r}"
        assert element.tag != f"{SVG}image", f"{path.name}: a raster image; draw it as vectors"
    text = data.decode("utf-8")
    assert not re.search(r"url\((?!#)", text), f"{path.name}: url() pointing outside the file"
    assert "@import" not in text
    # Opaque paper under everything: white for the light scheme, Material's slate for the dark.
    background = root.find(f"{SVG}g/{SVG}g/{SVG}path")
    rules = dict(re.findall(r"\.(s\d+)\{([^}]*)\}", text))
    assert f"fill: {paper}" in rules[background.get("class")]
    if variant:  # the dark drawing keeps no light neutral colour behind
        assert not [c for c in figures.DARK if c != figures.PAPER and c.lower() in text.lower()], path.name


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_holds_no_words(name, regenerated):
    _, labels = regenerated
    for label in labels[name]:
        parts = label.split("$")
        plain, math = parts[0::2], parts[1::2]
        for chunk in plain:
            words = set(re.findall(r"[^\W\d_]{2,}", chunk))
            assert words <= ALLOWED_WORDS, f"{name}: {label!r} has words {sorted(words - ALLOWED_WORDS)}"
        for chunk in math:
            # Letters side by side in math are symbols multiplied (QK); words hide in \mathrm, \text...
            names = set(re.findall(r"\\(?:mathrm|text\w*|operatorname|mathit|mathbf|mathsf)\{([^}]*)\}", chunk))
            assert names <= ALLOWED_MATH_NAMES, f"{name}: {label!r} names {sorted(names - ALLOWED_MATH_NAMES)}"


def test_the_strings_kept_while_drawing_are_what_labels_reads(regenerated):
    _, labels = regenerated
    assert sorted(labels) == sorted(FIGURES)
    name = sorted(FIGURES)[0]
    assert labels[name] == figures.labels(name) and labels[name]
