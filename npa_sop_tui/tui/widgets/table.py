"""`PlainTable`: the DataTable every screen of ours uses.

- Cells are text, never markup: DataTable parses a `str` cell as markup, so a node reason
  like `[/]` would crash the render. Strings are wrapped in `Text` on the way in, and every
  cell's controls are shown, never obeyed (`safe_cell`): a drain reason carrying an escape
  sequence reads `␛]52;…`.
- Only the focused table shows its cursor, so one glance tells where the keys go.
- `sync(rows)` makes the table hold exactly `rows` (key → cells), touching only the rows and
  cells that differ, and keeps the highlighted row (by key) across refreshes. With fixed
  column widths no cell is measured, which is what keeps a 10,000-row refresh cheap.
- A column without a fixed width always fits its content after any change: a changed cell
  re-measures its column (growing or shrinking it), and `clear()` shrinks every column back
  to its label, so rows and header line up after a removal.
- A table that sets `KEEP` never shows a cut column: when its columns are wider than the
  table, it shows the columns that fit whole, in `KEEP`'s order of importance, and names the
  others in its tooltip (a half-shown header such as "Capa" reads as nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from textual import events
from textual.widgets import DataTable

from npa_sop_tui.tui.safety import Guarded, safe_cell

_cell = safe_cell


class PlainTable(Guarded, DataTable[Any]):
    """A DataTable with text-only cells, a cursor only while focused, and keyed syncs."""

    KEEP: ClassVar[tuple[str, ...]] = ()
    """Column keys, most important first. Empty: every column is always shown (the table
    scrolls sideways). Set: only columns that fit whole are shown, preferring these."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(**kwargs)
        self.show_cursor = False
        self._synced: dict[str, Sequence[Any]] = {}
        """The rows of the last sync, to skip rows whose cells are the same objects."""
        self._specs: list[tuple[str, Any, int | None]] = []
        """Every column as added (key, label, fixed width), shown or not."""
        self._all_rows: Mapping[str, Sequence[Any]] = {}
        """The last sync's rows with the cells of every column, shown or not."""

    def _on_focus(self, event: events.Focus) -> None:
        self.show_cursor = True
        super()._on_focus(event)

    def _on_blur(self, event: events.Blur) -> None:
        self.show_cursor = False
        super()._on_blur(event)

    # -- text, never markup ------------------------------------------------------------

    def add_column(
        self, label: Any, *, width: int | None = None, key: str | None = None, **kw: Any
    ):  # type: ignore[no-untyped-def, override]
        if key is not None and self.KEEP:
            self._specs.append((key, label, width))
        return super().add_column(_cell(label), width=width, key=key, **kw)

    def add_row(self, *cells: Any, **kwargs: Any):  # type: ignore[no-untyped-def, override]
        return super().add_row(*(_cell(c) for c in cells), **kwargs)

    def update_cell(
        self, row_key: Any, column_key: Any, value: Any, *, update_width: bool = False
    ) -> None:
        super().update_cell(row_key, column_key, _cell(value), update_width=update_width)

    def update_cell_at(self, coordinate: Any, value: Any, *, update_width: bool = False) -> None:
        super().update_cell_at(coordinate, _cell(value), update_width=update_width)

    # -- keyed sync --------------------------------------------------------------------

    def selected_key(self) -> str | None:
        """The key of the highlighted row, or None for an empty table."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:  # the cursor is past the end after a clear
            return None

    # -- columns that fit ---------------------------------------------------------------

    @property
    def hidden_columns(self) -> list[str]:
        """Labels of the columns not shown at this width (KEEP tables only)."""
        shown = {c.value for c in self.columns}
        return [str(label) for key, label, _ in self._specs if key not in shown]

    def _fitting(self, rows: Mapping[str, Sequence[Any]]) -> list[str]:
        """The keys of the columns that fit whole into the table's width, in column order."""
        room = self.scrollable_content_region.width
        keys = [key for key, _, _ in self._specs]
        if room <= 0:  # not laid out yet: nothing to measure against
            return keys
        need: dict[str, int] = {}
        for index, (key, label, width) in enumerate(self._specs):
            if width is None:
                cells = [_cell(r[index]) for r in rows.values() if index < len(r)]
                width = max([_cell(label).cell_len, *(c.cell_len for c in cells)])
            need[key] = width + 2 * self.cell_padding
        kept: set[str] = set()
        used = 0
        for key in [*self.KEEP, *(k for k in keys if k not in self.KEEP)]:
            if key in need and used + need[key] <= room:
                kept.add(key)
                used += need[key]
        return [key for key in keys if key in kept]

    def _show_columns(self, keys: list[str]) -> None:
        super().clear(columns=True)
        self._synced = {}
        for key, label, width in self._specs:
            if key in keys:
                super().add_column(_cell(label), width=width, key=key)
        hidden = self.hidden_columns
        self.tooltip = (
            f"Not shown at this width: {', '.join(hidden)} (a wider terminal shows them)"
            if hidden
            else None
        )

    def on_resize(self) -> None:
        if self.KEEP and self._specs:
            self.sync(self._all_rows)

    def sync(self, rows: Mapping[str, Sequence[Any]]) -> None:
        """Hold exactly `rows` in this order; change only what differs; keep the selection."""
        if self.KEEP and self._specs:
            self._all_rows = rows
            keys = self._fitting(rows)
            if keys != [c.value for c in self.columns]:
                self._show_columns(keys)
            index = [i for i, (key, _, _) in enumerate(self._specs) if key in keys]
            if len(index) < len(self._specs):
                rows = {k: tuple(r[i] for i in index if i < len(r)) for k, r in rows.items()}
        selected = self.selected_key()
        last = self._synced
        current = list(last) if len(last) == self.row_count else [k.value for k in self.rows]
        wanted = list(rows)
        if current != wanted:
            if len(current) > len(wanted) or not _is_prefix(current, wanted):
                # rows went away or moved: rebuilding is cheaper than moving them one by one
                self.clear()
                last = {}
                current = []
            for key in wanted[len(current) :]:
                super().add_row(*(_cell(c) for c in rows[key]), key=key)
        columns = list(self.columns)
        for key in wanted[: len(current)]:
            values = rows[key]
            if last.get(key) is values:  # the very same cells as last time: nothing to do
                continue
            old = self.get_row(key)
            for column, before, after in zip(columns, old, values, strict=False):
                after = _cell(after)
                if before != after:
                    auto = self.columns[column].auto_width
                    super().update_cell(key, column, after, update_width=auto)
        self._synced = dict(rows)
        self._restore(selected)

    def _update_dimensions(self, new_rows: Any) -> None:
        """With every column's width fixed there is nothing to measure: DataTable would
        otherwise measure every cell of every new row (70,000 cells for 10,000 nodes)."""
        columns = list(self.columns.values())
        fixed = columns and all(not c.auto_width for c in columns)
        if not fixed or (self.show_row_labels and any(r.label for r in self.rows.values())):
            before = [c.content_width for c in columns]
            super()._update_dimensions(new_rows)
            if [c.content_width for c in columns] != before:
                # DataTable widens its columns here without dropping the lines it already
                # drew: a row drawn between add_row and this idle pass kept its old, cut
                # widths (the home's first row read "c-de  deplo  eu-nor")
                self._update_count += 1
                self._clear_caches()
                self.refresh()
            return
        from textual.geometry import Size

        width = sum(c.get_render_width(self) for c in columns) + self._row_label_column_width
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(width, self._total_row_height + header)

    def clear(self, columns: bool = False):  # type: ignore[no-untyped-def, override]
        self._synced = {}
        result = super().clear(columns)
        # DataTable keeps the widest content ever seen; without rows a column is its label
        for column in self.columns.values():
            if column.auto_width:
                column.content_width = column.label.cell_len
        return result

    def _restore(self, key: str | None) -> None:
        if key is None or not self.row_count:
            return
        try:
            index = self.get_row_index(key)
        except Exception:  # the selected row went away: stay at the same position
            index = min(self.cursor_row, self.row_count - 1)
        if index != self.cursor_row:
            self.move_cursor(row=index, animate=False, scroll=False)


def _is_prefix(short: list[str], long: list[str]) -> bool:
    return long[: len(short)] == short
