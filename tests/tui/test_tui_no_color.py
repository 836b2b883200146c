"""NO_COLOR stays readable: every verdict and state, as rendered, reads clearly on what it is
drawn on (WCAG contrast ≥ 4.5 in greys) and keeps its text style (bold, reverse)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.style import Style

from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.status.model import SlurmNode, Verdict
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow
from npa_sop_tui.tui.no_color import MIN_CONTRAST, contrast

from .fakes import FixedBackend, _status
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui

VERDICTS = ("ready", "progressing", "degraded", "failed", "destroyed", "unknown")
NODE_STATES = ("idle", "mixed", "allocated", "completing", "drained", "down", "unknown")
CLUSTER_STATES = ("deployed", "deploying", "failed", "destroyed")


class ManyStates(FixedBackend):
    def list_clusters(self) -> list[ClusterRow]:
        return [ClusterRow(f"c-{s}", "eu-north1", s, "—") for s in CLUSTER_STATES]

    async def status_snapshots(self, name: str, **_: Any) -> Any:
        status = _status()
        status.slurm.nodes = [
            SlurmNode(name=f"n{i}", state=s, display=s, partitions=["main"])
            for i, s in enumerate(NODE_STATES)
        ]
        yield status
        import asyncio

        await asyncio.Event().wait()


def _styles_of(app: NpaSopApp, word: str) -> list[Style]:
    """The styles the rendered screen (after NO_COLOR's filter) draws `word` with."""
    found = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            if segment.text.strip() == word and segment.style is not None:
                found.append(segment.style)
    return found


def _assert_readable(app: NpaSopApp, word: str, *, bold: bool = True) -> None:
    styles = _styles_of(app, word)
    assert styles, f"{word!r} is not on screen"
    for style in styles:
        fg, bg = style.color, style.bgcolor
        assert fg is not None and bg is not None, (word, style)
        if style.reverse:
            fg, bg = bg, fg
        for colour in (fg, bg):
            r, g, b = colour.get_truecolor()
            assert r == g == b, f"{word!r} still has colour {colour} under NO_COLOR"
        ratio = contrast(fg, bg)
        assert ratio >= MIN_CONTRAST, f"{word!r}: contrast {ratio:.1f} ({fg} on {bg})"
        if bold:
            assert style.bold, f"{word!r} is not told apart by its text style: {style}"


async def test_no_color_keeps_every_verdict_and_state_readable(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = NpaSopApp(ManyStates())
    assert app.no_color
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        assert isinstance(app.screen, HomeScreen)
        # the rows are drawn a refresh after the table got them (later on a busy machine)
        await wait_for(pilot, lambda: all(_styles_of(app, s) for s in CLUSTER_STATES))
        for state in CLUSTER_STATES:
            _assert_readable(app, state)

        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.status is not None)
        await wait_for(pilot, lambda: all(_styles_of(app, s) for s in NODE_STATES))
        for state in NODE_STATES:
            _assert_readable(app, state)
        for verdict in VERDICTS:
            screen.status = screen.status.model_copy(
                update={"verdict": Verdict(state=verdict, summary="why"), "taken_at": 1.0}
            )
            await pilot.pause()
            _assert_readable(app, verdict.upper())
            # the badge: reversed and bold, so it stands out without any colour
            assert all(s.reverse and s.bold for s in _styles_of(app, verdict.upper()))


def test_every_state_style_parses() -> None:
    """Textual markup silently drops a span whose style does not parse (`dark_orange` did:
    DEGRADED lost its badge), so every style our states use must parse. (The log's level
    styles are Rich Style objects, built at import.)"""
    from textual.style import Style as TextualStyle

    from npa_sop_tui.screens import home
    from npa_sop_tui.tui.widgets.deploy import progress
    from npa_sop_tui.tui.widgets.status import panels

    tables = (
        panels.STATE_COLOURS,
        panels.VERDICT_COLOURS,
        panels.FRESHNESS_COLOURS,
        home.STATE_STYLE,
        progress.STATE_COLOURS,
    )
    for table in tables:
        for state, colour in table.items():
            TextualStyle.parse(f"b reverse {colour}")  # raises on a name Textual lacks
            assert state
