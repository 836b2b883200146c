"""No cut-off text: every screen and dialog, at 80×24 and 120×40, is walked and checked for
text that does not fit where it is drawn (`testkit.tui.cut_off`): button labels wider than
their button, text widgets needing more lines than they get, table cells wider than their
column, table columns that lag their content, widgets drawn past the screen's edge."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.screens.jobs import JobsScreen
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.node_detail import NodeDetailScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.wizard import STEPS
from npa_sop_tui.tui.app import NpaSopApp

from .test_tui_operator import OpsBackend
from testkit.tui import cut_off, home_loaded, open_cpu_wizard, wait_for

pytestmark = pytest.mark.tui

LONG_PATH = Path("/tmp/a-rather-long-npa-home/soperator/demo/operations/deploy-20261130.ndjson")


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.pause()


async def _check(pilot: Any, where: str, found: dict[str, list[str]]) -> None:
    await _settle(pilot)
    problems = cut_off(pilot.app.screen)
    if problems:
        found[where] = problems


def _legend_whole(screen: Any, found: dict[str, list[str]]) -> None:
    """The node-state chart is in view without scrolling, and names every pool with a count
    for every state, whole (a sparkline row per pool at 24 rows, a legend and the plot's
    axes from 32); no line is wider than the chart."""
    from npa_sop_tui.history.node_states import BUCKETS
    from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart

    chart = screen.query_one(NodeStatesChart)
    lines = [line.plain for line in chart.render().split()]
    counts = [line for line in lines if re.search(rf"\S+( \S\d+){{{len(BUCKETS)}}}", line)]
    problems = [] if counts else ["no pool's counts"]
    if not screen.region.contains_region(chart.region) or chart.region.height == 0:
        problems.append(f"chart not in view: {chart.region}")
    if chart.region.height >= 8:  # the plot: its legend and both axes
        legend = "\n".join(lines[:2])
        problems += [f"legend lacks {b}" for b in BUCKETS if not re.search(rf"\b{b}\b", legend)]
        if not any("┤" in line for line in lines) or not any("┬" in line for line in lines):
            problems.append("no axes")
    problems += [line for line in lines if len(line) > chart.content_region.width]
    if problems:
        found["dashboard chart"] = problems


def _no_overlaps(screen: Any, where: str, found: dict[str, list[str]]) -> None:
    """No field or button drawn over another (the template selector once sat on the Command
    field)."""
    from textual.widgets import Button, Input, Select

    widgets = [w for w in screen.query("Input, Select, Button") if w.region.area]
    assert any(isinstance(w, Select) for w in widgets) and any(
        isinstance(w, Input | Button) for w in widgets
    )
    for i, a in enumerate(widgets):
        for b in widgets[i + 1 :]:
            if a.region.overlaps(b.region):
                found.setdefault(where, []).append(f"#{a.id} over #{b.id}")


async def _with_help(pilot: Any, where: str, found: dict[str, list[str]]) -> None:
    """The screen, then its help dialog (every screen's `?`/f1)."""
    await _check(pilot, where, found)
    pilot.app.action_help()
    await _check(pilot, f"{where} help", found)
    pilot.app.pop_screen()
    await _settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_every_screen_fits(size: tuple[int, int], tmp_path: Path) -> None:
    found: dict[str, list[str]] = {}
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=size) as pilot:
        await home_loaded(pilot)
        await _with_help(pilot, "home", found)

        wizard = await open_cpu_wizard(pilot, tmp_path)
        for step in STEPS:
            wizard.step = step
            await _with_help(pilot, f"wizard {step}", found)
        app.pop_screen()

        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        status = app.screen
        await wait_for(pilot, lambda: status.status is not None)
        await _with_help(pilot, "dashboard", found)
        _legend_whole(status, found)
        status.action_ssh()
        await _check(pilot, "ssh dialog", found)
        app.pop_screen()

        await app.push_screen(NodeDetailScreen("demo", "cpu-1", status.status.kube))
        await wait_for(pilot, lambda: app.screen.detail is not None)
        await _check(pilot, "node detail", found)
        app.pop_screen()

        jobs = JobsScreen("demo", interval=60)
        await app.push_screen(jobs)
        await _with_help(pilot, "jobs", found)
        await pilot.press("h")
        await _check(pilot, "jobs history", found)
        app.pop_screen()

        from npa_sop_tui.screens.modals import ConfirmModal
        from npa_sop_tui.screens.run_dialog import RunDialog

        await app.push_screen(RunDialog(template="cpu-hello"))
        await _check(pilot, "run dialog", found)
        _no_overlaps(app.screen, "run dialog", found)
        app.pop_screen()
        lost = "\n".join(f"  module.k8s.nebius_mk8s_v1_node_group.worker[{i}]" for i in range(15))
        await app.push_screen(
            ConfirmModal(f"This plan replaces 15 resources:\n{lost}", yes="Apply", danger=True)
        )
        await _check(pilot, "destructive dialog", found)
        app.pop_screen()

        title = "Last operation log of demo (deploy op-20261130-100000)"
        await app.push_screen(LogViewerScreen(title, [("info", "x")], LONG_PATH))
        await _with_help(pilot, "log viewer", found)
    assert found == {}


async def test_the_check_sees_cut_off_text() -> None:
    """The walk's detector itself: each kind of cut is reported."""
    from textual.app import App, ComposeResult
    from textual.containers import Vertical
    from textual.widgets import Button, Static

    class Cramped(App[None]):
        CSS = """
        #narrow { width: 8; min-width: 0; }
        #one-line { height: 1; width: 20; }
        #box { height: 3; }
        """

        def compose(self) -> ComposeResult:
            yield Button("Close (esc)", id="narrow")
            yield Static("no job history: accounting is off in this cluster", id="one-line")
            with Vertical(id="box"):
                yield Static("a")
                yield Static("b")
                yield Static("c")
                yield Button("Cut", id="clipped")

    app = Cramped()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        problems = "\n".join(cut_off(app.screen))
    assert "#narrow" in problems and "#one-line" in problems and "#clipped" in problems
