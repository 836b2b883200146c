"""The KEY paths of `npa soperator set KEY VALUE` and the round-trip editor:
`workers[1].size` is ["workers", 1, "size"]; a name follows the start, a `.` or a `]`."""

from __future__ import annotations

import re
from collections.abc import Sequence

_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


class PathError(ValueError):
    """A KEY path that does not parse or does not lead anywhere in the document."""


def parse_path(path: str) -> list[str | int]:
    """`workers[1].size` → ["workers", 1, "size"]."""
    parts: list[str | int] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        if parts and text[pos] == ".":
            pos += 1
        match = _PART.match(text, pos)
        if match is None or (match.group(1) and parts and text[pos - 1] not in ".]"):
            raise PathError(f"cannot read the key {path!r} at character {pos + 1}")
        parts.append(match.group(1) if match.group(1) else int(match.group(2)))
        pos = match.end()
    if not parts or not isinstance(parts[0], str):
        raise PathError(f"cannot read the key {path!r}: start with a field name")
    return parts


def format_path(parts: Sequence[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
