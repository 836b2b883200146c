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
from npa_sop_tui.tui.widgets.lazy_table import Column, LazyTable
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


class _Kept(PlainTable):
    KEEP = ("name", "state", "notes", "role")


class _KeptLazy(LazyTable):
    KEEP = ("name", "state", "cpus", "reason")


class _NarrowApp(App[None]):
    CSS = "#t { width: 24; } #l { width: 34; }"

    def compose(self) -> ComposeResult:
        yield _Kept(id="t")
        yield _KeptLazy(id="l")


async def test_a_narrow_table_shows_whole_columns_only() -> None:
    """Narrower than its columns, a KEEP table shows the columns that fit whole (preferring
    KEEP's order), names the rest in its tooltip, and shows them again once there is room."""
    app = _NarrowApp()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(_Kept)
        for label in ("Name", "Role", "State", "Notes"):
            table.add_column(label, key=label.lower())
        table.sync({"a": ("alpha", "worker", "ready", "ok"), "b": ("b", "system", "ready", "")})
        lazy = app.query_one(_KeptLazy)
        lazy.set_columns(
            [Column("name", "Name", 6), Column("reason", "Reason", 28), Column("cpus", "Cpus", 9),
             Column("state", "State", 10)]
        )  # fmt: skip
        lazy.show_rows(["n1"], key=str, cells=lambda n: (n, "a reason", "0/8", "idle"))
        await pilot.pause()
        assert [str(c.label) for c in table.columns.values()] == ["Name", "State", "Notes"]
        assert [table.get_row_at(i) for i in range(2)] == [
            [Text("alpha"), Text("ready"), Text("ok")],
            [Text("b"), Text("ready"), Text("")],
        ]
        assert "Role" in str(table.tooltip)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert [c.label for c in lazy.shown_columns] == ["Name", "Cpus", "State"]
        assert "Reason" in str(lazy.tooltip)
        assert lazy.virtual_size.width <= lazy.scrollable_content_region.width
        assert not column_misfits(table)
        table.styles.width = lazy.styles.width = 80
        await pilot.pause()
        await pilot.pause()
        assert len(table.columns) == 4 and table.tooltip is None
        assert len(lazy.shown_columns) == 4 and lazy.tooltip is None
