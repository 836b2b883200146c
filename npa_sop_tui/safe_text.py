"""Text from outside made safe to show: the one function every view passes it through.

A Slurm drain reason, a Kubernetes condition message, a job's output line, an inventory
field, a template's summary or a cloud error is data, written by someone else. Shown raw, a
terminal obeys what it carries: escape sequences that blank the screen, set the window
title, plant a hyperlink or write the viewer's clipboard (OSC 52), a carriage return that
overwrites what came before, bidirectional overrides that show one thing and mean another.
Passed to Rich or Textual as markup, `[/]` raises and `[link=…]` styles.

`safe_text` keeps every printable character and shows every control visibly instead of
letting it act: C0 controls and DEL as their Unicode control pictures (ESC as `␛`, so an
escape sequence reads `␛]52;c;…␇` and does nothing), C1 controls and the bidirectional and
line-separator formatting characters as `<U+XXXX>`. `safe_markup` does the same and then
escapes Textual's content markup, for the places that build markup strings. JSON output
keeps the raw value; these functions are for what a person's terminal or browser renders.
"""

from __future__ import annotations

import re

_PICTURE_BASE = 0x2400  # U+2400..U+241F are the pictures of C0 controls 0x00..0x1F
_DEL_PICTURE = "\u2421"
_ELLIPSIS = "…"

# Formatting characters that reorder or break text without being controls: the bidi
# embeddings, overrides and isolates (the "Trojan Source" characters), the marks, and the
# Unicode line and paragraph separators (a line break to a terminal or browser).
_FORMATTING = frozenset(
    [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


def _visible(code: int, *, keep_newlines: bool) -> str:
    if code == 0x0A and keep_newlines:
        return "\n"
    if code == 0x09:
        return " "  # a tab moves the cursor only; a space shows the gap without the jump
    if code < 0x20:
        return chr(_PICTURE_BASE + code)
    if code == 0x7F:
        return _DEL_PICTURE
    return f"<U+{code:04X}>"


# Every character that acts instead of showing: C0 controls, DEL and C1 controls, and the
# formatting characters above. One class, searched at C speed: most text holds none of
# them, and one search says so (a cluster's 10,000 node reasons, a long log).
_CARE = re.compile(
    "[\x00-\x1f\x7f-\x9f" + "".join(re.escape(chr(code)) for code in sorted(_FORMATTING)) + "]"
)


def safe_text(value: object, *, keep_newlines: bool = False, limit: int | None = None) -> str:
    """`value` as text that shows every character and obeys none.

    `keep_newlines` keeps line feeds (a job's output, a log); elsewhere a newline is shown as
    `␊` so a table cell or a one-line message stays one line. `limit` bounds the result's
    length in characters (the cut is marked with `…`); a control shown as `<U+XXXX>` is never
    cut in half.
    """
    text = value if isinstance(value, str) else str(value)
    if limit is not None and limit <= 0:
        return ""
    if (limit is None or len(text) <= limit) and _CARE.search(text) is None:
        return text
    out: list[str] = []
    size = 0
    for char in text:
        piece = _visible(ord(char), keep_newlines=keep_newlines) if _CARE.match(char) else char
        if limit is not None and size + len(piece) > limit:
            while out and size + len(_ELLIPSIS) > limit:
                size -= len(out.pop())
            out.append(_ELLIPSIS)
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def escape_markup(text: str) -> str:
    """Textual content markup that renders exactly `text`: `[` becomes `\\[`."""
    return text.replace("[", "\\[")


def safe_markup(value: object, *, keep_newlines: bool = False, limit: int | None = None) -> str:
    """`safe_text`, then escaped for Textual's content markup (a string the app parses)."""
    return escape_markup(safe_text(value, keep_newlines=keep_newlines, limit=limit))


def without_controls(text: str) -> str:
    """`text` with every character `safe_text` would show visibly taken out instead.

    Only for a line already laid out cell by cell (the app's last line of defence, under
    every widget): those characters take no cell, so dropping them keeps every width, where
    a visible picture would push the line out of its cells. Every view shows outside text
    through `safe_text` first; this catches what reaches the screen any other way.
    """
    if _CARE.search(text) is None:
        return text
    return _CARE.sub("", text)
