"""YAML dumped the way a file is written (spec/yaml_style.py): of the indentation styles a
file may use, the one picked reproduces the file's own lines; quotes and long lines stay."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.yaml_style import (
    INDENT_STYLES,
    closest_style,
    dump_in_style,
    round_trip_yaml,
)

DATA = """\
name: c
control_plane:
  system:
    min_size: 3
workers:
- name: cpu
  size: 2
  features:
  - a
  - b
"""


@pytest.mark.parametrize("style", INDENT_STYLES, ids=str)
def test_the_picked_style_reproduces_a_file_written_in_any_style(
    style: tuple[int, int, int],
) -> None:
    text = dump_in_style(round_trip_yaml().load(DATA), style, explicit_start=False)
    loaded = round_trip_yaml().load(text)
    assert dump_in_style(loaded, closest_style(text, loaded), explicit_start=False) == text


def test_a_new_file_gets_ruamels_default_style_and_keeps_quotes_and_long_lines() -> None:
    assert INDENT_STYLES[0] == (2, 2, 0)
    long = "x" * 300
    text = f'name: "quoted"\nnote: {long}\n'
    loaded = round_trip_yaml().load(text)
    assert dump_in_style(loaded, INDENT_STYLES[0], explicit_start=False) == text
    assert dump_in_style(loaded, INDENT_STYLES[0], explicit_start=True).startswith("---\n")
