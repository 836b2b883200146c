"""Searching: after Enter the log search hands the keys back, so n and N move between
matches; a pattern that is not a regex is said to be matched as plain text, never silently."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Label, Static

from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.log_view import LogView
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

from .fakes import FixedBackend
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui

LINES = [("info", f"line {i}" + (" GPU check ok" if i in (3, 10, 17) else "")) for i in range(40)]


def _status_text(screen: LogViewerScreen) -> str:
    return str(screen.query_one("#log-status", Static).render())


async def test_log_search_n_and_N_move_between_matches() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        screen = LogViewerScreen("deploy log", list(LINES), None)
        await app.push_screen(screen)
        await pilot.press("slash", *"GPU check", "enter")
        box = screen.query_one("#log-search", Input)
        assert box.value == "GPU check"
        assert isinstance(app.focused, LogView)
        assert "match 1 of 3" in _status_text(screen)
        await pilot.press("n")
        assert box.value == "GPU check" and "match 2 of 3" in _status_text(screen)
        await pilot.press("N", "N")
        assert box.value == "GPU check" and "match 3 of 3" in _status_text(screen)


async def test_invalid_regex_is_said_not_silent() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        screen = LogViewerScreen("deploy log", [*LINES, ("info", "a [b")], None)
        await app.push_screen(screen)
        await pilot.press("slash", *"/[b/", "enter")
        text = _status_text(screen)
        assert "match 1 of 1" in text and "not a valid regex" in text, text
        await app.pop_screen()
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        status = app.screen
        await wait_for(pilot, lambda: status.status is not None)
        await pilot.press("slash", *"cpu-[")
        label = str(status.query_one("#nodes-label", Label).render())
        assert "not a regex" in label, label
        assert status.query_one("#node-filter", Input).tooltip
        assert status.query_one(SlurmNodesTable).row_count == 0
        await pilot.press("backspace", "backspace")
        assert "not a regex" not in str(status.query_one("#nodes-label", Label).render())
