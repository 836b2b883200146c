"""KEY paths (spec/spec_paths.py): `workers[1].size` reads as ["workers", 1, "size"] and is
written back the same way; a path that does not start with a name, has an empty or
unreadable part, or a name not after `.`/`]` is refused, saying where."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.spec_paths import PathError, format_path, parse_path


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("workers[1].size", ["workers", 1, "size"]),
        ("control_plane.login.preset", ["control_plane", "login", "preset"]),
        ("  name  ", ["name"]),
        ("workers[0][2]", ["workers", 0, 2]),
        ("a_1.B2", ["a_1", "B2"]),
    ],
)
def test_a_path_reads_and_writes_back(text: str, parts: list[str | int]) -> None:
    assert parse_path(text) == parts
    assert parse_path(format_path(parts)) == parts
    assert format_path(parts) == text.strip()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("", "start with a field name"),
        ("[1]", "start with a field name"),
        ("workers[x]", "at character 8"),
        ("a..b", "at character 3"),
        ("a b", "at character 2"),
        ("1abc", "at character 1"),
    ],
)
def test_an_unreadable_path_says_where(text: str, where: str) -> None:
    with pytest.raises(PathError, match=where) as caught:
        parse_path(text)
    assert f"cannot read the key {text!r}" in str(caught.value)
