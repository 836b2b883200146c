"""Keep blank lines and comments where they belong when keys or list items come and go.

ruamel.yaml stores the lines that *follow* a key (blank lines, full-line comments) as part of
that key's end-of-line comment token. Appending a key after it would put the new key below
those lines, and deleting it would delete them. These helpers move such trailing lines to
the key that now ends the block, so section breaks and closing comments stay in place.
"""

from __future__ import annotations

from typing import Any


def _leaf(container: Any, key: Any) -> tuple[Any, Any]:
    """The innermost last (mapping, key) under container[key]: where trailing lines sit."""
    value = container[key]
    if isinstance(value, dict) and value:
        return _leaf(value, list(value)[-1])
    if isinstance(value, list) and value:
        return _leaf(value, len(value) - 1)
    return container, key


def take_tail(container: Any, key: Any) -> str:
    """Remove and return the lines that follow container[key] (its own comment stays)."""
    leaf, k = _leaf(container, key)
    items = getattr(getattr(leaf, "ca", None), "items", None)
    if not isinstance(leaf, dict) or items is None:
        return ""
    entry = items.get(k)
    token = entry[2] if entry and len(entry) > 2 else None
    if token is None or "\n" not in token.value:
        return ""
    cut = token.value.index("\n") + 1
    head, tail = token.value[:cut], token.value[cut:]
    if not tail:
        return ""
    if head.strip():
        token.value = head
    else:
        entry[2] = None
    return str(tail)


def put_tail(container: Any, key: Any, tail: str, *, replace_blank: bool = False) -> None:
    """Append `tail` (lines taken by `take_tail`) after container[key].

    `replace_blank`: if container[key] is followed by blank lines only, they are replaced
    (a deleted neighbour's separator takes the place of this one's, not one more).
    """
    if not tail:
        return
    if replace_blank:
        own = take_tail(container, key)
        if own.strip():
            tail = own + tail
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    leaf, k = _leaf(container, key)
    if not isinstance(leaf, dict) or not hasattr(leaf, "ca"):
        return
    entry = leaf.ca.items.setdefault(k, [None, None, None, None])
    token = entry[2]
    if token is None:
        entry[2] = CommentToken("\n" + tail, CommentMark(0), None)
    else:
        head = token.value if token.value.endswith("\n") else token.value + "\n"
        token.value = head + tail


def _lead_tokens(container: Any) -> list[Any] | None:
    comment = getattr(getattr(container, "ca", None), "comment", None)
    return comment[1] if comment and len(comment) > 1 else None


def put_lead(container: Any, tail: str) -> None:
    """Put `tail` (the lines that followed a deleted first item: in the user's eyes they
    lead the next one in) before container's new first item, below the lines already there."""
    if not tail.strip() or not hasattr(container, "ca"):
        return
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    tokens = _lead_tokens(container)
    if not tokens:  # nothing above it: the file or block does not start with a blank line
        tail = tail[len(tail) - len(tail.lstrip("\n")) :]
    token = CommentToken(tail, CommentMark(0), None)
    if tokens is None:
        container.ca.comment = [None, [token]]
    else:
        tokens.append(token)


def emptied(parent: Any, key: Any, tail: str) -> None:
    """parent[key] lost its last item, whose following lines are `tail`: they and the lines
    that led its first item in go below its `key: []` line. (Left where they are, ruamel
    writes them above the `[]` and glues the next key onto the line after it.)"""
    container = parent[key]
    tokens = _lead_tokens(container) or []
    lines = "".join(
        t.value if t.value.startswith("\n") else " " * t.column + t.value for t in tokens
    )
    if hasattr(container, "ca"):
        container.ca.comment = None
    items = getattr(getattr(parent, "ca", None), "items", None)
    if not isinstance(parent, dict) or items is None:
        return
    items.setdefault(key, [None, None, None, None])[3] = None
    put_tail(parent, key, lines + tail)
    if items[key][2] is not None and hasattr(container, "fa"):
        container.fa.set_flow_style()  # as if read from `key: []  # …`, where ruamel keeps
        container.ca.comment = [items[key][2], None]  # the comments after it
