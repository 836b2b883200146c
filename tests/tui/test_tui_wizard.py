"""Wizard flows: happy path writes a valid file, invalid input is blocked, files round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets import Button, Input, Select, Static

from npa_sop_tui.cli.entry import main as npa_main
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor

from testkit.tui import click, home_loaded, wait_for

pytestmark = pytest.mark.tui


async def _type(pilot, selector: str, text: str) -> None:  # type: ignore[no-untyped-def]
    widget = pilot.app.screen.query_one(selector, Input)
    widget.focus()
    widget.value = ""
    await pilot.press(*text)


async def _add_pool(pilot, name: str, size: str = "2") -> None:  # type: ignore[no-untyped-def]
    wizard = pilot.app.screen
    wizard.step = "pools"
    await pilot.pause()
    await click(pilot, "#pool-add")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PoolEditor))
    await _type(pilot, "#pool-name", name)
    await _type(pilot, "#pool-size", size)
    await click(pilot, "#pool-save")
    await pilot.pause()


async def test_wizard_happy_path_writes_a_file_that_validates(tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    messages: list[object] = []
    app = NpaSopApp()
    async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
        await home_loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await _type(pilot, "#name", "mycluster")
        wizard.query_one("#region", Select).value = "eu-north1"
        await pilot.pause()
        await pilot.press("ctrl+n")
        assert wizard.step == "control"
        # presets offered to the system role are the ones sufficient at this tier only
        system = wizard.query_one("#sys-preset", Select)
        offered = [v for _, v in system._options if isinstance(v, str)]
        assert offered and "4vcpu-16gb" not in offered and "16vcpu-64gb" in offered
        assert "sizing tier XS" in str(wizard.query_one("#tier-note", Static).render())
        await _add_pool(pilot, "cpu", "2")
        assert isinstance(app.screen, WizardScreen)
        assert [p["name"] for p in wizard.data["workers"]] == ["cpu"]
        wizard.step = "review"
        await pilot.pause()
        assert not [i for i in wizard.issues if i.blocking], wizard.issues
        totals = str(wizard.query_one("#totals", Static).render())
        assert "nodes 2" in totals and "vCPU 16" in totals
        await _type(pilot, "#out-path", str(out))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: out.exists())
        # writing asks nothing more: deploy is one key away on the review step
        await wait_for(pilot, lambda: wizard.focused is wizard.query_one("#deploy"))
        assert app.screen is wizard
    assert any(isinstance(m, WizardScreen.SpecWritten) for m in messages)
    assert npa_main(["soperator", "validate", "--spec", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert data["name"] == "mycluster" and data["workers"][0]["size"] == 2


async def test_invalid_input_is_blocked_with_a_message(tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    app = NpaSopApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await _type(pilot, "#name", "Bad_Name")
        await pilot.pause()
        # the error sits right under the name field, not below the whole form
        inline = str(wizard.query_one("#name-error", Static).render())
        assert "name" in inline and "error" in inline
        wizard.query_one("#region", Select).value = "eu-north1"
        # the pool editor refuses a bad pool name and says why
        wizard.step = "pools"
        await pilot.pause()
        await click(pilot, "#pool-add")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        await _type(pilot, "#pool-name", "has space")
        await click(pilot, "#pool-save")
        await pilot.pause()
        assert isinstance(app.screen, PoolEditor)
        assert "lowercase" in str(app.screen.query_one("#pool-error", Static).render())
        await _type(pilot, "#pool-name", "cpu")
        # the size field accepts digits only: letters are impossible to enter
        await _type(pilot, "#pool-size", "x3")
        assert app.screen.query_one("#pool-size", Input).value == "3"
        await click(pilot, "#pool-save")
        await pilot.pause()
        assert isinstance(app.screen, WizardScreen)
        # the name is still invalid: writing is refused and nothing is written
        wizard.step = "review"
        await pilot.pause()
        assert wizard.query_one("#write", Button).disabled
        # ctrl+s still answers: it says what blocks writing (never silent)
        assert wizard.check_action("write", ()) is True
        notes: list[str] = []
        original = app.notify
        app.notify = lambda message, **kw: (notes.append(message), original(message, **kw))  # type: ignore[method-assign]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert any(n.startswith("Not written: name: cluster name") for n in notes), notes
        assert not out.exists()
        assert "name" in str(wizard.query_one("#findings", Static).render())


ROUND_TRIP = """\
apiVersion: npa.soperator/v0.0.1
name: keep
region: us-central1
telemetry: true
jail_size_gib: 1024
control_plane:
  system: {min_size: 3, max_size: 10}
  login: {preset: 16vcpu-64gb}
workers:
  - name: cpu8
    platform: cpu-d3
    preset: 8vcpu-32gb
    boot_disk_gib: 1024
    docker_cache: true
    docker_cache_gib: 930
  - name: gpu
    platform: gpu-b200-sxm
    preset: 8gpu-160vcpu-1792gb
    size: 2
    fabric: us-central1-a
    preemptible: true
accounting: false
slurm_operator_version: "4.1.6"
k8s_version: "1.34"
node_group_version: "72"
"""


async def test_editing_an_existing_file_round_trips_unshown_settings(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(ROUND_TRIP)
    before = yaml.safe_load(ROUND_TRIP)
    app = NpaSopApp(spec_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        assert wizard.query_one("#name", Input).value == "keep"
        # edit the first pool through the editor: change its size only
        wizard.step = "pools"
        await pilot.pause()
        wizard.query_one("#pool-table").move_cursor(row=0)
        await click(pilot, "#pool-edit")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        editor = app.screen
        # a Select takes its initial value when it mounts, after the screen is pushed
        await wait_for(pilot, lambda: editor.query_one("#pool-cache-size", Select).value == 930)
        await _type(pilot, "#pool-size", "4")
        await click(pilot, "#pool-save")
        await pilot.pause()
        wizard.step = "review"
        await pilot.pause()
        await pilot.press("ctrl+s")  # the opened file: written in place, no overwrite question
        await wait_for(pilot, lambda: "size: 4" in path.read_text())
    after = yaml.safe_load(path.read_text())
    assert after["workers"][0]["size"] == 4
    after["workers"][0].pop("size")
    assert after["workers"] == before["workers"], (after["workers"], before["workers"])
    assert after == before
