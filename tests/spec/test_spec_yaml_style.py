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


def test_each_style_number_sets_its_own_indentation() -> None:
    """Protects the style tuple's meaning (mapping indent, sequence indent, dash offset): a
    file written with four-space mappings and dashes indented under their key is dumped that
    way, not in ruamel's default two-space style."""
    written_by_hand = """\
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
    loaded = round_trip_yaml().load(DATA)
    assert dump_in_style(loaded, (4, 6, 4)) == written_by_hand
    again = round_trip_yaml().load(written_by_hand)
    assert closest_style(written_by_hand, again) == (4, 6, 4)


def test_a_file_every_style_reproduces_gets_the_default_style() -> None:
    """Protects the tie rule: a file with nothing nested reads the same in every style, so an
    edit that adds a nested key writes it in ruamel's default style, not an arbitrary one."""
    flat = "name: c\nregion: eu-north1\n"
    loaded = round_trip_yaml().load(flat)
    assert closest_style(flat, loaded) == INDENT_STYLES[0] == (2, 2, 0)


def test_an_explicit_start_line_does_not_change_the_style_picked() -> None:
    """Protects picking by the file's own lines: a file opening with `---` is matched like
    the same file without it, and the start line is written back only when asked for."""
    text = dump_in_style(round_trip_yaml().load(DATA), (4, 4, 0))
    with_start = "---\n" + text
    loaded = round_trip_yaml().load(with_start)
    assert closest_style(with_start, loaded) == (4, 4, 0)
    assert dump_in_style(loaded, (4, 4, 0), explicit_start=True) == with_start


def test_a_line_longer_than_any_terminal_is_never_folded() -> None:
    """Protects "never fold a line the user wrote on one": a 20,000-character value made of
    words (where YAML may break a line) stays on its one line."""
    words = " ".join(f"word{i}" for i in range(2500))
    assert len(words) > 20_000
    text = f"note: {words}\n"
    assert dump_in_style(round_trip_yaml().load(text), INDENT_STYLES[0]) == text
