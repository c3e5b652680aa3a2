"""Code to take away: beside each Python block's copy button, a link that downloads the block as
a `.py` file holding exactly the text the copy button copies (the block's <code> text), written
next to the page. Named after the block the snippet module declares: `<module>-<block>.py`."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

from termbase.core import blocks, sections
from termbase.core.project import Project
from termbase.site.code_blocks import python_blocks

BLOCK = re.compile(r'(<div class="language-python highlight"><pre>.*?</pre>)(?=</div>)', re.S)


def names(project: Project) -> dict[str, str]:
    """The composed text of every declared block -> its file name."""
    return {sections.compose(project.root, refs).strip(): f"{d.module.replace('_', '-')}-{d.name.replace('_', '-')}.py"
            for refs, d in blocks.declared(project).items()}


def add_links(page_html: str, known: dict[str, str], label: str) -> tuple[str, dict[str, str]]:
    """The page with a download link in each Python block, and {file name: code} to write."""
    codes = python_blocks(page_html)
    files: dict[str, str] = {}
    found = iter(codes)

    def one(match: re.Match) -> str:
        code = next(found)
        name = known.get(code.strip()) or f"block-{len(files) + 1}.py"
        files[name] = code
        link = (f'<a class="termbase-download" href="{name}" download="{name}" '
                f'title="{html_lib.escape(label)}: {name}">{html_lib.escape(label)}</a>')
        return match.group(1) + link

    return BLOCK.sub(one, page_html), files


def write(site_dir: str, page_url: str, files: dict[str, str]) -> None:
    folder = Path(site_dir) / page_url
    for name, code in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code, encoding="utf-8")
