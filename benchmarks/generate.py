"""Projects to build: a copy of the real site, the real site grown to N terms with generated
entries, and the same pages as plain per-language Markdown for the baselines (plain MkDocs +
Material, Zensical).

A generated project keeps every real page, record, snippet and notebook and adds
N - (real terms) entries, so that it is the real site grown to N terms: same non-entry pages,
same claims, same notebooks. Each generated entry is made the way `python -m termbase new` makes
one (termbase/cli/new.py), from termbase/data/templates/: the record (record.yml, with its
`{languages}` placeholder filled from record-language.yml), three pages (entry.md), and for the
code a snippet module (snippet.py, with BLOCKS) and its test (test_snippet.py, with
EXPECTED_OUTPUT and module_tests). Every TODO(termbase) is replaced by prose made of real words of
each language, so that `python -m termbase check` (spelling with hunspell, forms to avoid,
claims) passes on the copy as on a real contribution.

Code blocks: the build executes every distinct block once (cached by content in
.termbase-cache/blocks). A generated term embeds one of `distinct_blocks` shared snippet modules
(term i uses module i mod distinct_blocks), so a cold build at 1000 terms runs that many blocks,
not 1000: the cost of one more distinct block is measured separately (run.py, `block_cost`), and
RESULTS.md says what a site with one block per term would add.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from benchmarks.common import DEFAULT, LANGS, ROOT, build_env  # LANGS: the project's, from mkdocs.yml

sys.path.insert(0, str(ROOT))
from termbase.cli.new import name_fields  # noqa: E402  (the fields `termbase new` writes)
from termbase.site import source_check  # noqa: E402  (where a clean check is kept)
from tests.site.sitetools import copy_project  # noqa: E402

PLACEHOLDER = "TODO(termbase)"
SLUG = "attention-variant-{i}"
MODULE = "attention_variant_code_{k}"  # the shared snippet modules


# --------------------------------------------------------------------------- the real site

def _git_history(dest: Path) -> None:
    """Give the copy the repository's history (translation status reads `git log`): a shared
    clone (objects borrowed, nothing copied) reset to the commit measured, its index filled, so
    that `git status` in the copy shows only what the copy changed."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode:
        return
    clone = dest.parent / f".{dest.name}-git"
    shutil.rmtree(clone, ignore_errors=True)
    steps = [["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(clone)]]
    for step in steps:
        if subprocess.run(step, capture_output=True).returncode:
            return
    shutil.move(str(clone / ".git"), str(dest / ".git"))
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "reset", "-q", head.stdout.strip()], cwd=dest, capture_output=True)


def real_project(dest: Path) -> Path:
    """A private copy of the sources (tests/site/sitetools.copy_project, without the cache) with
    the git history."""
    dest.mkdir(parents=True, exist_ok=True)
    copy_project(dest, cache=False)
    _git_history(dest)
    return dest


# --------------------------------------------------------------------------- generated prose

def term_names(i: int) -> dict[str, str]:
    return {"en": f"attention variant {i}", "es": f"variante de atención {i}", "da": f"attention-variant {i}"}


# The grammatical gender of each name above, where the language has one ("variante" is
# feminine, "variant" common), and `proposed: true`: the names are this generator's own, and the
# term base asks a preferred term for an attestation or that mark (termbase/data/terms/README.md).
GENDER = {"es": "feminine", "da": "common"}


# Sentences of real words in each language (hunspell's dictionaries, no form the style guides
# or the term base avoid). {other} and {other2} are the names of other generated terms, so that
# the tooltips of every page have names to link, as on the real site.
PROSE = {
    "en": [
        "This variant compares the queries $Q$ with the keys $K$ in a different order before the "
        "softmax, and it keeps the values $V$ as they are.",
        "It is used when the sequence length $n$ grows and the full score matrix, with its cost of "
        "$O(n^2 d)$, starts to dominate a training step.",
        "Compared with {other}, it needs the same parameters but a different order of the "
        "operations, which matters more for memory than for arithmetic.",
        "Papers and code reviews name it next to {other2}, and they expect the reader to know the "
        "shapes $(B, h, T, d_k)$ it works on.",
    ],
    "es": [
        "Esta variante compara las consultas $Q$ con las claves $K$ en otro orden antes del "
        "softmax y conserva los valores $V$ tal como son.",
        "Se usa cuando la longitud de la secuencia $n$ crece y la matriz de puntuaciones completa, "
        "con su coste de $O(n^2 d)$, empieza a dominar cada paso de entrenamiento.",
        "Frente a la {other}, necesita los mismos parámetros, pero otro orden de las operaciones, "
        "lo que importa más para la memoria que para la aritmética.",
        "Los artículos y las revisiones de código la mencionan junto a la {other2} y esperan que "
        "el lector conozca las formas $(B, h, T, d_k)$ con las que trabaja.",
    ],
    "da": [
        "Denne variant sammenligner forespørgslerne $Q$ med nøglerne $K$ i en anden rækkefølge "
        "før softmax og bevarer værdierne $V$, som de er.",
        "Den bruges, når længden $n$ af sekvensen vokser, og den fulde matrix af scorer med sin "
        "pris på $O(n^2 d)$ begynder at dominere hvert skridt i træningen.",
        "Sammenlignet med {other} kræver den de samme parametre, men en anden rækkefølge af "
        "operationerne, og det betyder mere for hukommelsen end for regnetiden.",
        "Artikler og gennemgange af kode nævner den sammen med {other2} og forventer, at læseren "
        "kender formerne $(B, h, T, d_k)$, som den arbejder på.",
    ],
}
EXAMPLE = {
    "en": "*Example: the model uses {name} in every layer.*",
    "es": "*Ejemplo: el modelo usa la {name} en cada capa.*",
    "da": "*Eksempel: modellen bruger {name} i hvert lag.*",
}
FORMULA = {
    "en": "Here $Q$, $K$ and $V$ are the queries, keys and values, $d_k$ is the width of each key, "
          "and the subscript names the variant.",
    "es": "Aquí $Q$, $K$ y $V$ son las consultas, las claves y los valores, $d_k$ es el ancho de cada "
          "clave y el subíndice indica la variante.",
    "da": "Her er $Q$, $K$ og $V$ forespørgslerne, nøglerne og værdierne, $d_k$ er bredden af hver "
          "nøgle, og indekset angiver varianten.",
}
CODE = {
    "en": "The block below defines the function and prints the shape of its output; the last line "
          "is the one to check.",
    "es": "El bloque siguiente define la función e imprime la forma de su salida; la última línea es "
          "la que conviene comprobar.",
    "da": "Blokken nedenfor definerer funktionen og skriver formen af dens output; den sidste linje "
          "er den, der skal kontrolleres.",
}
ORIGIN = {
    "en": "The name was made up for the benchmarks of this site, which generate the entry to measure "
          "how the build grows with the number of pages.",
    # The Spanish and Danish names are `proposed: true`: the page says that the site proposes them.
    "es": "El nombre se inventó para las mediciones de este sitio, que generan la entrada para medir "
          "cómo crece el tiempo de construcción con el número de páginas. Este sitio no ha encontrado "
          "una traducción asentada en textos publicados y propone la que usa.",
    "da": "Navnet er opfundet til målingerne af sitet, som genererer opslaget for at måle, hvordan "
          "tiden for at bygge vokser med antallet af sider. Dette site har ikke fundet et dansk navn i "
          "offentliggjorte tekster og foreslår det, siden bruger.",
}
SHORT = {
    "en": "A made-up attention variant, number {i}, generated to measure how the build of the site "
          "grows with its size.",
    "es": "Una variante de atención inventada, la número {i}, generada para medir cómo crece el "
          "tiempo de construcción del sitio con su tamaño.",
    "da": "En opdigtet attention-variant, nummer {i}, genereret for at måle, hvordan tiden for at "
          "bygge sitet vokser med dets størrelse.",
}
# The words of this prose that hunspell's dictionaries lack, added to the copy's word lists
# (termbase/data/words/<lang>.txt of the generated project only) when its check asks for them.
EXTRA_WORDS: dict[str, list[str]] = {"en": [], "es": [], "da": []}


def _prose(lang: str, i: int, names: list[str], sentences: int) -> str:
    parts = PROSE[lang]
    text = " ".join(parts[(i + k) % len(parts)] for k in range(sentences))
    return text.replace("{other}", names[0]).replace("{other2}", names[1])


# --------------------------------------------------------------------------- the generated project

def _entry_page(template: str, sections: dict, lang: str, i: int, others: list[str]) -> str:
    """An entry page from termbase/data/templates/entry.md, each TODO(termbase) line replaced by
    prose for the section it is in."""
    keys = {title: key for key, title in ((k, v[lang]) for k, v in sections.items())}
    text = template.replace("{{ ", "\0").replace(" }}", "\1")  # keep the entry markers, as `new` does
    text = text.format(**{k: v[lang] for k, v in sections.items()})
    text = text.replace("\0", "{{ ").replace("\1", " }}")
    name = term_names(i)[lang]
    section = None
    out = []
    for line in text.splitlines():
        if line.startswith("## "):
            section = keys.get(line[3:].strip())
        if PLACEHOLDER not in line:
            out.append(line)
            continue
        indent = re.match(r"^(\s*(?:\d+\.\s+|[-*]\s+)?)", line).group(1)
        stripped = line.strip()
        if stripped.startswith("*") and not stripped.startswith("**"):
            body = EXAMPLE[lang].format(name=name)
        elif "**" in stripped:
            body = f"**{name[:1].upper()}{name[1:]}.** " + _prose(lang, i, others, 3)
        elif section == "formula":
            body = FORMULA[lang]
        elif section == "code":
            body = CODE[lang]
        elif section == "origin":
            body = ORIGIN[lang]
        else:
            body = _prose(lang, i + 1, others, 2)
        out.append(indent + body)
    return "\n".join(out) + "\n"


def _record(templates: Path, ui: dict, i: int, related: list[str], module: str, language_names: dict) -> str:
    """A term record from record.yml and record-language.yml, as `termbase new` fills them, with
    every placeholder written."""
    block = (templates / "record-language.yml").read_text(encoding="utf-8")
    names = term_names(i)
    languages = "".join(block.format(lang=lang, term=names[lang], language=language_names[lang],
                                     extra=name_fields(lang)) for lang in LANGS)
    values = {"slug": SLUG.format(i=i), "module": module, "function": module,
              "title": names["en"].capitalize(), "categories": " | ".join(ui["categories"]),
              "levels": " | ".join(ui["levels"]), "languages": languages}
    record = yaml.safe_load((templates / "record.yml").read_text(encoding="utf-8").format(**values))
    record["category"] = list(ui["categories"])[i % len(ui["categories"])]
    record["level"] = list(ui["levels"])[i % len(ui["levels"])]
    record["related"] = related
    record["formula"] = [rf"\operatorname{{Attention}}_{{{i}}}(Q, K, V) = \operatorname{{softmax}}"
                         rf"\left(\frac{{Q K^\top}}{{\sqrt{{d_k}}}}\right) V"]
    record["code"] = [[f"snippets/{module}.py:code", f"snippets/{module}.py:demo"]]
    for lang in LANGS:
        local = record[lang]
        local["short"] = SHORT[lang].format(i=i)
        for about in (local.get("names") or {}).values():
            if lang in GENDER:
                about.update(gender=GENDER[lang], proposed=True)
        for key, value in list(local.items()):
            if isinstance(value, str) and PLACEHOLDER in value:
                local[key] = names[lang]
    text = yaml.safe_dump(record, allow_unicode=True, sort_keys=False, width=1000)
    if PLACEHOLDER in text:
        raise ValueError(f"the record template has a placeholder this generator does not fill: {text}")
    return text


def _snippet(templates: Path, module: str) -> tuple[str, str]:
    """A snippet module and its test from snippet.py and test_snippet.py, the placeholders written."""
    values = {"module": module, "function": module, "title": module.replace("_", " ").capitalize()}
    code = (templates / "snippet.py").read_text(encoding="utf-8").format(**values)
    code = re.sub(r"TODO\(termbase\):? one line on what this module shows\.?",
                  "shared code of the generated entries.", code)
    code = re.sub(r"TODO\(termbase\):? shapes in, shapes out\.?", "x: (B, d) -> (B, d), unchanged.", code)
    test = (templates / "test_snippet.py").read_text(encoding="utf-8").format(**values)
    test = re.sub(r'^(\s*)pytest\.fail\(".*TODO\(termbase\).*"\)\s*$',
                  rf"\1x = torch.randn(2, 3)\n\1torch.testing.assert_close({module}(x), torch.nn.Identity()(x))",
                  test, flags=re.M)
    test = test.replace("import pytest\n", "import pytest  # noqa: F401\nimport torch\n", 1)
    for text in (code, test):
        if PLACEHOLDER in text:
            raise ValueError(f"a snippet template has a placeholder this generator does not fill: {text}")
    return code, test


def scale_project(dest: Path, n: int, distinct_blocks: int = 4) -> dict:
    """The real site grown to `n` terms: a copy of the project plus n - (real terms) generated
    entries, each with its record and three pages, sharing `distinct_blocks` snippet modules (each
    with its test). Returns what the benchmarks need to know about it."""
    real_project(dest)
    data = dest / "termbase" / "data"
    templates = data / "templates"
    ui = yaml.safe_load((data / "ui.yml").read_text(encoding="utf-8"))
    language_names = {lang: str((ui.get("language_name") or {}).get(lang, lang)) for lang in LANGS}
    real = sorted(p.stem for p in (data / "terms").glob("*.yml"))
    count = max(0, n - len(real))
    modules = [MODULE.format(k=k) for k in range(min(distinct_blocks, count) or 0)]
    for module in modules:
        code, test = _snippet(templates, module)
        (dest / "snippets" / f"{module}.py").write_text(code, encoding="utf-8")
        (dest / "tests" / f"test_{module}.py").write_text(test, encoding="utf-8")
    entry_tpl = (templates / "entry.md").read_text(encoding="utf-8")
    slugs = []
    for i in range(count):
        others = [(i + 1) % count, (i + 2) % count]
        related = sorted({SLUG.format(i=j) for j in others} - {SLUG.format(i=i)})
        names = {lang: [term_names(j)[lang] for j in others] for lang in LANGS}
        slug = SLUG.format(i=i)
        (data / "terms" / f"{slug}.yml").write_text(
            _record(templates, ui, i, related, modules[i % len(modules)], language_names), encoding="utf-8")
        for lang in LANGS:
            (dest / "docs" / "glossary" / f"{slug}.{lang}.md").write_text(
                _entry_page(entry_tpl, ui["sections"], lang, i, names[lang]), encoding="utf-8")
        slugs.append(slug)
    _add_words(data)
    pages = sum(1 for _ in (dest / "docs").rglob("*.en.md"))
    return {"n": len(real) + count, "real_terms": len(real), "generated_terms": count, "slugs": slugs,
            "distinct_generated_blocks": len(modules), "pages_per_language": pages}


def _add_words(data: Path) -> None:
    for lang, words in EXTRA_WORDS.items():
        if words:
            path = data / "words" / f"{lang}.txt"
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(text.rstrip("\n") + "\n" + "\n".join(words) + "\n", encoding="utf-8")


def termbase_check(project: Path, generated: list[str] | None = None) -> dict:
    """`python -m termbase check` on a project: passes or not, and its problems split into those
    in generated files (this generator's fault) and the others (the real site's)."""
    result = subprocess.run([sys.executable, "-m", "termbase", "check"], cwd=project, capture_output=True,
                            text=True, env=build_env())
    # A clean check is kept for the next build (termbase/site/source_check.py), which would then
    # skip its own: the builds and serve start-ups measured after this must still run it.
    shutil.rmtree(project / ".termbase-cache" / source_check.NAMESPACE, ignore_errors=True)
    problems = [line for line in result.stdout.splitlines() if re.match(r"^[^\s:]+:\d+: ", line)]
    marks = tuple(generated or ()) + ("attention_variant_code_", "attention-variant-")
    ours = [p for p in problems if any(m in p.split(":", 1)[0] for m in marks)]
    return {"passes": result.returncode == 0, "problems": len(problems), "generated_count": len(ours),
            "generated_problems": ours[:40],  # the first 40 of each kind, as examples
            "real_site_problems": [p for p in problems if p not in ours][:40],
            "output_tail": (result.stdout + result.stderr)[-3000:] if result.returncode else ""}


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


def _src_for(url: str, docs: Path) -> str:
    """The language-neutral source path of a page URL (`glossary/x/` -> `glossary/x.md`)."""
    if not url:
        return "index.md"
    stem = url.rstrip("/")
    for candidate in (f"{stem}.md", f"{stem}/index.md"):
        if any(docs.glob(candidate.replace(".md", ".*.md"))):
            return candidate
    return f"{stem}/index.md"


def _nav(nav, ui: dict, lang: str, exists) -> list:
    """The project's nav, labels in `lang`, without the pages the plain build does not have."""
    out = []
    for item in nav or []:
        if isinstance(item, dict):
            (label, value), = item.items()
            label = label if lang == DEFAULT else ((ui.get("nav") or {}).get(label) or {}).get(lang, label)
            if isinstance(value, list):
                inner = _nav(value, ui, lang, exists)
                if inner:
                    out.append({label: inner})
            elif exists(value):
                out.append({label: value})
        elif isinstance(item, str) and exists(item):
            out.append(item)
    return out


def plain_projects(project: Path, site: Path, dest: Path) -> dict[str, Path]:
    """One plain project per language with the same pages as the built site: each page's Markdown
    twin that the termbase build publishes beside its HTML (`<page>/index.md`: the page's
    Markdown with every marker and snippet expanded: summary, formulas, the tested code, related
    terms, sources), under its language-neutral path; the project's theme, assets and Markdown
    extensions; its nav; no plugins. Built by plain MkDocs and by Zensical (which reads
    mkdocs.yml). What they do not do is the termbase's own work: the check, executing notebooks
    and blocks, MathML, tooltips, switcher, notebook pages."""
    config = yaml.load((project / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)
    ui = yaml.safe_load((project / "termbase" / "data" / "ui.yml").read_text(encoding="utf-8"))
    out = {}
    docs_src = project / "docs"
    for lang in LANGS:
        root = dest / lang
        shutil.rmtree(root, ignore_errors=True)
        docs = root / "docs"
        docs.mkdir(parents=True)
        built = site if lang == DEFAULT else site / lang
        for twin in built.rglob("index.md"):
            url = twin.parent.relative_to(built).as_posix()
            url = "" if url == "." else url + "/"
            if lang == DEFAULT and url.split("/", 1)[0] in LANGS:
                continue
            target = docs / _src_for(url, docs_src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(twin, target)
        for path in docs_src.rglob("*"):  # assets: CSS, figures, scripts (not pages, not notebooks)
            if path.is_file() and path.suffix not in (".md", ".py", ".ipynb"):
                target = docs / path.relative_to(docs_src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
        theme = dict(config.get("theme") or {})
        theme["language"] = lang
        theme.pop("custom_dir", None)  # the overrides read the termbase's config.extra
        extensions = [e for e in config.get("markdown_extensions") or []
                      if not (isinstance(e, dict) and "pymdownx.snippets" in e) and e != "pymdownx.snippets"]
        plain = {
            "site_name": ui["site_name"][lang],
            "site_url": f"http://127.0.0.1:8000/{'' if lang == 'en' else lang + '/'}",
            "docs_dir": "docs",
            "site_dir": "site",
            "theme": theme,
            "plugins": ["search"],
            "extra_css": [c for c in config.get("extra_css") or [] if (docs / c).is_file()],
            "extra_javascript": [c for c in config.get("extra_javascript") or [] if (docs / c).is_file()],
            "nav": _nav(config.get("nav"), ui, lang, lambda p: (docs / p).is_file()),
            "validation": config.get("validation") or {},
            "markdown_extensions": extensions,
        }
        (root / "mkdocs.yml").write_text(yaml.safe_dump(plain, allow_unicode=True, sort_keys=False), encoding="utf-8")
        out[lang] = root
    return out
