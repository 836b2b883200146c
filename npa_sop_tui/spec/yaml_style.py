"""Dumping YAML the way a file is already written: ruamel.yaml in round-trip mode (quotes
kept, no folding), at the indentation style (mapping, sequence, dash offset) whose dump
matches most of the file's own lines."""

from __future__ import annotations

import io
import sys
from typing import Any


def round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML()  # round-trip mode, ruamel's default: comments, order and quotes survive
    y.preserve_quotes = True
    y.width = sys.maxsize  # never fold a long line the user wrote on one
    return y


INDENT_STYLES = tuple(
    (mapping, offset + step, offset)
    for mapping in (2, 4)
    for offset in (0, 2, 4)
    for step in (2, 4)
)
"""(mapping, sequence, dash offset) settings tried when matching a file's own indentation;
the first, (2, 2, 0), is ruamel's default and the style of a new file."""


def dump_in_style(data: Any, style: tuple[int, int, int], explicit_start: bool = False) -> str:
    y = round_trip_yaml()
    y.indent(mapping=style[0], sequence=style[1], offset=style[2])
    y.explicit_start = explicit_start
    out = io.StringIO()
    y.dump(data, out)
    return out.getvalue()


def closest_style(original: str, loaded: Any) -> tuple[int, int, int]:
    """The indentation style whose dump of the file matches the most of its lines; on a tie,
    the first such style of INDENT_STYLES. The dumps leave out a `---` start line: it would
    count for every style alike."""
    lines = set(original.splitlines())

    def matching(style: tuple[int, int, int]) -> int:
        return sum(line in lines for line in dump_in_style(loaded, style).splitlines())

    return max(INDENT_STYLES, key=matching)
