"""A formula that does not parse names the brace at fault by what comes before it on its line,
in the check's message and in the build's (core/mathml.py: problem, explain)."""

import pytest

from termbase.core import mathml


@pytest.mark.parametrize("tex, said", [
    (r"\frac{1}{\tau", "1 '{' never closed: the '{' after `\\frac{1}`"),
    (r"x_{i}} + y", "a '}' closes no '{': the '}' after `x_{i}`"),
    (r"}x", "a '}' closes no '{': the '}' at the start of the formula"),
    # The first brace left open is named: the second one opened inside it.
    ("a = {b\n + \\frac{1}{2", "2 '{' never closed: the '{' after `a =` on line 1 of the formula"),
    # On a later line of a display formula, what precedes it on that line, and the line.
    ("a = b\n\\sqrt{x} + y}", "a '}' closes no '{': the '}' after `\\sqrt{x} + y` on line 2 of the formula"),
    ("a = b\n}", "a '}' closes no '{': the '}' at the start of line 2 of the formula"),
    # After a LaTeX line break (two backslashes) a brace is a group again, not a character.
    (r"x \\}", "a '}' closes no '{': the '}' after `x \\\\`"),
    (r"\text{a very long word here}{ + 1", "1 '{' never closed: the '{' after `... long word here}`"),
    # Escaped braces are characters, not groups (an unbalanced one is not an error of braces);
    # a reason without a place stays as it was.
    (r"\left\{ a \right. + b^", "missing super script or subscript"),
    (r"\{ a + b^", "missing super script or subscript"),
])
def test_a_brace_at_fault_is_named_by_what_precedes_it(tex, said):
    assert mathml.problem(tex) == said


def test_the_build_says_what_the_check_says():
    from mkdocs.exceptions import PluginError

    from termbase.site.mathml import to_mathml

    page = '<p><span class="arithmatex">\\(x_{i}} + 1\\)</span></p>'
    with pytest.raises(PluginError) as raised:
        to_mathml(page, "glossary/softmax.md")
    assert str(raised.value) == ("glossary/softmax.md: formula 'x_{i}} + 1' does not parse: a '}' closes no '{': "
                                 "the '}' after `x_{i}` - fix the LaTeX")


def test_a_brace_after_a_line_break_opens_a_group():
    """`\\\\{}` is a line break and an empty group, which renders."""
    assert mathml.problem("\\begin{aligned} x &= 1 \\\\{}&= 2 \\end{aligned}") is None


def test_the_check_names_the_line_of_the_brace_and_the_build_the_same_line_of_the_formula():
    """A display formula on a page: the check reports the source line holding the brace at
    fault, and the build, which sees the formula with the line break after `$$`, names the same
    line of the formula as the check's message does."""
    from mkdocs.exceptions import PluginError

    from termbase.core import check
    from termbase.core.check.pages import PageText, _check_page
    from termbase.core.model import TermBase
    from termbase.site.mathml import to_mathml
    from tests.site.sitetools import PROJECT

    path = PROJECT.docs / "glossary" / "softmax.en.md"
    text = "# Softmax\n\nText.\n\n$$\na = b\n\\sqrt{x} + y}\n$$\n"
    report = check.Report(PROJECT)
    _check_page(TermBase(PROJECT), PageText(path, "glossary/softmax.md", "en", text), {"glossary/softmax.md"}, report)
    said = [str(p) for p in report if "does not parse" in str(p)]
    assert said == ["docs/glossary/softmax.en.md:7: a formula does not parse: a '}' closes no '{': the '}' after "
                    "`\\sqrt{x} + y` on line 2 of the formula - fix the LaTeX"], said
    with pytest.raises(PluginError) as raised:
        to_mathml('<div class="arithmatex">\\[\na = b\n\\sqrt{x} + y}\n\\]</div>', "glossary/softmax.md")
    assert "the '}' after `\\sqrt{x} + y` on line 2 of the formula" in str(raised.value)
