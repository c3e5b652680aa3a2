"""`python -m termbase new <slug>`: scaffold an entry in every language, its term-base record,
a snippet module with its BLOCKS and its test with the expected output of every block. Every
placeholder says TODO(termbase); `check` rejects each one left."""

from __future__ import annotations

from pathlib import Path

from termbase.core import terminology
from termbase.core.markdown import SLUG
from termbase.core.model import TermBase


def scaffold(base: TermBase, slug: str) -> list[Path]:
    project = base.project
    if not SLUG.fullmatch(slug):
        raise ValueError(f"slug '{slug}' must be lowercase words joined by hyphens, e.g. 'causal-mask'")
    templates = project.data_dir / "templates"
    module = slug.replace("-", "_")
    targets = {project.terms_dir / f"{slug}.yml": "record.yml",
               project.snippets / f"{module}.py": "snippet.py",
               project.tests / f"test_{module}.py": "test_snippet.py"}
    for lang in base.languages:
        targets[project.docs / "glossary" / f"{slug}.{lang}.md"] = ("entry.md", lang)
    existing = [p for p in targets if p.exists()]
    if existing:
        raise FileExistsError("already exists: " + ", ".join(project.shown(p) for p in existing))
    block = (templates / "record-language.yml").read_text(encoding="utf-8")
    values = {
        "slug": slug, "module": module, "function": module, "title": slug.replace("-", " ").capitalize(),
        "categories": " | ".join(base.ui["categories"]), "levels": " | ".join(base.ui["levels"]),
        "languages": "".join(block.format(lang=lang, term=slug.replace("-", " ") if lang == base.default_language
                                          else f"TODO(termbase) the term in {lang}", language=base.language_name(lang),
                                          extra=name_fields(lang))
                             for lang in base.languages),
    }
    for path, template in targets.items():
        if isinstance(template, tuple):
            template, lang = template
            text = (templates / template).read_text(encoding="utf-8")
            text = text.replace("{{ ", "\0").replace(" }}", "\1")  # keep the entry markers
            text = text.format(**{k: v[lang] for k, v in base.ui["sections"].items()})
            text = text.replace("\0", "{{ ").replace("\1", " }}")
        else:
            text = (templates / template).read_text(encoding="utf-8").format(**values)
        path.write_text(text, encoding="utf-8")
    return list(targets)


def name_fields(lang: str) -> str:
    """The fields `check` asks of a new preferred name in `lang` besides status and type: its
    gender where the language has genders, and `proposed: true` until a published text is quoted."""
    extra = ""
    if lang in terminology.GENDERS:
        extra += f", gender: TODO(termbase) {' or '.join(terminology.GENDERS[lang])}"
    if lang in terminology.ATTESTED:
        extra += ", proposed: true"
    return extra


NEXT_STEPS = """Next:
  1. termbase/data/terms/{slug}.yml  category, level, formula, related, sources; term and short definition per language
  2. snippets/{module}.py            the code readers copy: BLOCKS, and sections `code` and `demo` (the demo prints its checks)
  3. tests/test_{module}.py          EXPECTED_OUTPUT (every line each block prints), and tests against PyTorch's own code
  4. docs/glossary/{slug}.*.md       the prose in every language (see each language's style guide)
  5. .venv/bin/python -m termbase test {slug}    this entry's tests and its blocks as each page shows them
  6. .venv/bin/python -m termbase check          until it prints no problem; before a commit the quick tier,
                                                 before a pull request the README's test command (see contributing)
Every TODO(termbase) must go: `check` lists the ones left."""
