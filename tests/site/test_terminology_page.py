"""Each name's status on the entry pages and the terminology page (issue 29), rendered from the
term records and termbase/data/attestations/<lang>.yml without a build."""

from termbase.core import terminology
from termbase.core.model import TermBase
from termbase.site.pages import Pages
from tests.site.sitetools import PROJECT


def pages(lang, attestations=None):
    base = TermBase(PROJECT)
    if attestations is not None:
        base.attestations = lambda of: attestations.get(of, {})
    return Pages(base, lang, None, "/" if lang == "en" else f"/{lang}/")


def test_the_summary_box_gives_every_status_in_the_page_language():
    box = pages("es", {}).summary("multi-head-attention", "glossary/multi-head-attention.md")
    # The status words agree with a feminine name (ui.yml `agreement`), in its own language only.
    assert ("**Estatus:** *atención multicabeza*: [preferente, propuesta por este sitio]"
            "(../terminology.md#multi-head-attention)") in box
    assert "MHA (admitida)" in box and "~~atención multicabezal~~ (desaconsejada)" in box
    softmax = pages("es", {}).summary("softmax", "glossary/softmax.md")
    assert "exponencial normalizada (admitida)" in softmax and "función softmax (admitida)" in softmax
    # ... and with the number of a plural name (`number: plural`)
    weights = pages("es").summary("attention-weights", "glossary/attention-weights.md")
    assert "*pesos de atención*: [preferentes, documentados]" in weights
    assert "probabilidades de atención (admitidas)" in weights and "matriz de atención (admitida)" in weights
    qkv = pages("es", {}).summary("query-key-value", "glossary/query-key-value.md")
    assert "*consulta, clave y valor*: [preferentes, propuestos por este sitio]" in qkv
    assert ('Dansk: *multi-head attention*{ lang="da" } (<a href="/da/terminology/#multi-head-attention" '
            'hreflang="da">preferente, propuesto por este sitio</a>)') in box


def test_an_attested_term_says_so_and_the_terminology_page_quotes_it():
    quote = {"quote": "La caché KV guarda las claves.", "source": "Autor, Título", "url": "https://example.org/",
             "read": "2026-12-03"}
    page = pages("da", {"es": {"caché KV": [quote]}})
    box = page.summary("kv-cache", "glossary/kv-cache.md")
    assert "Español: *caché KV*" in box and "foretrukken, belagt</a>)" in box
    table = pages("es", {"es": {"caché KV": [quote]}}).terminology_table(None, "terminology.md")
    row = next(line for line in table.splitlines() if "**caché KV**" in line)
    assert "preferente, documentada" in row and "«La caché KV guarda las claves.»" in row
    assert '<a href="https://example.org/">Autor, Título</a>; consultado el 2026-12-03' in row


def test_the_terminology_page_lists_every_name_once():
    base = TermBase(PROJECT)
    table = pages("da").terminology_table(None, "terminology.md")
    expected = sum(len(terminology.names_of(record["da"])) for record in base.terms.values())
    assert len(table.strip().splitlines()) == expected + 2
    row = next(line for line in table.splitlines() if "**attention-hoved**" in line)
    # Danish inflects the status words too: neuter 'foretrukket', plural 'foretrukne' (ui.yml `agreement`)
    assert "| foretrukket, foreslået af dette site | fuld form | intetkøn |" in row
    row = next(line for line in table.splitlines() if "**attention-vægte**" in line)
    assert "| foretrukne, foreslåede af dette site |" in row


def test_an_agreement_form_that_would_never_be_used_is_named():
    from termbase.core import check
    from termbase.core.check import records

    base = TermBase(PROJECT)
    report = check.Report(PROJECT)
    records._agreement(base, report, {}, {
        "es": {"feminine": {"admitido": "admitida", "admitidos": "admitidas"}, "neuter": {},
               "feminine plural": {"preferente": "preferentes"}},
        "en": {"feminine": {}},
    })
    found = [str(problem) for problem in report]
    assert len(found) == 3, found
    assert any("'agreement.es.feminine.admitidos' does not give a form" in p for p in found)
    assert any("'agreement.es.neuter' is not a gender of es" in p for p in found)
    assert any("'agreement.en' is not a language with genders" in p for p in found)
    assert all(p.startswith("termbase/data/ui.yml:") for p in found)


def test_a_number_other_than_plural_is_named(tmp_path):
    import dataclasses
    import shutil

    from termbase.core import check
    from termbase.core.check import records

    data = tmp_path / "data"
    shutil.copytree(PROJECT.data_dir, data)
    path = data / "terms" / "attention-weights.yml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        '"pesos de atención": {status: preferred, type: fullForm, gender: masculine, number: plural}',
        '"pesos de atención": {status: preferred, type: fullForm, gender: masculine, number: dual}'), encoding="utf-8")
    report = check.Report(PROJECT)
    records.check_records(TermBase(dataclasses.replace(PROJECT, data_dir=data)), report)
    assert [p.what for p in report] == ["'pesos de atención' (es) has number 'dual'"], [str(p) for p in report]
