"""The worker pools of the spec being edited: add, edit, duplicate, remove."""

from __future__ import annotations

import copy
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable

from npa_sop_tui.widgets.wizard.pool_editor import capacity_mode


class PoolList(Vertical):
    """A table of pools plus the buttons that change them. Owns no spec: it edits `pools`."""

    class PoolAdded(Message):
        def __init__(self, pool: dict[str, Any]) -> None:
            super().__init__()
            self.pool = pool

    class PoolEdited(Message):
        def __init__(self, index: int, pool: dict[str, Any]) -> None:
            super().__init__()
            self.index = index
            self.pool = pool

    class PoolRemoved(Message):
        def __init__(self, index: int, name: str) -> None:
            super().__init__()
            self.index = index
            self.name = name

    class EditRequested(Message):
        """The user wants the editor for pool `index` (None = a new pool)."""

        def __init__(self, index: int | None, template: dict[str, Any] | None = None) -> None:
            super().__init__()
            self.index = index
            self.template = template

    def __init__(self, pools: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pools = pools

    def compose(self) -> ComposeResult:
        yield DataTable(id="pool-table", cursor_type="row", zebra_stripes=True)
        with Horizontal(classes="buttons"):
            yield Button("Add", id="pool-add", variant="primary")
            yield Button("Edit", id="pool-edit")
            yield Button("Duplicate", id="pool-dup")
            yield Button("Remove", id="pool-remove", variant="error")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Name", "Platform", "Preset", "Size", "Capacity", "Fabric", "Cache")
        self.refresh_rows()

    def refresh_rows(self) -> None:
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        for pool in self.pools:
            cache = f"{pool.get('docker_cache_gib', 372)} GiB" if pool.get("docker_cache") else "—"
            table.add_row(
                pool.get("name", "?"),
                pool.get("platform", "cpu-d3"),
                pool.get("preset", "8vcpu-32gb"),
                str(pool.get("size", 1)),
                capacity_mode(pool),
                pool.get("fabric") or "—",
                cache,
            )
        if self.pools:
            table.move_cursor(row=min(max(cursor, 0), len(self.pools) - 1))
        has = bool(self.pools)
        for bid in ("#pool-edit", "#pool-dup", "#pool-remove"):
            self.query_one(bid, Button).disabled = not has

    def selected_index(self) -> int | None:
        table = self.query_one(DataTable)
        return table.cursor_row if self.pools and table.cursor_row >= 0 else None

    def add(self, pool: dict[str, Any]) -> None:
        self.pools.append(pool)
        self.refresh_rows()
        self.query_one(DataTable).move_cursor(row=len(self.pools) - 1)
        self.post_message(self.PoolAdded(pool))

    def replace(self, index: int, pool: dict[str, Any]) -> None:
        self.pools[index] = pool
        self.refresh_rows()
        self.post_message(self.PoolEdited(index, pool))

    @on(Button.Pressed, "#pool-add")
    def _add(self) -> None:
        self.post_message(self.EditRequested(None))

    @on(DataTable.RowSelected)
    @on(Button.Pressed, "#pool-edit")
    def _edit(self) -> None:
        index = self.selected_index()
        if index is not None:
            self.post_message(self.EditRequested(index))

    @on(Button.Pressed, "#pool-dup")
    def _duplicate(self) -> None:
        index = self.selected_index()
        if index is None:
            return
        template = copy.deepcopy(self.pools[index])
        names = {p.get("name") for p in self.pools}
        base = str(template.get("name", "pool"))
        n = 2
        while f"{base}-{n}" in names:
            n += 1
        template["name"] = f"{base}-{n}"
        self.post_message(self.EditRequested(None, template))

    @on(Button.Pressed, "#pool-remove")
    def _remove(self) -> None:
        index = self.selected_index()
        if index is None:
            return
        pool = self.pools.pop(index)
        self.refresh_rows()
        self.post_message(self.PoolRemoved(index, str(pool.get("name", ""))))
