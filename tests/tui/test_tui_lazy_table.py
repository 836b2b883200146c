"""LazyTable: only the rows on screen are turned into cells; keys, mouse and the selection
behave like the DataTable it replaces; cell text is shown as typed."""

from __future__ import annotations

from typing import Any

import pytest
from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult

from npa_sop_tui.tui.widgets.lazy_table import Column, LazyTable, keep_end

from testkit.tui import screen_text, wait_for

pytestmark = pytest.mark.tui
N = 10_000


class TableApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.built: list[str] = []
        self.selected: list[str] = []

    def compose(self) -> ComposeResult:
        yield LazyTable(id="t")

    def cells(self, item: str) -> tuple[Any, ...]:
        self.built.append(item)
        return (item, Text("idle", style="bold green"), f"[/] {item} \x1b[31m")

    def on_mount(self) -> None:
        table = self.query_one(LazyTable)
        table.set_columns([Column("name", "Name", 10), Column("state", "State", 6),
                           Column("note", "Note", 20)])  # fmt: skip
        table.show_rows([f"n{i}" for i in range(N)], key=str, cells=self.cells)
        table.focus()

    def on_lazy_table_row_selected(self, event: LazyTable.RowSelected) -> None:
        self.selected.append(event.key)


async def test_only_visible_rows_are_built_and_keys_move_the_cursor() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LazyTable)
        await pilot.pause()
        text = screen_text(app)
        assert "Name" in text and "n0 " in text and "[/] n0" in text  # markup-like: as typed
        assert "\x1b" not in text
        built = set(app.built)
        assert 0 < len(built) <= 12, f"{len(built)} rows built for a 12-line screen"

        await pilot.press("end")
        assert table.cursor_row == N - 1 and table.selected_key() == f"n{N - 1}"
        await pilot.pause()
        assert f"n{N - 1} " in screen_text(app)  # scrolled to it
        await pilot.press("home", "down", "down", "pagedown")
        assert table.cursor_row == 2 + table._page()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.selected == [f"n{2 + table._page()}"])
        assert len(set(app.built)) < 100  # still a handful of screens, not 10,000 rows

        # new items: the highlighted key stays highlighted wherever it moved
        key = table.selected_key()
        table.show_rows([f"n{i}" for i in reversed(range(N))], key=str, cells=app.cells)
        assert table.selected_key() == key and table.row_count == N
        assert [str(c) for c in table.get_row(key)][:2] == [key, "idle"]


async def test_a_click_moves_the_cursor_then_selects() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LazyTable)
        await pilot.pause()
        await pilot.click(LazyTable, offset=(2, 3))  # line 3 = row 2 (line 0 is the header)
        assert table.cursor_row == 2 and not app.selected
        await pilot.click(LazyTable, offset=(2, 3))
        await wait_for(pilot, lambda: app.selected == ["n2"])
        await pilot.click(LazyTable, offset=(2, 0))  # the header selects nothing
        assert table.cursor_row == 2


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("module.k8s.nebius_mk8s_v1_node_group.worker[0]", 20, "…ode_group.worker[0]"),
        ("short", 20, "short"),
        ("exactly-ten", 11, "exactly-ten"),
        ("abcdef", 1, "…"),
        ("日本語のノード", 7, "…ノード"),  # wide characters: two cells each
    ],
)
def test_keep_end_keeps_the_end_of_what_does_not_fit(text: str, width: int, shown: str) -> None:
    assert keep_end(text, width) == shown
    assert cell_len(keep_end(text, width)) <= width


class FillApp(App[None]):
    ADDRESS = 'module.slurm.module.nodesets.helm_release.worker_nodeset["gpu-rack0"]'

    def compose(self) -> ComposeResult:
        yield LazyTable(id="t")

    def on_mount(self) -> None:
        table = self.query_one(LazyTable)
        table.set_columns([Column("state", "State", 9),
                           Column("addr", "Resource", 24, fill=True, keep_end=True)])  # fmt: skip
        table.show_rows([self.ADDRESS], key=str, cells=lambda item: ("done", item))


async def test_a_fill_column_takes_the_width_left_and_never_scrolls_sideways() -> None:
    """A deploy's resource addresses at 80 columns: the address column gets what the others
    leave, the table is no wider than the screen, and a long address keeps its end."""
    app = FillApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(LazyTable)
        await pilot.pause()
        room = table.scrollable_content_region.width
        assert table.virtual_size.width == room  # nothing to scroll to
        addr = table.shown_columns[1]
        assert addr.width == room - (9 + 2) - 2
        text = screen_text(app)
        assert f"…{FillApp.ADDRESS[-(addr.width - 1) :]}" in text  # the end, with its name

        await pilot.resize_terminal(120, 12)
        await wait_for(pilot, lambda: table.scrollable_content_region.width > room)
        await wait_for(pilot, lambda: table.shown_columns[1].width > addr.width)
        await pilot.pause()
        assert FillApp.ADDRESS in screen_text(app)  # wide enough now: whole
        assert table.virtual_size.width == table.scrollable_content_region.width

        await pilot.resize_terminal(30, 12)
        await wait_for(pilot, lambda: table.shown_columns[1].width == 24)  # never below its width
