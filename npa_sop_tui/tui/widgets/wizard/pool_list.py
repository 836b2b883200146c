"""The worker pools of the spec being edited: add, edit, duplicate, remove.

Every action has a key (shown in the footer while the table has focus) and a button for
the mouse; both post the same messages, so the wizard handles one flow.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Static

from npa_sop_tui.tui.catalog_view import capacity_mode
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.table import PlainTable

EMPTY_HINT = (
    "No worker pools yet. Press [b]a[/b] to add one: a pool is a group of identical "
    "Slurm worker nodes (platform, preset, size)."
)


class PoolTable(PlainTable):
    """The pools, one row each. Enter edits the highlighted pool."""

    # the pool keys live here (focus starts on the table) so the footer lists them in this
    # order; enter replaces DataTable's own select_cursor so the footer says what it does
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "pool('add')", "Add", id="pools.add"),
        Binding("enter", "pool('edit')", "Edit", id="pools.edit"),
        Binding("c", "pool('duplicate')", "Duplicate", id="pools.duplicate"),
        Binding("x,delete", "pool('remove')", "Remove", id="pools.remove"),
        # DataTable's navigation keys, after ours so the footer starts with "a Add pool"
        *[b for b in DataTable.BINDINGS if isinstance(b, Binding) and b.key != "enter"],
    ]
    inherit_bindings = False

    def _pool_list(self) -> PoolList | None:
        parent = self.parent
        return parent if isinstance(parent, PoolList) else None

    def action_pool(self, what: str) -> None:
        pool_list = self._pool_list()
        if pool_list is not None:
            getattr(pool_list, f"action_{what}")()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        pool_list = self._pool_list()
        if action == "pool" and parameters and parameters[0] != "add" and pool_list is not None:
            return True if pool_list.pools else None  # greyed until there is a pool
        return super().check_action(action, parameters)


class PoolList(Guarded, Vertical):
    """A table of pools plus the keys and buttons that change them. Edits `pools` in place."""

    # the same keys while a button has focus (the table's bindings are the ones shown)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "add", "Add pool", show=False, id="pools.add"),
        Binding("c", "duplicate", "Duplicate", show=False, id="pools.duplicate"),
        Binding("x,delete", "remove", "Remove", show=False, id="pools.remove"),
    ]

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

    class RemoveRequested(Message):
        """The user wants pool `index` (named `name`) gone; the screen asks, then `remove`s."""

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
        yield Static(EMPTY_HINT, id="pool-empty")
        yield PoolTable(id="pool-table", cursor_type="row", zebra_stripes=True)
        with Horizontal(classes="buttons", id="pool-buttons"):
            # compact: the keys are the main way; the buttons are for the mouse
            yield Button("Add (a)", id="pool-add", variant="primary", compact=True)
            yield Button("Edit (⏎)", id="pool-edit", compact=True)
            yield Button("Duplicate (c)", id="pool-dup", compact=True)
            yield Button("Remove (x)", id="pool-remove", variant="error", compact=True)

    def on_mount(self) -> None:
        table = self.query_one(PoolTable)
        table.add_columns("Name", "Platform", "Preset", "Size", "Capacity", "Fabric", "Cache")
        self.refresh_rows()

    def refresh_rows(self) -> None:
        table = self.query_one(PoolTable)
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
        self.query_one("#pool-empty").display = not has
        for bid in ("#pool-edit", "#pool-dup", "#pool-remove"):
            self.query_one(bid, Button).disabled = not has
        self.refresh_bindings()
        table.refresh_bindings()

    def selected_index(self) -> int | None:
        table = self.query_one(PoolTable)
        return table.cursor_row if self.pools and table.cursor_row >= 0 else None

    def add(self, pool: dict[str, Any]) -> None:
        self.pools.append(pool)
        self.refresh_rows()
        self.query_one(PoolTable).move_cursor(row=len(self.pools) - 1)
        self.post_message(self.PoolAdded(pool))

    def replace(self, index: int, pool: dict[str, Any]) -> None:
        self.pools[index] = pool
        self.refresh_rows()
        self.post_message(self.PoolEdited(index, pool))

    def remove(self, index: int) -> None:
        pool = self.pools.pop(index)
        self.refresh_rows()
        self.post_message(self.PoolRemoved(index, str(pool.get("name", ""))))

    # -- keys and buttons ------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in {"duplicate", "remove"}:
            return True if self.pools else None  # greyed until there is a pool
        return True

    @on(Button.Pressed, "#pool-add")
    def action_add(self) -> None:
        self.post_message(self.EditRequested(None))

    @on(DataTable.RowSelected)  # a mouse click on a row
    @on(Button.Pressed, "#pool-edit")
    def action_edit(self) -> None:
        index = self.selected_index()
        if index is not None:
            self.post_message(self.EditRequested(index))

    @on(Button.Pressed, "#pool-dup")
    def action_duplicate(self) -> None:
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
    def action_remove(self) -> None:
        index = self.selected_index()
        if index is not None:
            # the screen owns the confirmation (a widget does not push screens)
            self.post_message(self.RemoveRequested(index, str(self.pools[index].get("name", ""))))

    def remove_named(self, index: int, name: str) -> None:
        """Remove pool `index` if it is still the one called `name`."""
        if index < len(self.pools) and self.pools[index].get("name") == name:
            self.remove(index)
