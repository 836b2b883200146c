"""The deploy screen's timeline pane: the running operation's resources as bars, built from
the events the screen already receives (no log read), the critical path marked as it forms.

From 100 columns it shows the chart under the resource table and the log. Below that
(80x24 has no rows to spare) it is one line naming what the deploy waits on now, the
critical path's newest bar. `t` enlarges the pane over the screen's body at any width, and
`t` again (or escape) puts it back. The other screens open a past operation's timeline
from its log instead (screens/timeline.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from npa_sop_tui.events import Event
from npa_sop_tui.history.timeline import Timeline, TimelineBuilder, duration_text
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.charts.timeline import CRITICAL, TimelineChart

REDRAW_SECONDS = 1.0
"""The bars are rebuilt at most this often (and each second while one runs, so it grows)."""

MAXIMIZED = "-timeline-max"
"""Class the pane sets on its screen while enlarged."""


def summary_line(
    timeline: Timeline | None, *, now: float, expanded: bool, width: int = 200
) -> Text:
    """The pane's first line: counts, the critical path and the bar it ends in. When the
    long wording does not fit `width`, a terse one keeps the resource's name whole."""
    key = "t: back" if expanded else "t: enlarge"
    if timeline is None or not timeline.bars:
        return Text.assemble(
            ("Timeline", "bold"), ": ", (f"no resource has started yet ({key})", "dim")
        )
    span = timeline.span
    assert span is not None
    running = sum(b.end is None for b in timeline.bars)
    end = now if running and timeline.finished is None else span[1]
    took = duration_text(end - span[0])
    path = timeline.critical_path
    on_path = duration_text(timeline.path_span(now))
    last = path[-1] if path else None
    where = last.addr.removeprefix("module.") if last else ""
    state = "now on" if last is not None and last.end is None else "ends in"
    more = f", {running} running" if running else ""
    long = Text.assemble(
        ("Timeline", "bold"),
        f": {len(timeline.bars)} resources, {took}{more}  ",
        (CRITICAL, "bold yellow"),
        f" critical path {len(path)} ({on_path}), {state} ",
        (where, "bold"),
        (f"  ({key})", "dim"),
    )
    if long.cell_len <= width:
        return long
    short = Text.assemble(
        ("Timeline", "bold"),
        f" {len(timeline.bars)} res {took} ",
        (CRITICAL, "bold yellow"),
        f" path {len(path)} ({on_path}) {'▶' if state == 'now on' else 'ends'} ",
        (where, "bold"),
        (" (t)", "dim"),
    )
    short.truncate(width, overflow="ellipsis")
    return short


class DeployTimelinePane(Guarded, Vertical):
    """Feed it the screen's event batches with `add`; it redraws on its own timer."""

    # not scoped: the rules also place the screen's body while the pane is enlarged
    SCOPED_CSS = False
    DEFAULT_CSS = f"""
    DeployTimelinePane {{ height: auto; padding: 0 1; }}
    DeployTimelinePane > #tl-pane-summary {{ height: 1; }}
    DeployTimelinePane > #tl-pane-body {{ height: auto; max-height: 12; }}
    Screen.-narrow DeployTimelinePane > #tl-pane-body {{ display: none; }}
    Screen.{MAXIMIZED} #op-body {{ display: none; }}
    Screen.{MAXIMIZED} DeployTimelinePane {{ height: 1fr; }}
    Screen.{MAXIMIZED} DeployTimelinePane > #tl-pane-body {{
        display: block; height: 1fr; max-height: 100%;
    }}
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "restore", "Back", show=False, id="deploy.timeline.restore"),
    ]

    expanded: reactive[bool] = reactive(False)
    """Enlarged over the screen's body."""

    clock: float | None = None
    """A fixed 'now' (tests); None: the wall clock."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._builder = TimelineBuilder()
        self._operation_id: str | None = None
        self._dirty = False
        self._before_expand: Widget | None = None
        self._drawn_at = float("-inf")  # monotonic time of the last rebuild

    def compose(self) -> ComposeResult:
        yield Static(summary_line(None, now=0, expanded=False), id="tl-pane-summary")
        with VerticalScroll(id="tl-pane-body"):
            yield TimelineChart(id="tl-pane-chart")

    def on_mount(self) -> None:
        self.set_interval(REDRAW_SECONDS, self._redraw)

    @property
    def timeline(self) -> Timeline | None:
        return self.query_one(TimelineChart).timeline

    def add(self, events: Iterable[Event]) -> None:
        """A batch of the operation's events; a new operation (a retry) starts afresh."""
        for event in events:
            if event.operation_id != self._operation_id:
                self._builder = TimelineBuilder()
                self._operation_id = event.operation_id
            self._builder.add(event)
            self._dirty = True
        # the first batch after a quiet second is drawn at once; a flood waits for the timer
        if time.monotonic() - self._drawn_at >= REDRAW_SECONDS:
            self._redraw()

    def redraw_now(self) -> None:
        """Rebuild at once (the timer does it otherwise; tests and a finished deploy)."""
        self._dirty = True
        self._redraw()

    def _redraw(self) -> None:
        chart = self.query_one(TimelineChart)
        current = chart.timeline
        running = current is not None and any(b.end is None for b in current.bars)
        if not (self._dirty or running):
            return
        now = self.clock if self.clock is not None else time.time()
        if self._dirty:
            self._dirty = False
            self._drawn_at = time.monotonic()
            chart.clock = self.clock
            chart.timeline = self._builder.build()
        else:
            chart.refresh()  # the running bars grow; the rows stay (no layout)
        summary = summary_line(
            chart.timeline, now=now, expanded=self.expanded, width=self._summary_width()
        )
        self.query_one("#tl-pane-summary", Static).update(summary, layout=False)  # one line

    def _summary_width(self) -> int:
        return self.query_one("#tl-pane-summary", Static).size.width or 78

    def on_resize(self) -> None:
        self.redraw_now()

    def toggle(self) -> None:
        self.expanded = not self.expanded

    def action_restore(self) -> None:
        self.expanded = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "restore":
            return self.expanded  # else escape reaches the screen (Back)
        return True

    def watch_expanded(self, expanded: bool) -> None:
        self.screen.set_class(expanded, MAXIMIZED)
        body = self.query_one("#tl-pane-body", VerticalScroll)
        if expanded:
            self._before_expand = self.screen.focused
            body.focus()  # arrows and pgup/pgdn scroll the bars
        else:
            before, self._before_expand = self._before_expand, None
            if before is not None and before.is_attached and before.display:
                before.focus()
            elif self.screen.focused is body:
                self.screen.set_focus(None)
        now = self.clock if self.clock is not None else time.time()
        timeline = self.query_one(TimelineChart).timeline
        summary = summary_line(timeline, now=now, expanded=expanded, width=self._summary_width())
        self.query_one("#tl-pane-summary", Static).update(summary, layout=False)  # one line
