"""Projects to build: a copy of the real site, a copy with N generated terms, and the same
pages as plain per-language Markdown for the baselines (plain MkDocs + Material, Zensical).

Generated entries come from the project's own templates (termbase/data/templates/: entry.md,
record.yml, snippet.py) with every `TODO(termbase)` replaced by filler prose, so that
`python -m termbase check` passes on the copy exactly as it does on a real contribution.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from benchmarks.common import ROOT, build_env

sys.path.insert(0, str(ROOT))
from tests.site.sitetools import copy_project  # noqa: E402

LANGS = ("en", "es", "da")
PLACEHOLDER = "TODO(termbase)"
MARKER_LINE = re.compile(r"^\{\{ \w+ \}\}\s*$", re.M)
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fe", "gu", "ha", "ji", "be"]


# --------------------------------------------------------------------------- the real site

def real_project(dest: Path) -> Path:
    """A private copy of the sources (tests/site/sitetools.copy_project) plus the git history,
    which the translation-status hook reads."""
    dest.mkdir(parents=True, exist_ok=True)
    copy_project(dest)
    if (ROOT / ".git").is_dir():
        shutil.copytree(ROOT / ".git", dest / ".git")
    return dest


# --------------------------------------------------------------------------- filler prose

def word(i: int) -> str:
    """A pronounceable, unique made-up word for term number i (4096 before repeating)."""
    digits = [(i // 256) % 16, (i // 16) % 16, i % 16]
    return "".join(SYLLABLES[d] for d in digits)


def term_names(i: int) -> dict[str, str]:
    w = word(i)
    return {"en": f"{w} attention", "es": f"atención {w}", "da": f"{w}-opmærksomhed"}


PROSE = {
    "en": [
        "This variant changes how the queries $Q$ are compared with the keys $K$ before the "
        "softmax, and it keeps the values $V$ exactly as they are.",
        "In practice it is used when the sequence length $n$ grows and the cost of the full "
        "score matrix, $O(n^2 d)$, starts to dominate a training step.",
        "Compared with {other}, it needs the same parameters but a different order of the "
        "operations, which matters for memory more than for arithmetic.",
        "Practitioners name it in papers and code reviews, usually next to {other2}, and expect "
        "readers to know the shapes $(B, h, T, d_k)$ it works on.",
    ],
    "es": [
        "Esta variante cambia la forma en que las consultas $Q$ se comparan con las claves $K$ "
        "antes del softmax y conserva los valores $V$ tal como son.",
        "En la práctica se usa cuando la longitud de la secuencia $n$ crece y el coste de la "
        "matriz de puntuaciones completa, $O(n^2 d)$, domina un paso de entrenamiento.",
        "Frente a la {other}, necesita los mismos parámetros pero otro orden de las "
        "operaciones, lo que importa más para la memoria que para la aritmética.",
        "Se menciona en artículos y revisiones de código, casi siempre junto a la {other2}, y "
        "se espera que el lector conozca las formas $(B, h, T, d_k)$ con las que trabaja.",
    ],
    "da": [
        "Denne variant ændrer, hvordan forespørgslerne $Q$ sammenlignes med nøglerne $K$ før "
        "softmax, og den bevarer værdierne $V$ præcis som de er.",
        "I praksis bruges den, når sekvenslængden $n$ vokser, og prisen for den fulde "
        "scorematrix, $O(n^2 d)$, begynder at dominere et træningsskridt.",
        "Sammenlignet med {other} kræver den de samme parametre, men en anden rækkefølge af "
        "operationerne, hvilket betyder mere for hukommelsen end for regnearbejdet.",
        "Fagfolk nævner den i artikler og kodegennemgange, som regel sammen med {other2}, og "
        "forventer, at læseren kender formerne $(B, h, T, d_k)$, den arbejder på.",
    ],
}
SHORT = {
    "en": "A made-up attention variant number {i}, generated to measure how the site's build grows with its size.",
    "es": "Una variante de atención inventada, la número {i}, generada para medir cómo crece la compilación del sitio.",
    "da": "En opdigtet attention-variant nummer {i}, genereret for at måle, hvordan sitets bygning vokser med størrelsen.",
}


def filler(lang: str, i: int, n: int, sentences: int) -> str:
    others = term_names((i + 1) % n)[lang], term_names((i + 2) % n)[lang]
    parts = PROSE[lang]
    text = " ".join(parts[(i + k) % len(parts)] for k in range(sentences))
    return text.replace("{other}", others[0]).replace("{other2}", others[1])


# --------------------------------------------------------------------------- scale project

def _prune_real_content(project: Path) -> None:
    """Remove the real entries so that only generated ones remain (the non-entry pages stay)."""
    for path in (project / "termbase" / "data" / "terms").glob("*.yml"):
        path.unlink()
    for path in (project / "docs" / "glossary").glob("*.md"):
        if not path.name.startswith("index."):
            path.unlink()
    referenced = set()
    for page in (project / "docs").rglob("*"):
        if page.is_file() and page.suffix in (".md", ".py", ".ipynb"):
            text = page.read_text(encoding="utf-8", errors="replace")
            referenced |= set(re.findall(r'--8<--\s+"snippets/([\w]+)\.py', text))
    for module in (project / "snippets").glob("*.py"):
        if module.name != "__init__.py" and module.stem not in referenced:
            module.unlink()
            test = project / "tests" / f"test_{module.stem}.py"
            if test.exists():
                test.unlink()
    # A page kept from the real site may link to an entry that is gone: keep its text, drop the link.
    pages = {p.relative_to(project / "docs").as_posix() for p in (project / "docs").rglob("*.md")}
    neutral = {re.sub(r"\.(en|es|da)\.md$", ".md", p) for p in pages}
    link = re.compile(r"\[([^\]]+)\]\(([^)\s#]+\.md)(#[^)]*)?\)")
    for page in (project / "docs").rglob("*.md"):
        rel_dir = page.parent.relative_to(project / "docs")

        def fix(match, rel_dir=rel_dir):
            target = (Path("/") / rel_dir / match.group(2)).resolve().as_posix().lstrip("/")
            return match.group(0) if target in neutral or "://" in match.group(2) else match.group(1)

        text = page.read_text(encoding="utf-8")
        fixed = link.sub(fix, text)
        # and `check` would take a page that quotes the placeholder for an unfilled one
        fixed = fixed.replace(PLACEHOLDER, "TODO (termbase)")
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def _entry_page(template: str, sections: dict, lang: str, i: int, n: int) -> str:
    text = template.replace("{{ ", "\0").replace(" }}", "\1")
    text = text.format(**{k: v[lang] for k, v in sections.items()})
    text = text.replace("\0", "{{ ").replace("\1", " }}")
    out = []
    for number, line in enumerate(text.splitlines()):
        if PLACEHOLDER in line:
            indent = re.match(r"^(\s*(?:\d+\.\s+|[-*]\s+)?)", line).group(1)
            body = filler(lang, i + number, n, 3)
            if line.lstrip().startswith("*") and not line.lstrip().startswith("**"):
                body = f"*{filler(lang, i + number + 1, n, 1)}*"
            elif "**" in line:
                body = f"**{term_names(i)[lang].capitalize()}.** {body}"
            out.append(indent + body)
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _record(template: str, values: dict, ui: dict, i: int, n: int, module: str) -> dict:
    record = yaml.safe_load(template.format(**values))
    record["category"] = list(ui["categories"])[i % len(ui["categories"])]
    record["level"] = list(ui["levels"])[i % len(ui["levels"])]
    record["related"] = sorted({f"{word((i + k) % n)}-attention" for k in (1, 2)} - {f"{word(i)}-attention"})
    record["sources"] = ["vaswani2017"]
    record["formula"] = [rf"\operatorname{{Attention}}_{{{i}}}(Q, K, V) = \operatorname{{softmax}}\left(\frac{{Q K^\top}}{{\sqrt{{d_k}}}}\right) V"]
    record["code"] = [[f"snippets/{module}.py:code", f"snippets/{module}.py:demo"]]
    record.pop("figure", None)
    names = term_names(i)
    for lang in LANGS:
        local = record.setdefault(lang, {})
        local["term"] = names[lang]
        local["short"] = SHORT[lang].format(i=i)
        for key, value in list(local.items()):
            if isinstance(value, str) and PLACEHOLDER in value:
                local[key] = names[lang]
    return record


TEST_TEMPLATE = '''"""Generated by benchmarks/: the snippet runs and keeps the shape."""

import torch

from snippets.{module} import {module}


def test_shape():
    assert {module}(torch.randn(2, 3)).shape == (2, 3)
'''


def scale_project(dest: Path, n: int) -> dict:
    """A copy of the project whose glossary is N generated terms, each with three pages, a record
    and one snippet module (with its test). Returns what the benchmarks need to know about it."""
    dest.mkdir(parents=True, exist_ok=True)
    copy_project(dest)
    _prune_real_content(dest)
    # Executed notebooks are cached by a hash of their code: reuse the repository's, if any.
    notebooks = ROOT / ".termbase-cache" / "notebooks"
    if notebooks.is_dir() and not (dest / ".termbase-cache" / "notebooks").is_dir():
        shutil.copytree(notebooks, dest / ".termbase-cache" / "notebooks")
    templates = dest / "termbase" / "data" / "templates"
    ui = yaml.safe_load((dest / "termbase" / "data" / "ui.yml").read_text(encoding="utf-8"))
    entry_tpl = (templates / "entry.md").read_text(encoding="utf-8")
    record_tpl = (templates / "record.yml").read_text(encoding="utf-8")
    snippet_tpl = (templates / "snippet.py").read_text(encoding="utf-8")
    slugs = []
    for i in range(n):
        slug = f"{word(i)}-attention"
        module = slug.replace("-", "_")
        values = {"slug": slug, "module": module, "function": module, "term": slug.replace("-", " "),
                  "title": slug.replace("-", " ").capitalize(),
                  "categories": " | ".join(ui["categories"]), "levels": " | ".join(ui["levels"])}
        record = _record(record_tpl, values, ui, i, n, module)
        (dest / "termbase" / "data" / "terms" / f"{slug}.yml").write_text(
            yaml.safe_dump(record, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
        snippet = snippet_tpl.format(**values)
        snippet = re.sub(r"TODO\(termbase\):? ?", "", snippet)
        (dest / "snippets" / f"{module}.py").write_text(snippet, encoding="utf-8")
        (dest / "tests" / f"test_{module}.py").write_text(TEST_TEMPLATE.format(module=module), encoding="utf-8")
        for lang in LANGS:
            (dest / "docs" / "glossary" / f"{slug}.{lang}.md").write_text(
                _entry_page(entry_tpl, ui["sections"], lang, i, n), encoding="utf-8")
        slugs.append(slug)
    return {"n": n, "slugs": slugs, "pages": n * len(LANGS)}


def termbase_check(project: Path) -> tuple[bool, str]:
    result = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project, capture_output=True,
                            text=True, env=build_env())
    return result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- baselines

class _AnyTagLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without MkDocs: `!ENV [NAME, default]` becomes the default."""


def _any_tag(loader, suffix, node):
    if isinstance(node, yaml.SequenceNode):
        items = loader.construct_sequence(node)
        return items[-1] if items else None
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    return loader.construct_scalar(node)


_AnyTagLoader.add_multi_constructor("!", _any_tag)
_AnyTagLoader.add_multi_constructor("tag:yaml.org,2002:python/", _any_tag)


def _flat_nav(nav, ui: dict, lang: str) -> list:
    """The project's nav with every page at the top level and its label in `lang`."""
    out = []

    def label(text):
        return text if lang == "en" else ui.get("nav", {}).get(text, {}).get(lang, text)

    def walk(items, parent=None):
        for item in items or []:
            if isinstance(item, dict):
                (name, value), = item.items()
                if isinstance(value, list):
                    walk(value, name)
                else:
                    out.append({label(name): value})
            elif isinstance(item, str):
                out.append({label(parent) if parent else item: item} if parent else item)
                parent = None  # only the section's index page takes the section's name
    walk(nav)
    return out


def plain_projects(project: Path, dest: Path) -> dict[str, Path]:
    """One plain project per language: the same Markdown (`<page>.<lang>.md` -> `<page>.md`) with
    the `{{ marker }}` lines stripped, the project's theme and Markdown extensions, a flat nav,
    and no plugins and no hooks. Each is built by plain MkDocs and by Zensical (which reads
    mkdocs.yml)."""
    config = yaml.load((project / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)
    ui = yaml.safe_load((project / "termbase" / "data" / "ui.yml").read_text(encoding="utf-8"))
    out = {}
    for lang in LANGS:
        root = dest / lang
        docs = root / "docs"
        docs.mkdir(parents=True)
        for path in (project / "docs").rglob("*"):
            if not path.is_file():
                continue
            rel = path.relative_to(project / "docs").as_posix()
            match = re.fullmatch(r"(.+)\.(en|es|da)\.(md|ipynb|py)", rel)
            if match and match.group(2) != lang:
                continue
            target = docs / (f"{match.group(1)}.{match.group(3)}" if match else rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".md":
                target.write_text(MARKER_LINE.sub("", path.read_text(encoding="utf-8")), encoding="utf-8")
            else:
                shutil.copy2(path, target)
        if (project / "snippets").is_dir():
            shutil.copytree(project / "snippets", root / "snippets")
        theme = dict(config.get("theme") or {})
        theme["language"] = lang
        nav = [item for item in _flat_nav(config.get("nav"), ui, lang)
               if (docs / (next(iter(item.values())) if isinstance(item, dict) else item)).is_file()]
        plain = {
            "site_name": ui["site_name"][lang],
            "site_url": f"http://127.0.0.1:8000/{'' if lang == 'en' else lang + '/'}",
            "docs_dir": "docs",
            "site_dir": "site",
            "theme": theme,
            "plugins": [],
            "extra_css": [c for c in config.get("extra_css") or [] if (docs / c).is_file()],
            "nav": nav,
            "validation": config.get("validation") or {},
            "markdown_extensions": config.get("markdown_extensions") or [],
        }
        (root / "mkdocs.yml").write_text(yaml.safe_dump(plain, allow_unicode=True, sort_keys=False), encoding="utf-8")
        out[lang] = root
    return out
