"""Home screen: inventory rows, bindings that grey out, remappable keys, sandbox offer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp

from testkit.tui import click, home_loaded, wait_for

pytestmark = pytest.mark.tui


def _entry(name: str, state: str, region: str = "eu-north1") -> None:
    entry = InventoryEntry(name=name, region=region, kube_context=f"nebius-{name}-slurm")
    entry.state = state  # type: ignore[assignment]
    entry.record(
        OperationRecord(
            id=f"op-{name}",
            kind="deploy",
            started=time.time(),
            ended=time.time(),
            result="ok" if state == "deployed" else "failed",
        )
    )
    inventory.save(entry)


async def test_home_lists_inventory_with_state_and_last_operation(npa_home: Path) -> None:
    _entry("alpha", "deployed")
    _entry("beta", "failed", region="us-central1")
    app = NpaSopApp()
    async with app.run_test(size=(120, 30)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: app.cluster == "alpha")  # the first row is highlighted
        assert isinstance(app.screen, HomeScreen)
        table = app.screen.query_one("#clusters", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[0] for r in rows] == ["alpha", "beta"]
        assert "failed" in rows[1][1]  # the state right after the name: never cut
        assert rows[1][2] == "us-central1"
        assert rows[0][3].startswith("deploy ok")
        # a cluster is highlighted: its actions are available, and the header names it
        assert app.screen.check_action("deploy", ()) is True
        assert app.cluster == "alpha"


async def test_home_without_clusters_greys_out_cluster_actions_and_offers_sandbox(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("NPA_TENANT_ID", "NPA_PROJECT_ID", "NPA_SUBNET_ID"):
        monkeypatch.delenv(var, raising=False)
    app = NpaSopApp()
    async with app.run_test(size=(100, 24)) as pilot:
        home = await home_loaded(pilot)
        for action in ("deploy", "status", "destroy", "edit"):
            assert home.check_action(action, ()) is None
        offer = str(home.query_one("#sandbox-offer", Static).render())
        assert "SANDBOX" in offer and "No cloud identity" in offer
        # the real config file (NPA_HOME is set here), and everything a deploy needs
        assert f"No cloud identity in {npa_home / 'config.yaml'}" in offer
        assert "subnet_id" in offer
        # pressing a greyed-out key does nothing
        await pilot.press("d")
        assert isinstance(app.screen, HomeScreen)


async def test_keys_are_remappable_by_binding_id() -> None:
    app = NpaSopApp(keymap={"home.new": "w"})
    async with app.run_test(size=(100, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("n")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WizardScreen)


async def test_command_palette_offers_every_app_action() -> None:
    app = NpaSopApp()
    async with app.run_test(size=(100, 24)) as pilot:
        await home_loaded(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("New cluster", "Open cluster.yaml", "Sandbox"):
            assert title in titles


async def test_quit_during_an_operation_asks_first() -> None:
    from npa_sop_tui.screens.modals import ConfirmModal

    app = NpaSopApp()
    async with app.run_test(size=(100, 24)) as pilot:
        await home_loaded(pilot)
        # pretend the current screen runs an operation (the deploy screen answers the same way)
        app.screen.operation_running = lambda: True  # type: ignore[attr-defined]
        app.screen.operation_label = "The deploy of x"  # type: ignore[attr-defined]
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        assert "The deploy of x is running" in str(app.screen.query_one("#question").render())
        await click(pilot, "#no")
        await pilot.pause()
        assert app.is_running
    assert app.return_code in (None, 0)


async def test_quit_with_nothing_running_exits_at_once() -> None:
    app = NpaSopApp()
    async with app.run_test(size=(100, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0


async def test_palette_lists_the_current_screens_enabled_keys(npa_home: Path) -> None:
    _entry("alpha", "deployed")
    app = NpaSopApp()
    async with app.run_test(size=(120, 30)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: app.cluster == "alpha")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Deploy alpha", "Status of alpha", "Destroy alpha", "Reload"} <= set(titles)
        status = "Status of alpha"
        command = next(c for c in app.get_system_commands(app.screen) if c.title == status)
        result = command.callback()
        if result is not None:  # a key's command runs the action (a coroutine)
            await result
        await pilot.pause()
        from npa_sop_tui.screens.status import StatusScreen

        assert isinstance(app.screen, StatusScreen)


async def test_palette_puts_ours_first_once_each_without_cursor_keys(npa_home: Path) -> None:
    _entry("alpha", "deployed")
    app = NpaSopApp()
    async with app.run_test(size=(120, 30)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: app.cluster == "alpha")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles[:2] == ["New cluster", "Open cluster.yaml"]
        assert "New" not in titles and "Open" not in titles  # the same actions, once
        assert not {"Bottom", "Top", "Cursor down", "Cursor up"} & set(titles)
        assert len(titles) == len(set(titles))
        ours = titles.index("Deploy alpha")
        assert all(ours < titles.index(t) for t in ("Quit", "Keys") if t in titles)


async def test_help_says_where_the_logs_are(npa_home: Path) -> None:
    from npa_sop_tui.screens.modals import TextModal

    app = NpaSopApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("question_mark")
        # pushed is not yet composed: wait for the note itself
        await wait_for(
            pilot, lambda: isinstance(app.screen, TextModal) and app.screen.query("#text-note")
        )
        note = str(app.screen.query_one("#text-note", Static).render())
        assert "tui-errors.log" in note and "npa-debug.log" in note and "operations" in note
