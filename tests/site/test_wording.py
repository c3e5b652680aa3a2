"""The paragraph rules of termbase/core/check/wording.py leave correct text alone: each case
below is right as written and must not be flagged (a rule that flags correct text teaches
contributors to ignore the checker). The bad inputs are in test_contributions.py (BROKEN)."""

import pytest

from termbase.core.check import wording
from termbase.core.model import TermBase
from tests.site.sitetools import PROJECT

BASE = TermBase(PROJECT)


class Report:
    def __init__(self):
        self.problems = []

    def add(self, path, line, what, fix):
        self.problems.append((line, what, fix))


class Line:
    def __init__(self, line, text):
        self.path, self.line, self.text, self.markdown, self.plain = "page.md", line, text, text, text


def run(checks, *texts):
    """What the paragraph checks report for the texts, each text a line (numbered from 1)."""
    report = Report()
    paragraphs = wording.paragraphs([Line(number, text) for number, text in enumerate(texts, 1)])
    for check in checks:
        for paragraph in paragraphs:
            check(paragraph, report)
    return report.problems


def problems(lang, *texts):
    style = BASE.style(lang)
    return run((wording.unit_spacing(style), wording.count_forms(style), wording.article_agreement(style)), *texts)


CORRECT = [
    ("es", "Ocupa 320\u00a0KiB por token y 2,5\u00a0MiB por capa, un 5\u00a0% más."),
    ("es", "Solo entrena modelos cuyo número de cabezas es una potencia de 2 y toma una de cada dos pendientes."),
    ("es", "Llama 2 70B tiene dos tipos de capa y GQA-8 usa ocho grupos."),
    ("es", "Con ocho cabezas de ancho 64, son ocho pesos de 8 × 64 apilados."),
    ("es", "Empaqueta documentos de 3, 2 y 4 tokens de tres maneras."),
    ("es", "El kernel fusionado y un token de relleno; la caché, una capa."),
    ("da", "Cachen fylder 320\u00a0KiB pr. token, 5\u00a0% mere."),
    ("da", "Indeksene 1 og 2 nummererer hovedets to kort."),
    ("da", "Det første token er en attention sink, og et token mere er ikke nok."),
    ("da", "Et attention sink-token tager vægten."),
    ("es", "También se lee «la softmax», en femenino, por «la función»."),
]


@pytest.mark.parametrize("lang, text", CORRECT)
def test_correct_text_is_not_flagged(lang, text):
    assert problems(lang, text) == []


def test_a_sentence_over_two_lines_is_one_sentence():
    found = problems("es", "Hay 8 cabezas de clave y valor, y", "ocho cabezas de consulta por grupo.")
    assert [line for line, *_ in found] == [1]


def test_a_count_in_another_sentence_is_another_count():
    assert problems("es", "Hay 8 cabezas de clave. Cada grupo tiene ocho cabezas de consulta.") == []


@pytest.mark.parametrize("phrase, text, found", [
    ("giv|give … til `", "Giv derefter masken til `sdpa`", True),
    ("giv|give … til `", "Softmax giver vægt til bestemte nøgler", False),  # "giver" is not listed
    ("give … til `", "give den til SDPA", False),  # the code must follow
    ("give … til `", "give den. Send den til `sdpa`", False),  # the gap stays in the sentence
])
def test_gapped_forms(phrase, text, found):
    assert bool(wording.gapped(phrase).search(text)) is found
    assert wording.shown(phrase).endswith("til")


def test_an_article_in_a_quoted_example_sentence_is_checked():
    found = problems("da", '*Eksempel: "Det første token er et attention sink i hvert lag."*')
    assert [what for _, what, _ in found] == ['"et attention sink": the style guide gives "attention sink" another gender']


def _plain(*numbered):
    from pathlib import Path

    from termbase.core import prose
    from termbase.core.check import language

    lines = [language.Line(Path("page.md"), number, prose.prose(text, quotes=True), text) for number, text in numbered]
    return [item.plain for item in language._with_plain(lines)]


def test_an_italic_span_wrapped_onto_the_next_line_is_italic_to_the_checks():
    """Markdown reads `*natively\\ntrainable*` as one italic span: the spelling and the avoided
    forms, which skip italics (a kept English term), skip both halves."""
    plain = _plain((16, "   Es el sentido amplio (atención *natively"), (17, "   trainable*, entrenada así)."))
    assert "natively" not in plain[0] and "trainable" not in plain[1]
    assert "sentido amplio" in plain[0] and "entrenada así" in plain[1]


@pytest.mark.parametrize("numbered", [
    [(3, "una *lista"), (5, "de dos* líneas")],  # not next to each other: a fence or a blank line between
    [(3, "**negrita partida"), (4, "en dos líneas**")],  # bold is prose
    [(3, "* un punto de lista"), (4, "y otro* aquí")],  # a bullet opens no italic
    [(3, "- usa *natively"), (4, "- trainable* aquí")],  # two list items
    [(3, "| a *natively |"), (4, "| trainable* | b |")],  # two table rows
    [(3, "## Título *natively"), (4, "trainable* aquí")],  # a heading, then a paragraph
])
def test_what_is_not_one_italic_span_stays_prose(numbered):
    plain = _plain(*numbered)
    assert [p.strip() for p in plain] == [t.strip() for _, t in numbered]


def test_a_value_with_line_breaks_comes_back_whole():
    """A YAML value is one line to the checks even when it holds line breaks."""
    plain = _plain((5, "Primera línea.\nSegunda línea con una *palabra*."))
    assert plain[0].startswith("Primera línea.\nSegunda línea con una") and "palabra" not in plain[0]


def claims(lang, proposed, *texts):
    found = run([wording.usage_claims(BASE.style(lang), proposed)], *texts)
    return [(line, what) for line, what, _ in found]


@pytest.mark.parametrize("lang, texts, found", [
    ("da", ["Danske fagfolk bruger det engelske navn."], [(1, '"Danske fagfolk"')]),
    ("da", ["Navnet er kort. På dansk", "bruger man det engelske navn."], [(1, '"På dansk bruger"')]),
    ("da", ["Dette site har ikke fundet et dansk navn i offentliggjorte tekster og foreslår det engelske."], []),
    ("es", ["En español, «atención multicabeza» es la traducción habitual."], [(1, '"es la traducción habitual"')]),
    ("es", ["Este sitio no ha encontrado una traducción asentada y propone «atención en árbol»."], []),
    ("es", ["En español conviven «atención multicabeza» y «atención de múltiples cabezas»."],
     [(1, '"En español conviven"')]),
    ("es", ["Este glosario propone «escalado de RoPE»; a menudo se usa el nombre inglés."],
     [(1, '"a menudo se usa el nombre inglés"')]),
    ("da", ['"Kausal maske med præfiks" er den beskrivende danske form.'], [(1, '"den beskrivende danske form"')]),
    ("es", ["El término inglés se lee a menudo tal cual en la documentación."], [(1, '"se lee a menudo"')]),
])
def test_a_usage_claim_is_flagged_on_a_proposed_page(lang, texts, found):
    assert [(line, what.split(" claims")[0]) for line, what in claims(lang, {"page.md"}, *texts)] == found


def test_a_usage_claim_stands_where_the_name_is_attested():
    """On a page whose name is attested (not in `proposed`), the same sentence is left alone."""
    assert claims("da", {"other.md"}, "Danske fagfolk bruger det engelske navn.") == []


def test_the_proposed_pages_follow_the_records():
    from termbase.core.check.language import _proposed_pages

    docs = PROJECT.docs / "glossary"
    da = _proposed_pages(BASE, "da")
    assert docs / "attention-sink.da.md" in da  # proposed: true in its record
    assert docs / "softmax.da.md" not in da  # attested in termbase/data/attestations/da.yml
    assert all(path.name.endswith(".da.md") for path in da)


def unsaid(lang, proposed, *texts, lines=None):
    report = Report()
    paragraphs = wording.paragraphs([Line(number, text) for number, text in enumerate(texts, 1)])
    wording.proposal_unsaid(BASE.style(lang), proposed)(paragraphs, report, lines)
    return [(line, what.split(",")[0]) for line, what, _ in report.problems]


@pytest.mark.parametrize("lang, texts, flagged", [
    ("es", ["## Origen", "", "Bahdanau et al. (2014) lo llamaron así."], True),
    ("es", ["Este sitio no ha encontrado una traducción asentada en textos publicados y propone", "«atención en árbol»."],
     False),
    ("es", ["Este glosario, escrito en español de España, propone «regla delta»."], False),
    ("da", ["Navnet er kort.", "", "Det engelske navn bruges."], True),
    ("da", ["Dette site har ikke fundet et dansk navn i offentliggjorte tekster", "og skriver det engelske."], False),
    ("da", ["Dette site foreslår \"attention-hoved\"."], False),
    # Each part of the sentence in its own paragraph, or in its own sentence, says nothing.
    ("da", ["Dette site.", "", "Det foreslår intet."], True),
    ("es", ["¿Qué usa este sitio? Nadie propone nada."], True),
    # A negation says the opposite.
    ("es", ["Este sitio no propone ningún nombre."], True),
    ("da", ["Dette site foreslår ikke noget dansk navn."], True),
    # The status words and the Spanish order with the verb first say it too.
    ("es", ["Es la forma que propone este sitio."], False),
    ("es", ["El nombre, propuesto por este sitio, sigue al inglés."], False),
    ("da", ["Navnet er foreslået af dette site."], False),
])
def test_a_proposed_page_says_the_site_proposes_the_name(lang, texts, flagged):
    assert unsaid(lang, {"page.md"}, *texts) == ([(1, "the term base marks this entry's preferred name proposed "
                                                       "(no attestation)")] if flagged else [])


def test_the_page_is_reported_at_the_line_given_for_it():
    """The check gives each page the line of its Origin heading (wording.line_of)."""
    assert unsaid("es", {"page.md"}, "Bahdanau lo llamó así.", lines={"page.md": 7})[0][0] == 7
    assert wording.line_of("{{ summary }}\n\n## Origen\n\nTexto.\n", "## Origen") == 3
    assert wording.line_of("Sin encabezado.\n", "## Origen") == 1


def test_a_page_whose_name_is_attested_need_not_say_it():
    assert unsaid("es", {"other.md"}, "Bahdanau et al. (2014) lo llamaron así.") == []
