"""Reading a YAML source for the checks: its data, and the line of every key and list item."""

from __future__ import annotations

from pathlib import Path

import yaml


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
    """(data, lines) of a YAML file, or (None, {}) after reporting why it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        report.add(path, 1, f"not UTF-8 ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
        return None, {}
    try:
        return yaml.safe_load(text), line_map(yaml.compose(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        report.add(path, mark.line + 1 if mark else 1, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                   "fix the YAML syntax (indentation, quotes, colons)")
        return None, {}


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
