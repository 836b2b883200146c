"""The lines before a spec's first field that ruamel.yaml cannot write back.

Its dump drops `%YAML` / `%TAG` directives and the comments before a `---` line, and moves a
comment written on the `---` line onto an indented line of its own. So a round-trip edit keeps
this *head* as the file's own text and dumps (and line-merges) only what follows it.
"""

from __future__ import annotations

import re
from typing import Any

from npa_sop_tui.spec.yaml_style import dump_in_style

_START = re.compile(r"---(?:[ \t]+#.*|[ \t]*)")
_BEFORE = re.compile(r"[ \t]*(?:#.*)?|%.*")


def split_head(text: str) -> tuple[str, str]:
    """(head, body): the head is `text` up to and including its `---` line (alone, or with a
    comment) when only blank lines, comments and directives come before it; else ""."""
    start = 0
    while start < len(text):
        end = text.find("\n", start) + 1 or len(text)
        line = text[start:end].rstrip("\r\n")
        if _START.fullmatch(line):
            return text[:end], text[end:]
        if not _BEFORE.fullmatch(line):
            break
        start = end
    return "", text


def dump_body(tree: Any, style: tuple[int, int, int], explicit: bool, head: str) -> str:
    """`tree` dumped in `style` without what it holds of `head`: ruamel keeps the comment of
    the `---` line as the first line of a comment token before the first field (tokens
    made by an edit have no line: they are the body's)."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    comment = getattr(getattr(tree, "ca", None), "comment", None)
    saved = comment[1] if comment and head else None
    if saved:
        lines = head.count("\n")  # `render` gives it ending in a newline
        in_head = [t for t in saved if getattr(t.start_mark, "line", lines) < lines]
        kept = [t for t in saved if all(t is not h for h in in_head)]
        rest = in_head[0].value.partition("\n")[2] if in_head else ""
        comment[1] = ([CommentToken(rest, CommentMark(0), None)] if rest else []) + kept
    try:
        return dump_in_style(tree, style, explicit)
    finally:
        if saved:
            comment[1] = saved
