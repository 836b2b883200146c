"""The timeline of a past (or still running) operation, read from its NDJSON event log.

Opened with `t` from home or the dashboard for the cluster's latest operation. The log is
read in a worker; while the operation is still running (another terminal deploying, a
teammate watching in a browser) it is read again every few seconds, so the bars grow.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from npa_sop_tui.history.timeline import Timeline
from npa_sop_tui.screens.timeline_key import timeline_binding
from npa_sop_tui.tui.safety import Guarded, plain
from npa_sop_tui.tui.widgets.charts.timeline import TimelineChart, seconds_text
from npa_sop_tui.tui.widgets.footer import AppFooter

RELOAD_SECONDS = 3.0

__all__ = ["TimelineScreen", "timeline_binding"]  # the key lives in timeline_key


class TimelineScreen(Guarded, Screen[None]):
    """Bars of one operation's resources; `r` reads the log again."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reload", "Reload", id="timeline.reload"),
        Binding("escape", "leave", "Back", id="timeline.leave"),
    ]

    def __init__(
        self,
        cluster: str,
        *,
        log: Path | None = None,
        operation_id: str | None = None,
        clock: float | None = None,
    ) -> None:
        super().__init__()
        self.cluster = cluster
        self.log_path = log
        self.operation_id = operation_id
        self.clock = clock
        """A fixed 'now' (snapshot tests); None: the wall clock, and live reloading."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static(
            plain(f"Timeline of {self.cluster}: reading its operation log…"), id="tl-title"
        )
        with VerticalScroll(id="tl-body"):
            yield TimelineChart(id="timeline")
        yield AppFooter()

    def on_mount(self) -> None:
        chart = self.query_one(TimelineChart)
        chart.clock = self.clock
        self.query_one("#tl-body", VerticalScroll).focus()  # arrows and pgup/pgdn scroll it
        self.action_reload()
        if self.clock is None:
            self.set_interval(RELOAD_SECONDS, self._reload_if_running)

    def action_reload(self) -> None:
        self._read()

    def _reload_if_running(self) -> None:
        timeline = self.query_one(TimelineChart).timeline
        if timeline is not None and timeline.finished is None:
            self._read()

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False)
    def _read(self) -> None:
        from npa_sop_tui.history.oplog import operation_log_path, read_events
        from npa_sop_tui.history.timeline import timeline_of

        path = self.log_path or operation_log_path(self.cluster, self.operation_id)
        if path is None:
            self.app.call_from_thread(self._show, None, None, "no operation log yet")
            return
        try:
            timeline = timeline_of(read_events(path))
        except OSError as exc:
            self.app.call_from_thread(self._show, None, path, f"cannot read: {exc.strerror}")
            return
        self.app.call_from_thread(self._show, timeline, path, None)

    def _show(self, timeline: Timeline | None, path: Path | None, problem: str | None) -> None:
        title = self.query_one("#tl-title", Static)
        if timeline is None:
            title.update(plain(f"Timeline of {self.cluster}: {problem}"))
            return
        state = timeline.result or "running"
        took = ""
        if timeline.started is not None and timeline.finished is not None:
            took = f", {seconds_text(timeline.finished - timeline.started)} in all"
        title.update(plain(f"{timeline.operation or 'operation'} of {self.cluster}: {state}{took}"))
        self.query_one(TimelineChart).timeline = timeline

    def action_leave(self) -> None:
        self.app.pop_screen()
