"""Code spans as Python-Markdown 3.11 finds them in a paragraph's text: the part of the one
grammar (termbase/core/markdown.py) that decides which `{{ ... }}` are code, not markers."""

from __future__ import annotations

import re

_TICK = re.compile(r"(?:(?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)`)")  # Python-Markdown's BACKTICK_RE


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each code span, found as Python-Markdown 3.11's backtick processor finds
    them (it runs first on a paragraph's text): an opening run of n backticks closes at the next
    run of exactly n; failing that, a shorter run closes it and the extra opening ticks are text;
    failing both, the opening run is text and the search goes on from past it. Past it means
    2 n ticks on, as Python-Markdown counts, which can land inside a longer run: so
    '``` ````' + 'x' + '````' holds no code span, where CommonMark would see one."""
    spans: list[tuple[int, int]] = []
    position, last = 0, len(text)
    while (match := _TICK.search(text, position)) is not None:
        # Pairs of backslashes before ticks are escaped backslashes, and the ticks after them
        # then open as if nothing stood before them.
        begin = start = match.end() if match.group(1) else match.start()
        ticks = 0
        while start < last and text[start] == "`":
            ticks, start = ticks + 1, start + 1
        longest, end, index, closing = 0, 0, start, None
        while index < last:
            run = 0
            while index < last and text[index] == "`":
                run, index = run + 1, index + 1
            if not run:
                index += 1
                continue
            if run == ticks:
                closing = (start, index - run)
                break
            if run > longest:
                longest, end = run, index
        if closing is None and 0 < longest < ticks:
            closing = (start - (ticks - longest), end - longest)
        if closing is None:
            position = start + ticks
            continue
        inner, stop = closing
        spans.append((begin, stop + (inner - begin)))
        position = stop + (inner - begin)
    return spans


def blank_code(line: str) -> str:
    """The line (or a paragraph's lines) with each code span replaced by spaces: columns and line
    breaks stay."""
    chars = list(line)
    for start, end in code_spans(line):
        for index in range(start, end):
            if chars[index] != "\n":
                chars[index] = " "
    return "".join(chars)
