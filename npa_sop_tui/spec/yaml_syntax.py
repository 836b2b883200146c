"""YAML text before it is data: the loader (libyaml when available), the control characters
YAML refuses, and what a syntax error says (an unclosed quote, a tab in the indentation, or
PyYAML's own message), as findings placed at the mistake."""

from __future__ import annotations

import re
from typing import Any

import yaml

from npa_sop_tui.spec.findings import Finding

SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Characters YAML refuses in a file (C0 controls but tab/newline/CR, DEL, C1 but NEL). PyYAML
# names the first one without a position; these are found and placed before it reads.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x84\x86-\x9f]")
_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0B: "VT", 0x0C: "FF", 0x1B: "ESC"}
MAX_CONTROL_REPORTS = 10


def control_characters(text: str, source: str) -> list[Finding]:
    out: list[Finding] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for match in _CONTROL.finditer(line):
            code = ord(match.group())
            name = _CONTROL_NAMES.get(code, "control character")
            where = "in a comment" if "#" in line[: match.start()] else "in the text"
            out.append(
                Finding(
                    "error",
                    "",
                    f"{name} (U+{code:04X}) {where}: YAML files cannot contain control characters",
                    "delete it (invisible characters often come with copy and paste; "
                    "`cat -A FILE` shows them)",
                    source,
                    number,
                    match.start() + 1,
                )
            )
            if len(out) >= MAX_CONTROL_REPORTS:
                return out
    return out


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.split("\n")
    if 0 <= line < len(lines) and 0 <= column < len(lines[line]):
        return lines[line][column]
    return ""


def _runaway_quote(text: str, error_line: int | None) -> tuple[Any, int, str] | None:
    """A quoted value that spans lines and ends at or before the error: almost always a
    quote left open, closed by accident by the next quote further down. (Multi-line quoted
    values are legal YAML; this is only asked once the file failed to parse.)"""
    try:
        for token in yaml.scan(text, Loader=SAFE_LOADER):
            if not isinstance(token, yaml.ScalarToken) or token.style not in ('"', "'"):
                continue
            start, end = token.start_mark, token.end_mark
            if error_line is not None and start.line > error_line:
                return None
            if end.line > start.line:
                return start, end.line, token.style
    except yaml.YAMLError:
        return None
    return None


def syntax_error_finding(exc: yaml.YAMLError, source: str, text: str) -> Finding:
    problem_mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    if context == "while scanning a quoted scalar" and context_mark is not None:
        # The scanner fails where the file (or the next quote) ends; the mistake is the
        # quote that was opened and never closed.
        quote = _char_at(text, context_mark.line, context_mark.column) or "quote"
        return Finding(
            "error",
            "",
            f"unclosed quote: the {quote} opened here is never closed",
            f"add the closing {quote} at the end of the value, or remove the opening one",
            source,
            context_mark.line + 1,
            context_mark.column + 1,
        )
    mark = problem_mark or context_mark
    runaway = _runaway_quote(text, mark.line if mark is not None else None)
    if runaway is not None:
        start, end, quote = runaway
        return Finding(
            "error",
            "",
            f"unclosed quote: the {quote} opened here runs on to line {end + 1}",
            f"add the closing {quote} at the end of the value on this line",
            source,
            start.line + 1,
            start.column + 1,
        )
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        return Finding(
            "error",
            "",
            "a tab is used for indentation; YAML indents with spaces only",
            "replace the tab with spaces (two per level, like the lines around it)",
            source,
            mark.line + 1,
            mark.column + 1,
        )
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return Finding(
        "error", "", message, "fix the YAML syntax at this position", source, line, column
    )
