"""Three-way line merge for round-trip edits (see roundtrip.py for why it is needed)."""

from __future__ import annotations

import difflib
import re


def merge_lines(original: str, baseline: str, edited: str) -> str:
    """Three-way line merge: `original` text, with the lines where `edited` differs from
    `baseline` (both dumps of the same tree, before and after the edits) taken from `edited`.

    Lines that baseline and edited share, and that also appear in the original, are anchors;
    between two anchors, the original's lines are kept unless the edit changed that gap, and
    inside a changed gap of the same shape, every line the edit left alone is kept too.
    Lines are compared without their endings; new lines get the original's line ending.
    """
    newline = "\r\n" if "\r\n" in original else "\n"
    orig_full = original.splitlines(keepends=True)
    orig = [line.rstrip("\r\n") for line in orig_full]
    base = baseline.splitlines()
    new = edited.splitlines()
    b2o = _equal_map(base, orig)
    b2e = _equal_map(base, new)
    anchors = [i for i in range(len(base)) if i in b2o and i in b2e]
    out: list[str] = []
    prev_b, prev_o, prev_e = -1, -1, -1
    for b in [*anchors, len(base)]:
        o = b2o.get(b, len(orig))
        e = b2e.get(b, len(new))
        if o <= prev_o or e <= prev_e:  # not monotonic together: skip this anchor
            continue
        old_gap = orig_full[prev_o + 1 : o]
        base_gap, new_gap = base[prev_b + 1 : b], new[prev_e + 1 : e]
        if base_gap == new_gap:
            out.extend(old_gap)
        elif len(old_gap) == len(base_gap) == len(new_gap):
            for old_line, base_line, new_line in zip(old_gap, base_gap, new_gap, strict=True):
                if base_line == new_line:
                    out.append(old_line)
                else:
                    out.append(_flow_padding(old_line.rstrip("\r\n"), new_line) + newline)
        else:
            out.extend(line + newline for line in new_gap)
        if b < len(base):
            out.append(orig_full[o])
        prev_b, prev_o, prev_e = b, o, e
    text = "".join(out)
    if not original.endswith(("\n", "\r")) and text.endswith(newline) and original:
        text = text[: -len(newline)]  # the file had no final newline; keep it that way
    return text


_PADDED_FLOW = re.compile(r"^(\s*[^\s#][^#]*?:\s)\{ (.*) \}(\s*(#.*)?)$")
_TIGHT_FLOW = re.compile(r"^(\s*[^\s#][^#]*?:\s)\{([^ ].*[^ ])\}(\s*(#.*)?)$")


def _flow_padding(old: str, new: str) -> str:
    """`key: {a: 1}` written back as `key: { a: 1 }` when the file padded that flow map
    (the two added spaces come out of the gap before a comment, so it stays in its column)."""
    if not _PADDED_FLOW.match(old):
        return new
    match = _TIGHT_FLOW.match(new)
    if match is None:
        return new
    tail = match[3]
    if tail.startswith("   ") and "#" in tail:
        tail = tail[2:]
    return f"{match[1]}{{ {match[2]} }}{tail}"


def _equal_map(a: list[str], b: list[str]) -> dict[int, int]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: dict[int, int] = {}
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                out[i1 + k] = j1 + k
    return out
