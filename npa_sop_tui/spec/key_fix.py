"""Renaming misspelt keys in a spec's text, so a file with a typo can be fixed in place.

A finding about an unknown key carries the key's line and column and, when a known key is
close, a `did you mean 'x'?` hint. The rename edits only those characters of the text, so
the value under the key, its comments and the rest of the file stay byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.yaml_positions import parent_path

_UNKNOWN = re.compile(r"^unknown field '([^']+)'$")
_SUGGESTED = re.compile(r"^did you mean '([^']+)'\?$")


@dataclass(frozen=True)
class KeyRename:
    """One unknown key and the known key it is renamed to."""

    path: str
    """The unknown key's field path (`workers[0].sise`)."""
    old: str
    new: str
    line: int
    column: int


def unknown_key(finding: Finding) -> str | None:
    """The key an `unknown field` finding is about, else None."""
    match = _UNKNOWN.match(finding.message)
    return match.group(1) if match else None


def suggested_renames(findings: Iterable[Finding]) -> list[KeyRename]:
    """Renames for every unknown key placed in the file that has one close known key."""
    out: list[KeyRename] = []
    for finding in findings:
        old = unknown_key(finding)
        hint = _SUGGESTED.match(finding.hint or "")
        if old is None or hint is None or finding.line is None:
            continue
        out.append(KeyRename(finding.path, old, hint.group(1), finding.line, finding.column or 1))
    return out


def apply_renames(text: str, renames: Iterable[KeyRename]) -> tuple[str, list[KeyRename]]:
    """(text with each rename applied, the renames done).

    A rename is skipped when the key is not written at its place as expected, or when its
    mapping already has the new key (two `workers:` keys would make the file invalid YAML).
    """
    lines = text.splitlines(keepends=True)
    done: list[KeyRename] = []
    for rename in renames:
        index, col = rename.line - 1, rename.column - 1
        if not 0 <= index < len(lines):
            continue
        line = lines[index]
        if line[col : col + len(rename.old)] != rename.old:
            continue
        rest = line[col + len(rename.old) :].lstrip(" ")
        if not rest.startswith(":"):
            continue
        if _has_key("".join(lines), parent_path(rename.path), rename.new):
            continue
        lines[index] = line[:col] + rename.new + line[col + len(rename.old) :]
        done.append(rename)
    return "".join(lines), done


def _has_key(text: str, parent: str, key: str) -> bool:
    """Whether the mapping at field path `parent` in `text` already has `key`."""
    from npa_sop_tui.spec.roundtrip import SpecDocument

    try:
        document = SpecDocument.parse(text)
        node = document.get(parent) if parent else document.data
    except Exception:  # not readable as a tree: do not rename blind
        return True
    return not isinstance(node, dict) or key in node
