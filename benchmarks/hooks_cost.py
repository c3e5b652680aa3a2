"""Per-page cost of the termbase hooks at each size, measured inside a generated project:
the same page through tooltips.add_tooltips, mathml.to_mathml and render.expand, in a fresh
interpreter whose `termbase` is that project's. Shows which per-page work grows with N."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.common import build_env

SCRIPT = r'''
import json, statistics, sys, time
sys.path.insert(0, ".")
from termbase import model, render, tooltips, mathml
import markdown
slugs = sorted(model.terms())[:PAGES]
out = {"terms": len(model.terms())}
timings = {"expand": [], "markdown": [], "mathml": [], "tooltips": [], "tooltip_regex_compile": []}
for slug in slugs:
    src = open(f"docs/glossary/{slug}.en.md", encoding="utf-8").read()
    t = time.perf_counter(); md = render.expand(src, slug, "en"); timings["expand"].append(time.perf_counter() - t)
    t = time.perf_counter()
    html = markdown.markdown(md, extensions=["admonition", "attr_list", "tables", "pymdownx.arithmatex"],
                             extension_configs={"pymdownx.arithmatex": {"generic": True}})
    timings["markdown"].append(time.perf_counter() - t)
    t = time.perf_counter(); html = mathml.to_mathml(html, where=slug); timings["mathml"].append(time.perf_counter() - t)
    t = time.perf_counter(); tooltips.add_tooltips(html, f"glossary/{slug}/", "en", slug); timings["tooltips"].append(time.perf_counter() - t)
    if hasattr(tooltips, "_patterns"):  # the version that compiled one regex of every name per page
        import re
        patterns = tooltips._patterns("en", slug)
        t = time.perf_counter()
        re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n, _ in patterns) + r")(?![\w-])", re.IGNORECASE)
        timings["tooltip_regex_compile"].append(time.perf_counter() - t)
out["ms_per_page"] = {k: statistics.median(v) * 1e3 for k, v in timings.items() if v}
print(json.dumps(out))
'''


def measure(project: Path, pages: int = 15) -> dict:
    result = subprocess.run([sys.executable, "-c", SCRIPT.replace("PAGES", str(pages))], cwd=project,
                            capture_output=True, text=True, env=build_env(), timeout=900)
    if result.returncode:
        return {"error": (result.stdout + result.stderr)[-3000:]}
    return json.loads(result.stdout.strip().splitlines()[-1])
