"""The wizard edits cluster.yaml in place: opening is not a change, saving unchanged leaves
the file byte-identical, a change rewrites only its lines, and the review step shows the
diff before anything is written."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp

from .fakes import FixedBackend
from testkit.tui import wait_for

pytestmark = pytest.mark.tui

COMMENTED = """\
# Team cluster: comments, quoting and flow style must survive the app.
apiVersion: npa.soperator/v0.0.1
name: demo            # kube context nebius-demo-slurm
region: eu-north1
control_plane:
  login: { preset: 16vcpu-64gb }
workers:
  - name: cpu
    platform: 'cpu-d3'
    preset: "8vcpu-32gb"
    size: 2   # two for now
slurm_operator_version: "4.1.6"
"""


def _changed(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if line.startswith(("- ", "+ "))
    ]


def _preview(wizard: WizardScreen) -> str:
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(wizard._preview())
    return console.export_text()


async def _open(pilot: Any, app: NpaSopApp, path: Path) -> WizardScreen:
    app.open_spec(path)
    await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
    await pilot.pause(0.2)
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    return wizard


async def test_open_and_write_unchanged_is_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    mtime = path.stat().st_mtime_ns
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _open(pilot, app, path)
        assert not wizard.dirty(), "opening a file is not a change"
        wizard.step = "review"
        await pilot.pause()
        assert "No changes" in _preview(wizard)
        assert wizard.query_one("#out-path", Input).value == str(path)
        await pilot.press("ctrl+s")  # the opened file: no overwrite question
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmModal)
        assert wizard._deployable()  # written (as it was): `d` deploys it
    assert path.read_text() == COMMENTED
    assert path.stat().st_mtime_ns == mtime, "an unchanged file is not even rewritten"


async def test_a_change_rewrites_only_its_line_after_showing_the_diff(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _open(pilot, app, path)
        name = wizard.query_one("#name", Input)
        name.focus()
        await pilot.press("end", *"-2")
        assert wizard.dirty()
        wizard.step = "review"
        await pilot.pause()
        shown = _preview(wizard)
        assert "-name: demo            # kube context nebius-demo-slurm" in shown
        assert "+name: demo-2" in shown
        assert path.read_text() == COMMENTED, "nothing is written before Write"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "demo-2" in path.read_text())
        assert app.screen is wizard and not wizard.dirty()
        # a second change diffs against what is now on disk
        wizard.data["workers"][0]["size"] = 3
        assert "+    size: 3   # two for now" in _preview(wizard)
    after = path.read_text()
    assert _changed(COMMENTED, after) == [
        "- name: demo            # kube context nebius-demo-slurm",
        "+ name: demo-2          # kube context nebius-demo-slurm",
    ]
    assert [p.name for p in tmp_path.glob(".cluster.yaml*")] == []


async def test_a_file_changed_on_disk_since_opening_is_not_overwritten(tmp_path: Path) -> None:
    """Another editor saved the file while the wizard had it open: Write shows the error and
    keeps their edit; the wizard's change is not lost either (still unsaved on screen)."""
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    theirs = COMMENTED.replace("# two for now", "# edited elsewhere")
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _open(pilot, app, path)
        name = wizard.query_one("#name", Input)
        name.focus()
        await pilot.press("end", *"-2")
        path.write_text(theirs)
        wizard.step = "review"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause(0.5)
        assert wizard.dirty()
    assert path.read_text() == theirs


async def test_a_new_cluster_goes_to_cluster_yaml_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        wizard.step = "review"
        await pilot.pause()
        assert wizard.query_one("#out-path", Input).value == str(tmp_path / "cluster.yaml")
        assert "New file" in _preview(wizard)
