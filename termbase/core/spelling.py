"""Spelling with hunspell and Debian's dictionaries, plus a short project word list per
language (termbase/data/words/<lang>.txt) for the technical words the dictionaries lack.

The dictionary of a language is named in its style guide (`dictionary: da_DK`); a language
without one is not spell-checked.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Miss:
    index: int  # which of the lines given
    word: str
    suggestions: tuple[str, ...]


def available(dictionary: str) -> str | None:
    """None when hunspell and the dictionary are installed, else how to install them."""
    package = {"da_DK": "hunspell-da", "es_ES": "hunspell-es", "en_US": "hunspell-en-us"}.get(dictionary, "hunspell-<lang>")
    if shutil.which("hunspell") is None:
        return f"hunspell is not installed - sudo apt-get install hunspell {package}"
    listing = subprocess.run(["hunspell", "-D"], capture_output=True, text=True, input="").stderr
    if not any(Path(line.strip()).name == dictionary for line in listing.splitlines()):
        return f"the hunspell dictionary {dictionary} is not installed - sudo apt-get install {package}"
    return None


def misses(dictionary: str, lines: tuple[str, ...]) -> list[Miss]:
    """Every word hunspell does not know in `lines`, with its suggestions."""
    return list(_misses(dictionary, lines))


@functools.lru_cache(maxsize=64)
def _misses(dictionary: str, lines: tuple[str, ...]) -> tuple[Miss, ...]:
    # Pipe mode: "^" makes hunspell read each line as text; one blank line ends each line's answers.
    text = "".join("^" + line.replace("\n", " ") + "\n" for line in lines)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    result = subprocess.run(["hunspell", "-d", dictionary, "-a", "-i", "utf-8"], input=text,
                            capture_output=True, text=True, env=env, check=True)
    found = []
    index = 0
    for answer in result.stdout.splitlines()[1:]:  # the first line is hunspell's banner
        if not answer:
            index += 1
            continue
        if answer[0] == "&":
            head, _, rest = answer.partition(": ")
            found.append(Miss(index, head.split()[1], tuple(s.strip() for s in rest.split(",") if s.strip())))
        elif answer[0] == "#":
            found.append(Miss(index, answer.split()[1], ()))
    return tuple(found)


def word_list(path: Path) -> dict[str, int]:
    """word -> line of a project word list (comments after #, one word per line)."""
    if not path.is_file():
        return {}
    words = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if word:
            words[word] = number
    return words
