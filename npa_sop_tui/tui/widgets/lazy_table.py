"""`LazyTable`: a read-only table that builds and paints only the rows on screen.

For the tables that can be large or change many times a second (10,000 Slurm nodes, a
deploy's resources under thousands of events/s). Textual's DataTable turns every row into
cells up front (a Row object, a `Text` per cell, its width measured) and any change re-renders
every visible row through Rich. Here the table holds the items themselves, in order, plus a
function that turns one item into its cells; `render_line` calls it only for the rows on
screen, so a paint costs the same for 40 rows or 10,000, and a refresh is just "the items
changed". Columns have fixed widths: nothing is measured. A table that sets `KEEP` shows
only the columns that fit whole into its width (preferring those keys), never a cut header.
A `fill` column takes the room the others leave (at least its width), so a long value such as
a resource address gets every column the terminal has, and no sideways scrolling; one with
`keep_end` shows the end of a value too long for it, where an address says what it is.

Cells are `str` or `rich.text.Text` (whose one style colours the whole cell) and are shown
as text, never markup; control characters (ESC too) are shown, never obeyed (`safe_text`:
an escape sequence reads `␛]52;…`). Only the focused table shows its cursor. The highlighted
row is kept by key when the items change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, ClassVar

from rich.cells import cell_len, get_character_cell_size, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

PADDING = 1
"""Blank cells on each side of every cell, as DataTable has."""


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int
    fill: bool = False
    keep_end: bool = False


def keep_end(text: str, width: int) -> str:
    """`text` in `width` cells: whole, or `…` and as much of its end as fits."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail, used = [], 1
    for char in reversed(text):
        size = get_character_cell_size(char)
        if used + size > width:
            break
        tail.append(char)
        used += size
    return "…" + "".join(reversed(tail))


@lru_cache(maxsize=256)
def _style(style: str) -> Style:
    return Style.parse(style) if style else Style.null()


def _text(cell: Any) -> tuple[str, Style]:
    """A cell's characters (one line, every control shown, never obeyed) and its style."""
    if isinstance(cell, Text):
        style = cell.style if isinstance(cell.style, Style) else _style(cell.style)
        value = cell.plain
    else:
        style, value = Style.null(), str(cell)
    return safe_text(value), style


class LazyTable(Guarded, ScrollView, can_focus=True):
    """Rows are items of a sequence; their cells are built only when painted."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "lazy-table--header",
        "lazy-table--cursor",
        "lazy-table--even-row",
    }
    DEFAULT_CSS = """
    LazyTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus { background-tint: $foreground 5%; }
        & > .lazy-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .lazy-table--even-row { background: $surface-lighten-1 50%; }
        & > .lazy-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    # cursor keys are the widget's own: not shown in the footer or in `?`
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First row", show=False),
        Binding("end", "edge(1)", "Last row", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    class RowSelected(Message):
        """Enter (or a click on the highlighted row) on the row with `key`."""

        def __init__(self, table: LazyTable, key: str) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> LazyTable:
            return self.table

    KEEP: ClassVar[tuple[str, ...]] = ()
    """Column keys, most important first. Empty: every column is shown (the table scrolls
    sideways). Set: only the columns that fit whole are shown, preferring these."""

    def __init__(self, *, zebra_stripes: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.zebra_stripes = zebra_stripes
        self.show_cursor = False
        self.cursor_row = 0
        self._all_columns: list[Column] = []
        self._columns: list[Column] = []  # the shown ones
        self._shown: list[int] = []  # their indexes into a row's cells
        self._items: Sequence[Any] = ()
        self._keys: list[str] = []
        self._index: dict[str, int] | None = None  # key → row, built when first asked
        self._cells_of: Callable[[Any], Sequence[Any]] = lambda item: ()

    # -- columns and rows ----------------------------------------------------------------

    @property
    def columns(self) -> dict[str, Column]:
        """Every column, shown or not (a row's cells are in this order)."""
        return {c.key: c for c in self._all_columns}

    @property
    def shown_columns(self) -> list[Column]:
        return list(self._columns)

    @property
    def hidden_columns(self) -> list[str]:
        """Labels of the columns not shown at this width."""
        shown = set(self._shown)
        return [c.label for i, c in enumerate(self._all_columns) if i not in shown]

    def set_columns(self, columns: Sequence[Column]) -> None:
        self._all_columns = list(columns)
        self._fit_columns()

    def set_column_width(self, key: str, width: int) -> None:
        self._all_columns = [
            Column(c.key, c.label, width) if c.key == key else c for c in self._all_columns
        ]
        self._fit_columns()

    def _fit_columns(self) -> None:
        columns = self._all_columns
        room = self.scrollable_content_region.width
        shown = list(range(len(columns)))
        if self.KEEP and room > 0:
            order = [c.key for c in columns]
            used, kept = 0, set()
            for key in [*self.KEEP, *(k for k in order if k not in self.KEEP)]:
                if key not in order:
                    continue
                need = columns[order.index(key)].width + 2 * PADDING
                if used + need <= room:
                    kept.add(key)
                    used += need
            shown = [i for i, c in enumerate(columns) if c.key in kept]
        self._shown = shown
        self._columns = _filled([columns[i] for i in shown], room)
        if self.KEEP:
            hidden = self.hidden_columns
            self.tooltip = (
                f"Not shown at this width: {', '.join(hidden)} (a wider terminal shows them)"
                if hidden
                else None
            )
        self._resize()

    def on_resize(self) -> None:
        if self.KEEP or any(c.fill for c in self._all_columns):
            self._fit_columns()

    def show_rows(
        self,
        items: Sequence[Any],
        *,
        key: Callable[[Any], str],
        cells: Callable[[Any], Sequence[Any]],
    ) -> None:
        """Hold `items` (in this order); the highlighted row stays on the same key."""
        selected = self.selected_key()
        self._items = items
        self._keys = [key(item) for item in items]
        self._index = None
        self._cells_of = cells
        row = self.get_row_index(selected) if selected is not None else None
        self.cursor_row = max(0, min(row if row is not None else self.cursor_row, len(items) - 1))
        self._resize()

    @property
    def row_count(self) -> int:
        return len(self._items)

    def get_row_at(self, row: int) -> list[Text]:
        """The cells of the row at `row`, as Text."""
        return [Text(*_text(c)) for c in self._cells_of(self._items[row])]

    def get_row_index(self, key: str) -> int | None:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self._keys)}
        return self._index.get(key)

    def get_row(self, key: str) -> list[Text]:
        row = self.get_row_index(key)
        if row is None:
            raise KeyError(key)
        return self.get_row_at(row)

    def selected_key(self) -> str | None:
        """The key of the highlighted row, or None for an empty table."""
        return self._keys[self.cursor_row] if 0 <= self.cursor_row < len(self._keys) else None

    def move_cursor(self, *, row: int, scroll: bool = True, **_: Any) -> None:
        if not self._items:
            return
        self.cursor_row = max(0, min(row, len(self._items) - 1))
        if scroll:
            self._scroll_to_cursor()
        self.refresh()

    def _resize(self) -> None:
        width = sum(c.width + 2 * PADDING for c in self._columns)
        self.virtual_size = Size(width, len(self._items) + 1)  # + the header line
        self.refresh()

    # -- keys and mouse ------------------------------------------------------------------

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_cursor(self, step: int) -> None:
        self.move_cursor(row=self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self.cursor_row + direction * self._page())

    def action_edge(self, end: int) -> None:
        self.move_cursor(row=len(self._items) - 1 if end else 0)

    def action_select(self) -> None:
        key = self.selected_key()
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    def _scroll_to_cursor(self) -> None:
        top, page = round(self.scroll_y), self._page()
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + page:
            self.scroll_to(y=self.cursor_row - page + 1, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return  # the header
        row = round(self.scroll_y) + offset.y - 1
        if row >= len(self._items):
            return
        if row == self.cursor_row:
            self.action_select()
        else:
            self.move_cursor(row=row)

    def _on_focus(self, event: events.Focus) -> None:
        self.show_cursor = True
        self.refresh()
        super()._on_focus(event)

    def _on_blur(self, event: events.Blur) -> None:
        self.show_cursor = False
        self.refresh()
        super()._on_blur(event)

    # -- painting ------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            header = base + self.get_component_rich_style("lazy-table--header")
            cells: Sequence[Any] = [c.label for c in self._all_columns]
            return self._strip(cells, header, header, width)
        row = round(self.scroll_y) + y - 1
        if row >= len(self._items):
            return Strip.blank(width, base)
        row_style = base
        if self.zebra_stripes and row % 2:
            row_style += self.get_component_rich_style("lazy-table--even-row")
        if self.show_cursor and row == self.cursor_row:
            cursor = row_style + self.get_component_rich_style("lazy-table--cursor")
            return self._strip(self._cells_of(self._items[row]), cursor, cursor, width)
        return self._strip(self._cells_of(self._items[row]), row_style, None, width)

    def _strip(
        self, cells: Sequence[Any], row_style: Style, over: Style | None, width: int
    ) -> Strip:
        """One line: each cell padded to its column; `over` (the cursor) wins over colours."""
        pad = " " * PADDING
        segments: list[Segment] = []
        if len(self._shown) < len(self._all_columns):
            cells = [cells[i] for i in self._shown if i < len(cells)]
        for column, cell in zip(self._columns, cells, strict=False):
            text, style = _text(cell)
            style = row_style + style + over if over is not None else row_style + style
            if column.keep_end:
                text = keep_end(text, column.width)
            segments.append(Segment(pad + set_cell_size(text, column.width) + pad, style))
        strip = Strip(segments).crop(round(self.scroll_x), round(self.scroll_x) + width)
        return strip.extend_cell_length(width, row_style)


def _filled(columns: list[Column], room: int) -> list[Column]:
    """The first `fill` column widened to the room the others leave (`room` 0: not laid
    out yet, widths as given)."""
    fill = next((i for i, c in enumerate(columns) if c.fill), None)
    if fill is None or room <= 0:
        return columns
    others = sum(c.width + 2 * PADDING for i, c in enumerate(columns) if i != fill)
    column = columns[fill]
    width = max(column.width, room - others - 2 * PADDING)
    return [*columns[:fill], replace(column, width=width), *columns[fill + 1 :]]
