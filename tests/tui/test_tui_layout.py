"""Layout rules: Escape goes back on every screen, selections survive refreshes, only the
focused table shows a cursor. (Every key the footer shows: test_tui_bindings.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen

from npa_sop_tui.screens.home import ClusterTable, HomeScreen
from npa_sop_tui.screens.jobs import JobsScreen
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.node_detail import NodeDetailScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.status.panels import NodeGroupsTable, SlurmNodesTable

from .test_tui_operator import OpsBackend
from testkit.tui import wait_for

pytestmark = pytest.mark.tui


async def _back_with_escape(pilot: Any, app: NpaSopApp, screen: Screen[Any]) -> None:
    before = app.screen
    app.push_screen(screen)
    await wait_for(pilot, lambda: app.screen is screen)
    await pilot.pause()
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is before, timeout=10)


async def test_escape_goes_back_everywhere(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        await _back_with_escape(pilot, app, WizardScreen(app.backend.example_mapping(), path=None))
        await _back_with_escape(pilot, app, LogViewerScreen("log", [("info", "x")], None))
        await _back_with_escape(pilot, app, JobsScreen("demo"))
        await _back_with_escape(pilot, app, NodeDetailScreen("demo", "cpu-0"))
        status = StatusScreen("demo")
        app.push_screen(status)
        await wait_for(pilot, lambda: status.status is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_selection_survives_refreshes_and_only_the_focused_table_has_a_cursor(
    npa_home: Path,
) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        home = app.screen
        table = home.query_one(ClusterTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        table.move_cursor(row=1)
        home.reload()  # the list reloads (also each time you come back to it)
        await pilot.pause(0.3)
        assert table.selected_key() == "train" and app.cluster == "train"

        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        status = app.screen
        await wait_for(pilot, lambda: status.status is not None)
        nodes = status.query_one(SlurmNodesTable)
        nodes.focus()
        nodes.move_cursor(row=1)
        status.status = status.status.model_copy()  # a new snapshot arrives
        await pilot.pause()
        assert nodes.selected_key() == "cpu-1"
        assert nodes.show_cursor and not status.query_one(NodeGroupsTable).show_cursor
