"""Every table's columns follow its content after every kind of update: rows added, a cell
grown or shrunk, rows removed, the table cleared and refilled."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from npa_sop_tui.screens.home import ClusterTable
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow
from npa_sop_tui.tui.widgets.table import PlainTable
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolList, PoolTable

from testkit.tui import column_misfits, home_loaded, wait_for

pytestmark = pytest.mark.tui


class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield PlainTable(id="t")


async def test_synced_table_columns_follow_content() -> None:
    app = _TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(PlainTable)
        table.add_columns("Name", "State", "Last operation")
        steps: list[dict[str, tuple[object, ...]]] = [
            {"a": ("a", "ready", "deploy ok")},  # rows added
            {"a": ("a", Text("destroyed", style="bold"), "destroy ok by root@vm-1")},  # grown
            {"a": ("a", "ok", "-"), "bb": ("bb", "ready", "x")},  # shrunk, one added
            {"bb": ("bb", "ready", "x")},  # one removed
            {},  # all gone
            {"cluster-with-a-long-name": ("cluster-with-a-long-name", "ready", "")},
        ]
        for rows in steps:
            table.sync(rows)
            await pilot.pause()
            assert column_misfits(table) == [], rows


async def test_pool_table_columns_follow_content(npa_home: Path) -> None:
    """Adding, duplicating, editing and removing pools: no cut names, no misaligned rows."""
    app = NpaSopApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        wizard.step = "pools"
        await pilot.pause()
        pools = wizard.query_one(PoolList)
        table = wizard.query_one(PoolTable)
        long_pool = {
            "name": "gpu-h100-workers",
            "platform": "gpu-h100-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "size": 2,
            "preemptible": True,
        }
        changes = [
            lambda: pools.pools.append(dict(long_pool)),
            lambda: pools.pools.append({**long_pool, "name": "gpu-h100-workers-copy"}),
            lambda: pools.pools[0].update(name="g"),
            lambda: pools.pools.pop(),
            lambda: pools.pools.pop(),
        ]
        for change in changes:
            change()
            pools.refresh_rows()
            await pilot.pause()
            assert column_misfits(table) == []


async def test_home_list_columns_follow_content() -> None:
    """The home list after a cluster's state and last operation change (a destroy)."""
    app = _TableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = ClusterTable()
        await app.mount(table)
        table.show([_row("demo", "ready", "deploy ok")])
        await pilot.pause()
        table.show([_row("demo", "destroyed", "destroy ok 2m ago by root@vm-1")])
        await pilot.pause()
        assert column_misfits(table) == []


def _row(name: str, state: str, last: str) -> ClusterRow:
    return ClusterRow(name=name, state=state, region="eu-north1", last_operation=last)
