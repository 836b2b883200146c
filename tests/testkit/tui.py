"""Pilot helpers for the Textual app tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from testkit.wait import eventually

CPU_SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: demo
region: eu-north1
control_plane:
  system: {min_size: 3}
  login: {preset: 16vcpu-64gb}
workers:
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
    size: 2
"""


def screen_text(app: Any) -> str:
    """What the top screen draws, line by line, as its strips hold it (after the app's line
    filters: what a terminal, or a browser watching a served session, is sent)."""
    return "\n".join(
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    )


async def wait_for(pilot: Any, predicate: Callable[[], Any], timeout: float = 60.0) -> None:
    """Let the app run until `predicate()` holds; fail with a clear message otherwise."""
    await eventually(predicate, timeout=timeout, pause=pilot.pause, interval=0.05)


async def home_loaded(pilot: Any) -> Any:
    """Wait until the home screen shows the inventory it loaded in its worker; return it."""
    from textual.widgets import DataTable

    from npa_sop_tui.screens.home import HomeScreen

    def loaded() -> bool:
        screen = pilot.app.screen
        if not isinstance(screen, HomeScreen):
            return False
        tables = screen.query("#clusters").results(DataTable)
        # the table gets its columns when the rows from the inventory worker are shown
        return any(table.columns for table in tables)

    await wait_for(pilot, loaded)
    return pilot.app.screen


async def open_cpu_wizard(pilot: Any, folder: Path) -> Any:
    """The wizard on a two-node CPU spec written to `folder`/cluster.yaml, laid out."""
    from npa_sop_tui.screens.wizard import WizardScreen

    spec = folder / "cluster.yaml"
    spec.write_text(CPU_SPEC)
    mapping, document, _ = pilot.app.backend.open_with_findings(spec)
    wizard = WizardScreen(mapping, path=spec, document=document)
    await pilot.app.push_screen(wizard)
    await wait_for(pilot, lambda: bool(wizard.query("#pages")) and bool(wizard.query("#pool-list")))
    return wizard


async def click(pilot: Any, selector: str) -> None:
    """Click `selector` on the current screen once a click can land on it.

    Pilot aims at the widget's region as it is when called: a screen that was just pushed may
    not be laid out yet (the click lands at 0,0), and a Button ignores clicks during its short
    "pressed" effect. Wait for both, then check the click reached the widget.
    """

    def ready() -> bool:
        found = pilot.app.screen.query(selector)
        widget = found.first() if found else None
        return widget is not None and widget.region.area > 0 and not widget.has_class("-active")

    await wait_for(pilot, ready)
    assert await pilot.click(selector), f"the click on {selector} landed on another widget"


def column_misfits(table: Any) -> list[str]:
    """Every auto-width column of a DataTable whose width is not exactly what its label and
    cells need (too narrow cuts text off; too wide misaligns after rows went away)."""
    from rich.text import Text

    out = []
    for index, (key, column) in enumerate(table.columns.items()):
        if not column.auto_width:
            continue
        cells = [table.get_row_at(row)[index] for row in range(table.row_count)]
        widths = [c.cell_len if isinstance(c, Text) else len(str(c)) for c in cells]
        need = max([column.label.cell_len, *widths])
        if column.content_width != need:
            out.append(f"{key.value}: width {column.content_width}, content needs {need}")
    return out


def cut_off(screen: Any) -> list[str]:
    """Text on `screen` that does not fit where it is shown: a button label wider than its
    button, a text widget that needs more lines than it has (and cannot scroll), a table
    cell wider than its column, a table whose columns lag its content. Each entry names the
    widget and the text."""
    from textual.containers import ScrollableContainer
    from textual.widgets import Button, DataTable, Static

    from npa_sop_tui.tui.widgets.lazy_table import LazyTable

    problems: list[str] = []
    for widget in screen.walk_children(with_self=False):
        if not widget.display or not widget.visible or widget.region.area == 0:
            continue
        where = f"{type(widget).__name__}#{widget.id or '?'}"
        inner = widget.content_region
        shown = screen.region
        if isinstance(widget, DataTable | LazyTable):
            # wherever it sits: columns wider than the table cut a header ("Capa", "Prob")
            room = widget.scrollable_content_region.width
            if widget.virtual_size.width > room:
                problems.append(
                    f"{where}: columns need {widget.virtual_size.width} of {room} columns: "
                    f"headers {_headers(widget)!r} are cut"
                )
        scrolled = any(isinstance(a, ScrollableContainer) for a in widget.ancestors)
        if scrolled:  # scrolled into view on demand: its own region may extend past the edge
            if isinstance(widget, Button) and widget.region.width < _label_width(widget):
                problems.append(f"{where}: button {str(widget.label)!r} too narrow")
            continue
        if isinstance(widget, Button | Static) and not shown.contains_region(widget.region):
            problems.append(f"{where}: drawn past the screen's edge at {widget.region}")
            continue
        parent = widget.parent
        clips = parent is not None and not isinstance(parent, ScrollableContainer)
        if clips and isinstance(widget, Button | Static):
            room = parent.content_region  # type: ignore[union-attr]
            if room.area and not room.contains_region(widget.region):
                problems.append(f"{where}: clipped by its container at {widget.region}")
                continue
        if isinstance(widget, Button):
            if _label_width(widget) > inner.width:
                problems.append(f"{where}: button {str(widget.label)!r} in {inner.width} columns")
        elif isinstance(widget, DataTable):
            problems += [f"{where}: {m}" for m in column_misfits(widget)]
        elif isinstance(widget, LazyTable):
            widths = [c.width for c in widget.columns.values()]
            for row in range(min(widget.row_count, 200)):
                for cell, width in zip(widget.get_row_at(row), widths, strict=False):
                    if cell.cell_len > width:
                        problems.append(f"{where}: cell {cell.plain!r} in {width} columns")
        elif isinstance(widget, Static) and not isinstance(widget, ScrollableContainer):
            if inner.width <= 0 or inner.height <= 0:
                continue
            need = widget.get_content_height(inner.size, screen.app.size, inner.width)
            if need > inner.height and widget.styles.overflow_y not in ("auto", "scroll"):
                text = str(widget.render())[:60]
                problems.append(f"{where}: {need} lines of text in {inner.height}: {text!r}")
    return problems


def _headers(table: Any) -> list[str]:
    from textual.widgets import DataTable

    if isinstance(table, DataTable):
        return [str(c.label) for c in table.columns.values()]
    return [c.label for c in table.shown_columns]


def _label_width(button: Any) -> int:
    label = button.label
    return int(getattr(label, "cell_length", None) or len(str(label)))


async def planned(pilot: Any, spec_path: Path) -> Any:
    """Write CPU_SPEC to `spec_path`, start its deploy and return the deploy screen once its
    plan is shown (nothing applied yet)."""
    from npa_sop_tui.screens.deploy import DeployScreen
    from npa_sop_tui.screens.deploy_stage import OperationStage

    app = pilot.app
    spec_path.write_text(CPU_SPEC)
    spec, _ = app.backend.check(app.backend.load_spec(spec_path))
    app.deploy(spec)
    await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
    screen = app.screen
    await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
    return screen
