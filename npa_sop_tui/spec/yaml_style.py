"""Dumping YAML the way a file is already written: ruamel.yaml in round-trip mode (quotes
kept, no folding), at the indentation style (mapping, sequence, dash offset) whose dump
matches most of the file's own lines."""

from __future__ import annotations

import io
from typing import Any


def round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never fold a long line the user wrote on one
    return y


INDENT_STYLES = tuple(
    (mapping, offset + step, offset)
    for mapping in (2, 4)
    for offset in (0, 2, 4)
    for step in (2, 4)
)
"""(mapping, sequence, dash offset) settings tried when matching a file's own indentation;
the first, (2, 2, 0), is ruamel's default and the style of a new file."""


def dump_in_style(data: Any, style: tuple[int, int, int], explicit_start: bool) -> str:
    y = round_trip_yaml()
    y.indent(mapping=style[0], sequence=style[1], offset=style[2])
    y.explicit_start = explicit_start
    out = io.StringIO()
    y.dump(data, out)
    return out.getvalue()


def closest_style(original: str, loaded: Any) -> tuple[int, int, int]:
    """The indentation style whose dump of the file matches the most of its lines."""
    lines = set(original.splitlines())
    explicit = original.lstrip().startswith("---")
    best, score = INDENT_STYLES[0], -1
    for style in INDENT_STYLES:
        dumped = dump_in_style(loaded, style, explicit).splitlines()
        same = sum(1 for line in dumped if line in lines)
        if same > score:
            best, score = style, same
    return best
