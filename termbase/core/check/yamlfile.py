"""Reading a YAML source for the checks: its data, and the line of every key and list item."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

# The C parser where PyYAML has it: the checks read every record several times per run.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Ignore:
    """A report that drops problems: for a rule that reads a file whose own problems another
    rule reports."""

    def add(self, *args):
        pass


def line_map(node, prefix=()) -> dict[tuple, int]:
    """Line (1-based) of every key path and list index in a YAML document."""
    lines = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (key.value,)
            lines[path] = key.start_mark.line + 1
            lines.update(line_map(value, path))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            path = prefix + (index,)
            lines[path] = item.start_mark.line + 1
            lines.update(line_map(item, path))
    return lines


def load(path: Path, report):
    """(data, lines) of a YAML file, or (None, {}) after reporting why it cannot be read.
    Parsed once per version of the file: several rules read the same records."""
    stat = path.stat()
    data, lines, problem = _parsed(str(path), stat.st_mtime_ns, stat.st_size)
    if problem:
        report.add(path, *problem)
    return data, lines


@functools.lru_cache(maxsize=1024)
def _parsed(path: str, mtime_ns: int, size: int):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, {}, (1, f"not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
    try:
        node = yaml.compose(text, Loader=_Loader)
        return yaml.load(text, Loader=_Loader), line_map(node), _duplicate(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return None, {}, (mark.line + 1 if mark else 1, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                          "fix the YAML syntax (indentation, quotes, colons)")


def _duplicate(node):
    """The first key written twice in one mapping, as a problem: YAML keeps the last silently,
    so two sources merged under one id would lose one without a word."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            if key.value in seen:
                return (key.start_mark.line + 1, f"key '{key.value}' is written twice (also line {seen[key.value]})",
                        "keep one, or give the other its own name")
            seen[key.value] = key.start_mark.line + 1
            found = _duplicate(value)
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found = _duplicate(item)
            if found:
                return found
    return None


def walk(value, prefix=()):
    """(key path, string) of every string in a YAML document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, prefix + (index,))
    elif isinstance(value, str):
        yield prefix, value


def line_of(lines: dict, path: tuple) -> int:
    """The line of `path`, or of the nearest enclosing key that has one."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return 1
