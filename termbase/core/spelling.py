"""Spelling with hunspell and Debian's dictionaries, plus a short project word list per
language (termbase/data/words/<lang>.txt) for the technical words the dictionaries lack.

The dictionary of a language is named in its style guide (`dictionary: da_DK`); a language
without one is not spell-checked. Words are found here (letters, with inner hyphens and
apostrophes), each distinct word is asked about once, and suggestions are asked only for the
few words that are reported, so checking the whole site takes about a second.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
PACKAGES = {"da_DK": "hunspell-da", "es_ES": "hunspell-es", "en_US": "hunspell-en-us"}


def available(dictionary: str) -> str | None:
    """None when hunspell and the dictionary are installed, else how to install them."""
    package = PACKAGES.get(dictionary, "hunspell-<lang>")
    if shutil.which("hunspell") is None:
        return f"hunspell is not installed - sudo apt-get install hunspell {package}"
    listing = subprocess.run(["hunspell", "-D"], capture_output=True, text=True, input="").stderr
    if not any(Path(line.strip()).name == dictionary for line in listing.splitlines()):
        return f"the hunspell dictionary {dictionary} is not installed - sudo apt-get install {package}"
    return None


def words(text: str) -> list[str]:
    """The words of a line of prose; symbols and acronyms (d_k, GQA, MHA) are not words."""
    return [w for w in WORD.findall(text) if not (w.isupper() and len(w) > 1)]


def _hunspell(dictionary: str, args: list[str], lines: list[str]) -> str:
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    return subprocess.run(["hunspell", "-d", dictionary, "-i", "utf-8", *args], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, env=env, check=True).stdout


@functools.lru_cache(maxsize=64)
def unknown(dictionary: str, candidates: frozenset[str]) -> frozenset[str]:
    """The words of `candidates` that the dictionary does not know."""
    if not candidates:
        return frozenset()
    found = set()
    for token in _hunspell(dictionary, ["-l"], sorted(candidates)).split():
        # hunspell may report a part of a hyphenated word ("token-id" of "token-ids"): the whole word
        found |= {token} if token in candidates else {w for w in candidates if token in w}
    return frozenset(found)


@functools.lru_cache(maxsize=256)
def suggestions(dictionary: str, word: str) -> tuple[str, ...]:
    for answer in _hunspell(dictionary, ["-a"], ["^" + word]).splitlines()[1:]:
        if answer.startswith("&"):
            return tuple(s.strip() for s in answer.partition(": ")[2].split(",") if s.strip())
    return ()


def word_list(path: Path) -> dict[str, int]:
    """word -> line of a project word list (comments after #, one word per line)."""
    if not path.is_file():
        return {}
    found = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if word:
            found[word] = number
    return found
