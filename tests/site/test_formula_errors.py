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
