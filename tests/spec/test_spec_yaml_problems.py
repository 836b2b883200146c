"""YAML mistakes named as what they are, at the line and column where they start."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.model import SpecError, parse_spec_text

HEAD = "apiVersion: npa.soperator/v0.0.1\n"


def _first(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec_text(text, source="c.yaml")
    return caught.value.findings[0].render()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HEAD + "name: de\x07mo\n", "c.yaml:2:9 BEL (U+0007) in the text"),
        (HEAD + "name: demo\x00\n", "c.yaml:2:11 NUL (U+0000) in the text"),
        (HEAD + "name: demo   # a \x1b[31m comment\n", "c.yaml:2:18 ESC (U+001B) in a comment"),
    ],
)
def test_control_characters_are_placed_and_named(text: str, expected: str) -> None:
    assert _first(text).startswith(expected)


def test_every_control_character_is_listed() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec_text(HEAD + "name: a\x07b\nregion: x\x1by\n", source="c.yaml")
    assert [(f.line, f.column) for f in caught.value.findings] == [(2, 8), (3, 10)]


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "name: demo\nworkers:\n\t- name: cpu\n",
        HEAD + "name: demo\ncontrol_plane:\n  system:\n\tmin_size: 3\n",
    ],
)
def test_a_tab_used_for_indentation_is_named(text: str) -> None:
    line = text.count("\n", 0, text.index("\t")) + 1
    assert _first(text).startswith(f"c.yaml:{line}:1 a tab is used for indentation")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HEAD + 'name: "demo\nregion: eu-north1\n', 'c.yaml:2:7 unclosed quote: the " opened'),
        (HEAD + "name: demo\nregion: 'eu-north1\n", "c.yaml:3:9 unclosed quote: the ' opened"),
        # closed by accident by the next quote further down: still the line it opens on
        (HEAD + 'name: "demo\nregion: "eu-north1"\n', 'c.yaml:2:7 unclosed quote: the " opened'),
        (
            HEAD + 'name: demo\nworkers:\n  - name: "cpu\n    size: 2\n  - name: "gpu"\n',
            'c.yaml:4:11 unclosed quote: the " opened here runs on to line 6',
        ),
    ],
)
def test_an_unclosed_quote_points_where_it_opens(text: str, expected: str) -> None:
    assert _first(text).startswith(expected)


def test_legal_tabs_and_multiline_quotes_still_load() -> None:
    text = HEAD + 'name: demo\nregion: "eu-\n  north1"\nworkers:\n  - {name: cpu,\tsize: 2}\n'
    loaded = parse_spec_text(text, source="c.yaml", validate=False)
    assert loaded.spec.region == "eu- north1" and loaded.spec.workers[0].size == 2
