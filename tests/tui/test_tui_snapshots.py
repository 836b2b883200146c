"""SVG snapshots of every screen at 80x24 and 120x40 (pytest-textual-snapshot).

A fixed backend feeds fixed data so the pixels are repeatable: no clocks, no running
durations, cursor blink off. The flows themselves are tested against the real library in
the other test modules; these only pin the looks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, Select

from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import ResourceTable
from npa_sop_tui.tui.widgets.deploy.timeline_pane import DeployTimelinePane
from npa_sop_tui.tui.widgets.log_view import LogView
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor

from .fakes import ADDRS, FixedBackend
from testkit.tui import CPU_SPEC, home_loaded, wait_for

pytestmark = pytest.mark.tui


SIZES = [(80, 24), (120, 40)]


def _no_blink(app: NpaSopApp) -> None:
    for screen in app.screen_stack:
        for widget in screen.query(Input):
            widget.cursor_blink = False


async def _settle(pilot: Any) -> None:
    """Still cursors, no button caught mid-press, and the app done with what it is doing."""
    _no_blink(pilot.app)
    # a pressed button is drawn highlighted for a moment (also under a modal): wait it out
    await wait_for(
        pilot,
        lambda: (
            not any(b.has_class("-active") for s in pilot.app.screen_stack for b in s.query(Button))
        ),
    )
    await pilot.pause()


def _app(tmp_path: Path, *, spec: bool = False) -> NpaSopApp:
    path = None
    if spec:
        path = tmp_path / "cluster.yaml"
        path.write_text(CPU_SPEC)
    return NpaSopApp(FixedBackend(), spec_path=path)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_home(
    snap_compare: Any, size: tuple[int, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_HOME", "/srv/npa-home")  # the home screen names its config file

    async def before(pilot: Any) -> None:
        await home_loaded(pilot)
        await _settle(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_wizard_cluster(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        await _settle(pilot)

    assert snap_compare(_app(tmp_path, spec=True), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_wizard_pool_editor(
    snap_compare: Any, size: tuple[int, int], tmp_path: Path
) -> None:
    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        pilot.app.screen.step = "pools"
        await pilot.pause()
        pilot.app.screen.query_one("#pool-edit").press()
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PoolEditor))
        await _settle(pilot)

    assert snap_compare(_app(tmp_path, spec=True), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_wizard_review(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        wizard = pilot.app.screen
        # absolute and fixed: the review step shows the full path it will write
        wizard.query_one("#out-path", Input).value = "/nonexistent/npa-snapshot/cluster.yaml"
        wizard.step = "review"
        await _settle(pilot)

    assert snap_compare(_app(tmp_path, spec=True), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_wizard_invalid(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        await pilot.press(*"Bad_Name")
        pilot.app.screen.query_one("#region", Select).value = "eu-north1"
        await _settle(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_deploy(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        app = pilot.app
        backend = app.backend
        spec, _ = backend.check(backend.load_spec(_write(tmp_path)))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
        screen.post_message(DeployScreen.DeployRequested(allow_destructive=False))
        table = screen.query_one(ResourceTable)
        await wait_for(pilot, lambda: table.row_count == len(ADDRS))
        # the table follows the work: with every resource done, to the newest row
        await wait_for(pilot, lambda: table.cursor_row == len(ADDRS) - 1)
        mini = screen.query_one("#mini-status")
        await wait_for(pilot, lambda: "verdict" in str(mini.render()))
        # the timeline pane draws a flood of events on its timer: draw the last batch now,
        # so the picture does not depend on how fast this machine got here
        screen.query_one(DeployTimelinePane).redraw_now()
        view = screen.query_one(LogView)  # the log follows its tail, when the machine lets it
        await wait_for(pilot, lambda: view.max_scroll_y > 0 and view.scroll_y >= view.max_scroll_y)
        await _settle(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_status(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        pilot.app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, StatusScreen))
        await wait_for(pilot, lambda: pilot.app.screen.status is not None)
        await _settle(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_destroy(snap_compare: Any, size: tuple[int, int], tmp_path: Path) -> None:
    async def before(pilot: Any) -> None:
        pilot.app.destroy("demo")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DestroyScreen))
        await pilot.press(*"dmeo", "enter")
        await _settle(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=before)


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(CPU_SPEC)
    return path
