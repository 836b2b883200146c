"""The headless status view (`npa soperator status` text): whatever a cluster reports in any
field is shown, never obeyed and never parsed as markup."""

from __future__ import annotations

import io

from hypothesis import given, settings
from rich.console import Console

from npa_sop_tui.status.render import render_status

from testkit.hostile import ATTACK, VISIBLE, assert_inert, hostile_status, hostile_text


def _shown(status: object, *, terminal: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=240, force_terminal=terminal, color_system=None)
    console.print(render_status(status))  # type: ignore[arg-type]
    return out.getvalue()


def test_a_drain_reason_with_escapes_and_markup_is_shown_not_obeyed() -> None:
    shown = _shown(hostile_status(ATTACK))
    assert_inert(shown)
    for picture in VISIBLE:
        assert picture in shown
    assert "[/] x" in shown and "[link=http://evil.example]y[/link]" in shown


def test_the_only_escape_sequences_on_a_colour_terminal_are_the_views_own() -> None:
    """With colours on, every ESC is Rich's own styling (`ESC [ … m`), none the cluster's."""
    import re

    shown = _shown(hostile_status(ATTACK), terminal=True)
    assert "\x1b]" not in shown and "\x07" not in shown  # no OSC: title, link, clipboard
    assert_inert(re.sub(r"\x1b\[[0-9;]*m", "", shown))


@settings(max_examples=60, deadline=None)
@given(hostile_text())
def test_any_text_in_any_cluster_reported_field_is_inert(text: str) -> None:
    assert_inert(_shown(hostile_status(text)))
