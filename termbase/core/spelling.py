"""Spelling with hunspell and Debian's dictionaries, plus a short project word list per
language (termbase/data/words/<lang>.txt) for the technical words the dictionaries lack.

The dictionary of a language is named in its style guide (`dictionary: da_DK`); a language
without one is not spell-checked. Words are found here (letters, with inner hyphens and
apostrophes), each distinct word is asked about once, and suggestions are asked only for the
few words that are reported, so checking the whole site takes about a second.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*\.?")  # with its period: "dvs." is a word
IDENTIFIER = re.compile(r"\w*_\w*")
FORMULA_ORDINAL = re.compile(r"(?<=\s)-(?:th|st|nd|rd)\b")
NUMBER_ORDINAL = re.compile(r"\b(\d+)(?:th|st|nd|rd)\b")
POSSESSIVE = re.compile(r"['’]s(?=\.?$)")
PACKAGES = {"da_DK": "hunspell-da", "es_ES": "hunspell-es", "en_US": "hunspell-en-us"}


def available(dictionary: str) -> str | None:
    """None when hunspell and the dictionary are installed, else how to install them."""
    package = PACKAGES.get(dictionary, "hunspell-<lang>")
    if shutil.which("hunspell") is None:
        return f"hunspell is not installed - sudo apt-get install hunspell {package}"
    if not _dictionary_files(dictionary):
        return f"the hunspell dictionary {dictionary} is not installed - sudo apt-get install {package}"
    return None


@functools.lru_cache(maxsize=None)
def _dictionary_files(dictionary: str) -> tuple[Path, ...]:
    """The .dic and .aff files hunspell uses for `dictionary` (the first it lists), or (); asked
    once per process (a dictionary installed while `mkdocs serve` runs needs a restart)."""
    listing = subprocess.run(["hunspell", "-D"], capture_output=True, text=True, input="").stderr
    for line in listing.splitlines():
        if Path(line.strip()).name == dictionary:
            return tuple(Path(line.strip() + ext) for ext in (".dic", ".aff"))
    return ()


@functools.lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """The words of a line of prose (a hyphenated compound is one word); symbols (Q, d_k) and
    acronyms (GQA, MHA, README's) are not words. Kept per line in the process: a rebuild under
    `mkdocs serve`, or a check of a copy, reads mostly the same lines again."""
    text = IDENTIFIER.sub(" ", text)  # identifiers: d_model, need_weights
    text = FORMULA_ORDINAL.sub(" ", text)  # the ordinal of a formula: "$i$-th"
    text = NUMBER_ORDINAL.sub(r"\1", text)  # and of a number: "513th"
    found = []
    for token in WORD.findall(text):
        token = POSSESSIVE.sub("", token)  # a possessive: "Longformer's" is "Longformer"
        bare = token.rstrip(".")
        if len(bare) > 1 and not bare.isupper():
            found.append(token)
    return tuple(found)


def parts(word: str) -> list[str]:
    """The parts of a hyphenated compound that are words (not acronyms: GQA-8, MHA-style)."""
    return [p for p in word.rstrip(".").split("-") if len(p) > 1 and not p.isupper()] if "-" in word else []


def _hunspell(dictionary: str, args: list[str], lines: list[str], personal: tuple[str, ...] = ()) -> str:
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    with tempfile.NamedTemporaryFile("w", suffix=".dic", encoding="utf-8") as extra:
        # The project's words as hunspell's personal dictionary: a hyphenated compound of known
        # parts ("padding-masken") is then accepted as hunspell accepts Danish compounds.
        extra.write("\n".join(personal) + "\n")
        extra.flush()
        return subprocess.run(["hunspell", "-d", dictionary, "-i", "utf-8", "-p", extra.name, *args],
                              input="\n".join(lines) + "\n", capture_output=True, text=True, env=env,
                              check=True).stdout


# (dictionary, personal words) -> word -> unknown?: a process asks hunspell about a word once,
# so a rebuild under `mkdocs serve` asks only about the words an edit brought.
_answers: dict[tuple[str, tuple[str, ...]], dict[str, bool]] = {}
KEEP_DAYS = 7  # an answers file no run has read for this long goes (an old word list's)


def unknown(dictionary: str, candidates: frozenset[str], personal: tuple[str, ...] = (),
            folder: Path | None = None) -> frozenset[str]:
    """The words of `candidates` that the dictionary (with the `personal` words) does not know.
    `folder`: where the answers are also kept between processes (the project's cache), so that
    `termbase check`, a build and a checked copy of the project ask only about new words: about
    1.5 s of a 6 s check. A file per dictionary, its files' size and time, and personal words."""
    answers = _answers.get((dictionary, personal))
    stored = _stored(dictionary, personal, folder) if folder is not None else None
    if answers is None:
        answers = _answers[(dictionary, personal)] = _read(stored) if stored else {}
    new = sorted(set(candidates) - answers.keys())
    if new:
        asked = set(new)
        found = set()
        for token in _hunspell(dictionary, ["-l"], new, personal).split():
            # hunspell may report a part of a word ("token-id" of "token-id'erne"): the whole word
            found |= {token} if token in asked else {w for w in new if _part_of(token, w)}
        fresh = {word: word in found for word in new}
        answers.update(fresh)
        if stored:
            _write(stored, fresh)
    return frozenset(word for word in candidates if answers[word])


def _stored(dictionary: str, personal: tuple[str, ...], folder: Path) -> Path | None:
    files = _dictionary_files(dictionary)
    if not files:
        return None
    key = hashlib.sha256()
    for path in (Path(shutil.which("hunspell") or "hunspell"), *files):
        try:
            stat = path.stat()
            key.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\0".encode("utf-8"))
        except OSError:
            key.update(f"{path}: missing\0".encode("utf-8"))
    key.update("\n".join(personal).encode("utf-8"))
    return Path(folder) / f"{dictionary}-{key.hexdigest()[:24]}.json"


def _read(path: Path) -> dict[str, bool]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        os.utime(path)
    except (OSError, ValueError):  # none yet, or half a file from a crash: ask hunspell
        return {}
    return {w: a for w, a in found.items() if isinstance(a, bool)} if isinstance(found, dict) else {}


def _write(path: Path, fresh: dict[str, bool]) -> None:
    """The file's answers and `fresh`, written atomically (another process may have added some
    meanwhile; if two write at once, one's new words are asked again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        merged = {**_read(path), **fresh}
        # "." first: a copy of the project skips it (tests/site/sitetools.py: _ignored)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".", suffix=".tmp", delete=False,
                                         encoding="utf-8") as out:
            json.dump(merged, out, ensure_ascii=False, sort_keys=True)
        os.replace(out.name, path)
        old = time.time() - KEEP_DAYS * 86400
        for other in path.parent.glob("*.json"):
            if other != path and other.stat().st_mtime < old:
                other.unlink()
    except OSError:  # a full disk or a read-only tree: only speed is lost
        pass


def _part_of(token: str, word: str) -> bool:
    """`token` is in `word` between non-letters (or the word's ends)."""
    return bool(re.search(rf"(?<![^\W\d_]){re.escape(token)}(?![^\W\d_])", word))


@functools.lru_cache(maxsize=64)
def suggestions(dictionary: str, words: tuple[str, ...], personal: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """word -> hunspell's suggestions, for a few reported words, in one call (none: no call)."""
    found: dict[str, tuple[str, ...]] = {}
    if not words:
        return found
    for answer in _hunspell(dictionary, ["-a"], ["^" + w for w in words], personal).splitlines()[1:]:
        if answer.startswith("&"):
            head, _, rest = answer.partition(": ")
            found[head.split()[1]] = tuple(s.strip() for s in rest.split(",") if s.strip())
    return found


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
