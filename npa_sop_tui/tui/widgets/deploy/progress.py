"""Deploy/destroy progress widgets: phase + bar, resource table, bounded filterable log.

Events arrive far faster than a terminal can redraw (thousands per second on a big apply),
so nothing here renders per event: the owning screen buffers events and hands them over in
batches (toolong's pattern), and the log keeps a bounded window of lines.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.dom import DOMNode
from textual.reactive import reactive
from textual.widgets import Input, Label, ProgressBar, Static

from npa_sop_tui.events import (
    Diagnostic,
    Event,
    PhaseChanged,
    PlanSummary,
    ResourceFailed,
    ResourceFinished,
    ResourceProgress,
    ResourceStarted,
    describe,
    level_of,
)
from npa_sop_tui.tui.safety import Guarded, markup, search_pattern, shown
from npa_sop_tui.tui.widgets.lazy_table import Column, LazyTable
from npa_sop_tui.tui.widgets.log_view import LogView

LOG_WINDOW = 5_000
"""Lines the log keeps (and can re-filter); older lines are dropped. The full log is on disk."""


class PhaseBar(Guarded, Horizontal):
    """The phase label and a progress bar over planned resources."""

    phase: reactive[str] = reactive("starting")
    """Human label of the current lifecycle phase."""

    done: reactive[int] = reactive(0)
    """Resources finished (or failed) so far."""

    total: reactive[int] = reactive(0)
    """Resources the plan(s) announced; 0 until a plan summary arrives."""

    def compose(self) -> ComposeResult:
        yield Label("", id="op-phase")
        yield ProgressBar(total=None, show_eta=False, id="op-progress")

    def _update(self) -> None:
        self.query_one("#op-phase", Label).update(
            markup(f"[b]$phase[/b]  {self.done}/{self.total or '?'} resources", phase=self.phase)
        )
        bar = self.query_one(ProgressBar)
        # no bouncing "indeterminate" bar before the plan says how many resources there are
        bar.display = self.total > 0
        if self.total:
            bar.update(total=self.total, progress=min(self.done, self.total))

    def watch_phase(self) -> None:
        self._update()

    def watch_done(self) -> None:
        self._update()

    def watch_total(self) -> None:
        self._update()


@dataclass(slots=True)
class _Resource:
    address: str
    action: str
    state: str
    started: float
    ended: float | None = None


STATE_COLOURS = {"in flight": "yellow", "done": "green", "failed": "red", "stopped": "magenta"}
_RESOURCE_EVENTS = (ResourceStarted, ResourceProgress, ResourceFinished, ResourceFailed)


class ResourceTable(LazyTable):
    """In-flight, done and failed resources with their durations, in the order first seen.

    Events update the model at once (so counts are exact); the table is a LazyTable over
    that model, so a redraw builds only the rows on screen (durations are computed as they
    are painted) and costs the same under ten events or thousands per second. It repaints
    at most SYNC_SECONDS apart, and only when something changed or is still running."""

    SYNC_SECONDS = 0.5

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(zebra_stripes=True, **kwargs)
        self.resources: dict[str, _Resource] = {}
        self._dirty = False
        self._counts = {"in flight": 0, "done": 0, "failed": 0, "stopped": 0}
        self.completed = 0
        """Resource runs ended (done or failed): a resource the recipe re-runs in a later
        phase (replaced on every apply) is one row but two runs, as the plans count it."""
        self.follow = True
        """Scroll along with the work until the user moves the cursor."""

    def on_mount(self) -> None:
        # The address takes the width left and, when longer, keeps its end (the resource's
        # own name): on a narrow terminal it is the one that gets cut, never the state or
        # the duration, and the table never scrolls sideways.
        self.set_columns(
            [
                Column("state", "State", 9),
                Column("dur", "Duration", 8),
                Column("action", "Action", 7),
                Column("addr", "Resource", 24, fill=True, keep_end=True),
            ]
        )
        self.set_interval(self.SYNC_SECONDS, self.sync)

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def apply(self, events: Iterable[Event]) -> None:
        """Fold a batch of events into the model; the table catches up on the next sync."""
        for ev in events:
            if not isinstance(ev, _RESOURCE_EVENTS) or not ev.addr:
                continue
            res = self.resources.get(ev.addr)
            if res is None:
                # first seen mid-way (progress, or a finish replayed from state): its start
                # is as long ago as Terraform says it has been running
                elapsed = 0.0 if isinstance(ev, ResourceStarted) else ev.elapsed
                res = _Resource(ev.addr, ev.action, "in flight", ev.ts - elapsed)
                self.resources[ev.addr] = res
                self._counts["in flight"] += 1
            before = res.state
            match ev:
                case ResourceStarted():
                    res.state, res.started, res.ended = "in flight", ev.ts, None
                    res.action = ev.action
                case ResourceFinished():
                    res.state, res.ended = "done", ev.ts
                    self.completed += 1
                case ResourceFailed():
                    res.state, res.ended = "failed", ev.ts
                    self.completed += 1
            if before != res.state:
                self._counts[before] -= 1
                self._counts[res.state] += 1
            self._dirty = True

    def end_in_flight(self, ended: float, *, state: str = "stopped") -> int:
        """The operation is over: resources still in flight stop counting (their rows read
        `stopped`, or `failed`), so no timer runs on for something that is not running."""
        count = 0
        for res in self.resources.values():
            if res.state == "in flight":
                self._counts["in flight"] -= 1
                self._counts[state] += 1
                res.state, res.ended = state, ended
                count += 1
        self._dirty = True
        self.sync()
        return count

    def sync(self) -> None:
        """Show new and changed resources, and the running durations of in-flight ones."""
        if not self._dirty and not self._counts["in flight"]:
            return
        self._dirty = False
        if self.row_count != len(self.resources):
            self.show_rows(list(self.resources.values()), key=_address, cells=_cells)
        else:
            self.refresh()
        if self.follow:
            self._follow_in_flight()

    def _follow_in_flight(self) -> None:
        """Keep the first resource still in flight on screen (else the newest row): on 24
        rows the first rows are long done while the work goes on below them."""
        items = list(self.resources.values())
        if not items:
            return
        row = next((i for i, r in enumerate(items) if r.state == "in flight"), len(items) - 1)
        self.move_cursor(row=row, scroll=False)
        # after the next layout: only then does the scroll range include the new rows
        self.call_after_refresh(self._scroll_to_cursor)

    def action_cursor(self, step: int) -> None:
        self.follow = False  # the user moves: stop following
        super().action_cursor(step)

    def action_page(self, direction: int) -> None:
        self.follow = False
        super().action_page(direction)

    def action_edge(self, end: int) -> None:
        self.follow = False
        super().action_edge(end)


def _address(res: _Resource) -> str:
    return res.address


def _cells(res: _Resource) -> tuple[Any, ...]:
    state = Text(res.state, style=STATE_COLOURS.get(res.state, ""))
    return (state, _duration(res), res.action, res.address)


def _duration(res: _Resource) -> str:
    seconds = (res.ended or time.time()) - res.started
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f}m"


class EventLog(Guarded, Vertical):
    """The operation log: a bounded window of lines with a live filter (substring or /regex/)."""

    filter_text: reactive[str] = reactive("")
    """What the filter box holds; empty shows every line."""

    def __init__(self, *, window: int = LOG_WINDOW, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.window = window
        self.lines: deque[tuple[str, str]] = deque(maxlen=window)
        self._matcher: re.Pattern[str] | None = None

    def compose(self) -> ComposeResult:
        # one row, no border: three rows of box left the log one line at 80x24
        yield Input(placeholder="filter log (text or /regex/)", id="log-filter", compact=True)
        yield LogView(window=self.window, id="event-log")

    def add_lines(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (level, text) lines; only those matching the filter are shown."""
        new = list(lines)
        self.lines.extend(new)
        # the view paints only the lines on screen: appending a batch is list work
        self.query_one(LogView).write(
            new if self._matcher is None else [ln for ln in new if self._matches(ln[1])]
        )

    def _matches(self, text: str) -> bool:
        if self._matcher is None:
            return True
        return self._matcher.search(text) is not None

    @on(Input.Changed, "#log-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value

    def watch_filter_text(self, value: str) -> None:
        value = value.strip()
        if len(value) > 2 and value.startswith("/") and value.endswith("/"):
            self._matcher = search_pattern(value[1:-1])
        else:
            self._matcher = search_pattern(value, regex=False)
        if not self.is_mounted:
            return
        view = self.query_one(LogView)
        view.clear()
        view.write(ln for ln in self.lines if self._matches(ln[1]))


def log_lines(events: Iterable[Event]) -> list[tuple[str, str]]:
    """(level, text) log lines for a batch of events, worded by `events.describe`.

    Progress ticks are left out: the resource table already shows how long each resource
    has been running. Phase changes are headings."""
    lines: list[tuple[str, str]] = []
    for ev in events:
        if isinstance(ev, ResourceProgress):
            continue
        lines.append(("heading" if isinstance(ev, PhaseChanged) else level_of(ev), describe(ev)))
    return lines


class DiagnosticsPanel(Guarded, Static):
    """Terraform diagnostics (errors and warnings) in full, newest last."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.items: list[Diagnostic | ResourceFailed] = []
        self.first_error: str | None = None
        """The operation's first error block (kept when older items scroll out)."""

    def reset(self) -> None:
        """A new attempt: the last attempt's diagnostics go (they no longer apply), and its
        first error is what a failure modal will show."""
        self.first_error = None
        self.items.clear()
        self.update("")
        self.set_class(False, "-has")

    def add(self, events: Iterable[Event]) -> None:
        # info-level diagnostics (e.g. the expected "-target" notes) stay in the log only
        new = [
            e
            for e in events
            if (isinstance(e, Diagnostic) and e.severity != "info") or isinstance(e, ResourceFailed)
        ]
        if not new:
            return
        if self.first_error is None:
            self.first_error = first_error_block(new)
        self.items.extend(new)
        del self.items[:-50]
        self.update(Content("\n").join(_diagnostic_markup(e) for e in self.items))
        self.set_class(True, "-has")


def _diagnostic_markup(event: Diagnostic | ResourceFailed) -> Content:
    """The headline in the event's colour, its detail lines plain (never markup), every
    control in Terraform's text shown, never obeyed."""
    head, _, detail = describe(event).partition("\n")
    colour = "red" if level_of(event) == "error" else "yellow"
    marked = markup(f"[{colour}]$head[/]", head=head)
    return Content.assemble(marked, "\n", shown(detail, keep_newlines=True)) if detail else marked


def first_error_block(items: Iterable[Event]) -> str | None:
    """Terraform's first error, as a block of text (headline and detail), or None."""
    for event in items:
        if isinstance(event, Diagnostic | ResourceFailed) and level_of(event) == "error":
            return describe(event)
    return None


def operation_body() -> ComposeResult:
    """What a screen running an operation shows under its own controls: the phase bar, the
    resources and diagnostics beside the log, and the result line (destroy, upgrade)."""
    yield PhaseBar(id="phase-bar")
    with Horizontal(id="op-body"):
        with Vertical(id="op-left"):
            yield ResourceTable(id="resources")
            yield DiagnosticsPanel(id="diagnostics")
        yield EventLog(id="log")
    yield Static("", id="op-result")


def show_events(
    screen: DOMNode,
    events: Sequence[Event],
    lines: list[tuple[str, str]] | None = None,
    dropped_lines: int = 0,
    folded_ends: int = 0,
) -> None:
    """One batch of an operation's events into the progress widgets `screen` holds (the
    phase bar, the resource table, the log, the diagnostics); `lines` are the batch's log
    lines when an intake worded them already (else worded here)."""
    bar, table = screen.query_one(PhaseBar), screen.query_one(ResourceTable)
    table.completed += folded_ends  # runs an intake folded away ended before this batch's
    folded = 0  # events[:folded] are in the table
    for i, ev in enumerate(events):
        if isinstance(ev, PhaseChanged):
            bar.phase = ev.label
        elif isinstance(ev, PlanSummary):
            table.apply(events[folded:i])
            folded = i
            grow_total(bar, table, ev)
    table.apply(events[folded:])
    bar.done = table.completed
    add_log_lines(
        screen.query_one(EventLog), log_lines(events) if lines is None else lines, dropped_lines
    )
    screen.query_one(DiagnosticsPanel).add(events)


def add_log_lines(log: EventLog, lines: list[tuple[str, str]], dropped: int = 0) -> None:
    """A batch's log lines, after a note of those that fell out of the intake's window."""
    if dropped:
        note = f"… {dropped} lines in one moment, not shown here (l: the whole log)"
        log.add_lines([("warning", note)])
    log.add_lines(lines)


def grow_total(bar: PhaseBar, table: ResourceTable, plan: PlanSummary) -> None:
    """Each apply phase (each step of an upgrade) plans only what is left: the bar's total
    grows by it, counted against the runs ended before this plan."""
    bar.total = max(bar.total, table.completed + plan.total)
