"""The Python code of a built page exactly as its copy button copies it: the text of every
<code> inside a `language-python` block. The build's tests, `python -m termbase test` and the
download links read code blocks with this one parser."""

from __future__ import annotations

from html.parser import HTMLParser


class _CodeBlocks(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self._depth = 0  # >0 while inside a python highlight div
        self._in_code = False
        self._buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and "language-python" in classes:
            self._depth = 1
        elif tag == "div" and self._depth:
            self._depth += 1
        elif tag == "code" and self._depth:
            self._in_code, self._buf = True, []

    def handle_endtag(self, tag):
        if tag == "code" and self._in_code:
            self.blocks.append("".join(self._buf))
            self._in_code = False
        elif tag == "div" and self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._in_code:
            self._buf.append(data)


def python_blocks(page_html: str) -> list[str]:
    parser = _CodeBlocks()
    parser.feed(page_html)
    return parser.blocks
