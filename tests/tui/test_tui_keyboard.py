"""The keyboard alone walks the app: every step focuses its first field, the pools step has
keys (a/enter/c/x) shown in the footer, the editor focuses its name field, and the whole
wizard can be completed with key presses only, ending in a file `validate` accepts."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select, Static

from npa_sop_tui.cli.entry import main as npa_main
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.modals import ConfirmModal, TextModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import ResourceTable
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolTable

from .fakes import FixedBackend
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui


def _footer_keys(app: NpaSopApp) -> dict[str, bool]:
    """Binding id → enabled, for what the footer of the current screen shows."""
    return {
        active.binding.id: active.enabled
        for active in app.screen.active_bindings.values()
        if active.binding.show and active.binding.id
    }


async def _new_wizard(pilot: Any, name: str, region_downs: int) -> WizardScreen:
    """Home → n → name → region, by keys; returns the wizard on step 1."""
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
    wizard = pilot.app.screen
    assert wizard.focused is wizard.query_one("#name")
    await pilot.press(*name, "enter")  # enter moves on to the region
    assert wizard.focused is wizard.query_one("#region")
    await pilot.press("enter", *["down"] * region_downs, "enter")
    await pilot.pause()
    return wizard


async def test_pools_step_keys_open_the_editor_focused_and_footer_lists_them() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        wizard = await _new_wizard(pilot, "keys", region_downs=1)  # eu-north1
        assert wizard.data["region"] == "eu-north1"
        await pilot.press("ctrl+n", "ctrl+n")
        assert wizard.step == "pools"
        # focus is on the table, the empty state says what to press
        assert isinstance(wizard.focused, PoolTable)
        assert "Press a to add" in str(wizard.query_one("#pool-empty", Static).render())
        keys = _footer_keys(app)
        assert keys["pools.add"] is True
        # nothing to edit, duplicate or remove yet: shown, greyed
        assert keys["pools.edit"] is False and keys["pools.remove"] is False
        assert "pools.duplicate" in keys

        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        editor = app.screen
        assert editor.focused is editor.query_one("#pool-name")
        assert {"pool.save", "pool.cancel"} <= set(_footer_keys(app))
        assert "ctrl+s" in str(editor.query_one("#pool-keys", Static).render())
        # enter moves to the next field instead of saving half a form
        await pilot.press("enter")
        assert editor.focused is editor.query_one("#pool-platform")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert [p["name"] for p in wizard.data["workers"]] == ["pool1"]
        assert not wizard.query_one("#pool-empty").display
        assert _footer_keys(app)["pools.remove"] is True

        # c duplicates into the editor with a fresh name; esc cancels it
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        assert app.screen.query_one("#pool-name", Input).value == "pool1-2"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert len(wizard.data["workers"]) == 1

        # enter edits the highlighted pool; a bad size keeps the editor open, focused there
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        editor = app.screen
        editor.query_one("#pool-size", Input).value = "0"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is editor
        assert editor.focused is editor.query_one("#pool-size")
        assert "Size" in str(editor.query_one("#pool-error", Static).render())
        await pilot.press("backspace", "3", "ctrl+s")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert wizard.data["workers"][0]["size"] == 3

        # x asks first; n keeps the pool, x then y removes it
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert len(wizard.data["workers"]) == 1
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert wizard.data["workers"] == []
        assert wizard.query_one("#pool-empty").display


async def test_region_and_platform_choices_say_what_they_offer() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        wizard = await _new_wizard(pilot, "offer", region_downs=7)  # us-central1
        assert wizard.data["region"] == "us-central1"
        region = wizard.query_one("#region", Select)
        labels = {value: str(label) for label, value in region._options}
        assert "gpu-h200-sxm" in labels["us-central1"] and "gpu-b200-sxm" in labels["us-central1"]
        note = str(wizard.query_one("#region-note", Static).render())
        assert "gpu-b200-sxm: 1 or 8 GPUs" in note and "us-central1-a" in note
        await pilot.press("ctrl+n", "ctrl+n", "a")
        await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
        platform = app.screen.query_one("#pool-platform", Select)
        offered = {value: str(label) for label, value in platform._options}
        assert "8 GPUs" in offered["gpu-b200-sxm"] and "vCPU" in offered["cpu-d3"]
        assert "gpu-h100-sxm" not in offered  # not in this region


@pytest.mark.terraform  # deploys the written file up to the plan
async def test_the_whole_wizard_by_keys_only_writes_a_valid_file_and_offers_deploy(
    sandbox_backend: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = NpaSopApp(sandbox_backend)
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await _new_wizard(pilot, "bykeys", region_downs=1)
        await pilot.press("ctrl+n")  # control plane: the defaults are fine
        await pilot.press("ctrl+n")  # pools
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PoolEditor))
        await pilot.press("ctrl+u", *"cpu", "tab")  # name, then platform (cpu-d3)
        await pilot.press("tab", "tab")  # preset (8vcpu-32gb) → size
        await pilot.press("backspace", "2", "ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        await pilot.press("ctrl+n", "ctrl+n")  # options → review
        wizard = pilot.app.screen
        assert isinstance(wizard, WizardScreen) and wizard.step == "review"
        # a new cluster goes to ./cluster.yaml (in the sandbox too), and it says where
        target = tmp_path / "cluster.yaml"
        assert wizard.query_one("#out-path", Input).value == str(target)
        assert str(target) in str(wizard.query_one("#out-note", Static).render())
        assert _footer_keys(app)["wizard.deploy"] is True  # valid: d would write, then deploy
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: target.is_file())
        # no question after writing: the review step says where and how to deploy
        assert pilot.app.screen is wizard
        note = str(wizard.query_one("#out-note", Static).render())
        assert f"Written to {target}. Press d to deploy it." in note
        assert npa_main(["soperator", "validate", "--spec", str(target)]) == 0
        assert wizard.focused is wizard.query_one("#deploy")
        assert _footer_keys(app)["wizard.deploy"] is True
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DeployScreen))
        deploy = pilot.app.screen
        # the wizard made way: esc from deploy goes home, not back into the wizard
        assert not any(isinstance(s, WizardScreen) for s in pilot.app.screen_stack)
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED, timeout=90)
        assert deploy.plan is not None and deploy.plan.add > 0
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))


@pytest.mark.parametrize("valid", [True, False], ids=["valid", "no-pools"])
async def test_d_on_the_review_step_writes_a_valid_form_then_deploys_it(
    valid: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await _new_wizard(pilot, "oneshot", region_downs=1)
        await pilot.press("ctrl+n", "ctrl+n")
        if valid:
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, PoolEditor))
            await pilot.press("ctrl+u", *"cpu", "ctrl+s")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
        await pilot.press("ctrl+n", "ctrl+n")
        wizard = pilot.app.screen
        assert isinstance(wizard, WizardScreen) and wizard.step == "review"
        wizard.set_focus(None)  # not in the path field: d is a key here, not text
        await pilot.pause()
        assert bool(_footer_keys(app).get("wizard.deploy")) is valid
        target = tmp_path / "cluster.yaml"
        assert not target.exists()
        await pilot.press("d")
        if valid:
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, DeployScreen))
            assert npa_main(["soperator", "validate", "--spec", str(target)]) == 0
        else:  # no worker pool: an error, so nothing is written and nothing deploys
            await pilot.pause()
            assert pilot.app.screen is wizard and not target.exists()


async def test_leaving_or_quitting_the_wizard_with_unwritten_changes_asks() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        # an untouched new cluster's empty name is not flagged yet
        assert not wizard.query_one("#step-findings").display
        await pilot.press("escape")  # nothing changed: leaves at once
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await pilot.press(*"draft")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is wizard)
        await pilot.press("ctrl+n", "ctrl+n", "q")  # q on the pools table
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        assert "not written" in str(app.screen.query_one("#question", Static).render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert app.is_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_dashboard_keys_filter_esc_help_and_ssh() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.status is not None)
        table = screen.query_one(SlurmNodesTable)
        await pilot.press("slash", *"cpu-1")
        assert [n.name for n in table.visible()] == ["cpu-1"]
        # esc in the filter clears it and stays on the dashboard; the next esc leaves
        await pilot.press("escape")
        assert app.screen is screen and table.filter_text == ""
        assert len(table.visible()) == 2 and screen.focused is table
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        keys = str(app.screen.query_one("#text-body", Static).render())
        assert "Filter Slurm nodes" in keys and "SSH command" in keys and "+ / =" in keys
        assert "Cursor" not in keys  # widgets' own cursor keys are not the screen's keys
        await pilot.press("escape")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        assert "ssh root@203.0.113.7" in str(app.screen.query_one("#text-body", Static).render())
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_apply_moves_focus_off_the_log_filter_so_c_cancels(tmp_path: Path) -> None:
    from testkit.tui import CPU_SPEC

    path = tmp_path / "cluster.yaml"
    path.write_text(CPU_SPEC)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        spec, _ = app.backend.check(app.backend.load_spec(path))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
        # the plan hands focus to Apply (deferred until the button is enabled)
        await wait_for(pilot, lambda: screen.focused is screen.query_one("#apply"))
        await pilot.press("a")  # a safe plan applies at once: the summary was the question
        await wait_for(pilot, lambda: screen.stage == OperationStage.APPLYING)
        await pilot.pause()
        assert isinstance(screen.focused, ResourceTable)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")  # keep going
        await wait_for(pilot, lambda: app.screen is screen)
        assert screen.stage == OperationStage.APPLYING


async def test_a_destructive_plan_still_asks_naming_what_it_loses(tmp_path: Path) -> None:
    from npa_sop_tui.events import PlanSummary

    from testkit.tui import CPU_SPEC

    class Destructive(FixedBackend):
        async def plan(self, spec: Any, sink: Any, *, allow_unknown: bool = False) -> PlanSummary:
            return PlanSummary(
                operation_id="op",
                phase="plan",
                add=1,
                change=0,
                remove=1,
                destructive=["module.k8s.worker_v2[cpu-0]"],
            )

    path = tmp_path / "cluster.yaml"
    path.write_text(CPU_SPEC)
    app = NpaSopApp(Destructive())
    async with app.run_test(size=(100, 30)) as pilot:
        spec, _ = app.backend.check(app.backend.load_spec(path))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        question = str(app.screen.query_one("#question", Static).render())
        assert "DELETES or REPLACES" in question and "worker_v2[cpu-0]" in question
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is screen)
        assert screen.stage == OperationStage.PLANNED  # nothing applied


async def test_dashboard_keyboard_path_and_the_run_dialogs_keys(npa_home: Path) -> None:
    """The dashboard's first focus is the Slurm nodes table (enter: a node's detail, one
    key); enter on a node group shows that pool's Slurm nodes; the run dialog's footer names
    its own keys, and enter in its Command field runs the command every time it opens."""
    from textual.widgets import Input

    from npa_sop_tui.screens.job_screen import JobScreen
    from npa_sop_tui.screens.node_detail import NodeDetailScreen
    from npa_sop_tui.screens.run_dialog import RunDialog
    from npa_sop_tui.screens.status import StatusScreen
    from npa_sop_tui.tui.widgets.status.panels import NodeGroupsTable, SlurmNodesTable

    from .test_tui_operator import OpsBackend, _dashboard

    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        dashboard = await _dashboard(pilot, app)
        nodes = dashboard.query_one(SlurmNodesTable)
        await wait_for(pilot, lambda: app.focused is nodes)  # Textual's first focus, too
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dashboard)

        groups = dashboard.query_one(NodeGroupsTable)
        groups.focus()
        groups.move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.focused is nodes)
        assert dashboard.query_one("#node-filter", Input).value == "^cpu-"
        assert nodes.row_count == 2

        for round_ in range(2):  # the second opening took the Enter too
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
            dialog = app.screen
            # the bottom row as painted (the dashboard shows through around the dialog):
            # the dialog's keys, none of the dashboard's behind it
            await wait_for(pilot, lambda: "^s Run" in _painted_bottom_row(app))
            bottom = _painted_bottom_row(app)
            assert "esc Cancel" in bottom and "Jobs" not in bottom, bottom
            dialog.query_one("#run-template").value = "command"
            dialog.query_one("#run-command", Input).focus()
            await pilot.press(*f"echo {round_}", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, JobScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))


def _painted_bottom_row(app: NpaSopApp) -> str:
    """The terminal's last row as the app paints it, the screens below a dialog included."""
    from rich.console import Console

    console = Console(width=app.size.width, record=True, file=io.StringIO())
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text().splitlines()[-1]
