"""`python -m termbase new <slug>`: scaffold an entry in every language, its term-base record,
a snippet module and its test. Every placeholder says TODO(termbase); `check` rejects them."""

from __future__ import annotations

import re
from pathlib import Path

from termbase.model import DATA, DOCS, LANGS, PACKAGE, ROOT, TERMS_DIR, ui

TEMPLATES = DATA / "templates"


def scaffold(slug: str) -> list[Path]:
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug):
        raise ValueError(f"slug '{slug}' must be lowercase words joined by hyphens, e.g. 'causal-mask'")
    module = slug.replace("-", "_")
    targets = {TERMS_DIR / f"{slug}.yml": "record.yml",
               ROOT / "snippets" / f"{module}.py": "snippet.py",
               ROOT / "tests" / f"test_{module}.py": "test_snippet.py"}
    for lang in LANGS:
        targets[DOCS / "glossary" / f"{slug}.{lang}.md"] = ("entry.md", lang)
    existing = [p for p in targets if p.exists()]
    if existing:
        raise FileExistsError("already exists: " + ", ".join(str(p.relative_to(ROOT)) for p in existing))
    values = {
        "slug": slug, "module": module, "function": module, "term": slug.replace("-", " "),
        "title": slug.replace("-", " ").capitalize(),
        "categories": " | ".join(ui()["categories"]), "levels": " | ".join(ui()["levels"]),
    }
    for path, template in targets.items():
        if isinstance(template, tuple):
            template, lang = template
            text = (TEMPLATES / template).read_text(encoding="utf-8")
            text = text.replace("{{ ", "\0").replace(" }}", "\1")  # keep the entry markers
            text = text.format(**{k: v[lang] for k, v in ui()["sections"].items()})
            text = text.replace("\0", "{{ ").replace("\1", " }}")
        else:
            text = (TEMPLATES / template).read_text(encoding="utf-8").format(**values)
        path.write_text(text, encoding="utf-8")
    return list(targets)


NEXT_STEPS = """Next:
  1. termbase/data/terms/{slug}.yml      category, level, formula, related, sources; term and short definition per language
  2. snippets/{module}.py           the code readers copy (sections `code` and `demo`; the demo prints a check)
  3. tests/test_{module}.py         compare it with PyTorch's own implementation
  4. docs/glossary/{slug}.*.md      the prose, in English, Spanish and Danish
  5. python -m termbase check       until it prints no problem; then the README's test command
Every TODO(termbase) must go: `check` lists the ones left."""
