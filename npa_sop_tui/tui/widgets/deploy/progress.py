"""Deploy/destroy progress widgets: phase + bar, resource table, bounded filterable log.

Events arrive far faster than a terminal can redraw (thousands per second on a big apply),
so nothing here renders per event: the owning screen buffers events and hands them over in
batches (toolong's pattern), and the log keeps a bounded window of lines.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Input, Label, ProgressBar, RichLog, Static

from npa_sop_tui.events import (
    Diagnostic,
    Event,
    PhaseChanged,
    ResourceFailed,
    ResourceFinished,
    ResourceProgress,
    ResourceStarted,
    describe,
    level_of,
)
from npa_sop_tui.tui.safety import Guarded, markup, search_pattern
from npa_sop_tui.tui.widgets.table import PlainTable

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


class ResourceTable(PlainTable):
    """In-flight, done and failed resources with their durations.

    Events update the model at once (so counts are exact), but the table itself is redrawn
    at most SYNC_SECONDS apart: re-rendering rows is the costliest thing on the deploy
    screen, and a twice-a-second table keeps key presses quick under thousands of events/s.
    """

    SYNC_SECONDS = 0.5

    def __init__(self, **kwargs: object) -> None:
        super().__init__(zebra_stripes=True, **kwargs)
        self.resources: dict[str, _Resource] = {}
        self._dirty: dict[str, _Resource] = {}
        self._counts = {"in flight": 0, "done": 0, "failed": 0, "stopped": 0}
        self._synced_at = 0.0

    def on_mount(self) -> None:
        # fixed widths: rows arrive in bursts, and re-measuring columns on every burst both
        # costs time and makes the layout jump. The address goes last: on a narrow terminal
        # it is the one that gets cut, never the state or the duration.
        self.add_column("State", key="state", width=9)
        self.add_column("Duration", key="dur", width=8)
        self.add_column("Action", key="action", width=7)
        self.add_column("Resource", key="addr", width=60)
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
                case ResourceFailed():
                    res.state, res.ended = "failed", ev.ts
            if before != res.state:
                self._counts[before] -= 1
                self._counts[res.state] += 1
            self._dirty[ev.addr] = res

    def end_in_flight(self, ended: float, *, state: str = "stopped") -> int:
        """The operation is over: resources still in flight stop counting (their rows read
        `stopped`, or `failed`), so no timer runs on for something that is not running."""
        count = 0
        for res in self.resources.values():
            if res.state == "in flight":
                self._counts["in flight"] -= 1
                self._counts[state] += 1
                res.state, res.ended = state, ended
                self._dirty[res.address] = res
                count += 1
        self.sync(force=True)
        return count

    KEY_QUIET_SECONDS = 0.3
    """Right after a key press the next frame is the key's: the table's redraw waits."""
    MAX_DEFER_SECONDS = 2.0

    def sync(self, *, force: bool = False) -> None:
        """Show changed resources and the running durations of in-flight ones.

        Any change here re-renders every visible row of the DataTable (its render cache is
        keyed by an update counter), which costs tens of milliseconds: done right after a
        key press, it would delay the key's own frame. So it waits until the keyboard has
        been quiet for a moment (at most MAX_DEFER_SECONDS behind)."""
        now = time.monotonic()
        key_at = float(getattr(self.app, "last_key_at", 0.0))
        recent_key = now - key_at < self.KEY_QUIET_SECONDS
        if recent_key and not force and now - self._synced_at < self.MAX_DEFER_SECONDS:
            return
        self._synced_at = now
        dirty, self._dirty = self._dirty, {}
        for res in self.resources.values():
            if res.state == "in flight" and res.address not in dirty and res.address in self.rows:
                self.update_cell(res.address, "dur", _duration(res), update_width=False)
        for res in dirty.values():
            self._show(res)

    def _show(self, res: _Resource) -> None:
        state = Text(res.state, style=STATE_COLOURS.get(res.state, ""))
        if res.address in self.rows:
            self.update_cell(res.address, "action", res.action, update_width=False)
            self.update_cell(res.address, "state", state, update_width=False)
            self.update_cell(res.address, "dur", _duration(res), update_width=False)
        else:
            self.add_row(state, _duration(res), res.action, res.address, key=res.address)


def _duration(res: _Resource) -> str:
    seconds = (res.ended or time.time()) - res.started
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f}m"


class EventLog(Guarded, Vertical):
    """The operation log: a bounded window of lines with a live filter (substring or /regex/)."""

    filter_text: reactive[str] = reactive("")
    """What the filter box holds; empty shows every line."""

    def __init__(self, *, window: int = LOG_WINDOW, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.lines: deque[tuple[str, str]] = deque(maxlen=window)
        self._matcher: re.Pattern[str] | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter log (text or /regex/)", id="log-filter")
        yield RichLog(id="event-log", max_lines=LOG_WINDOW, wrap=False, markup=False)

    def add_lines(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (level, text) lines; only those matching the filter are drawn."""
        log = self.query_one(RichLog)
        shown: list[Text] = []
        for level, text in lines:
            self.lines.append((level, text))
            if self._matches(text):
                shown.append(_line(level, text))
        if shown:
            # one write per batch keeps redraws proportional to batches, not lines
            log.write(Text("\n").join(shown[-LOG_WINDOW:]))

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
        log = self.query_one(RichLog)
        log.clear()
        shown = [_line(lv, t) for lv, t in self.lines if self._matches(t)]
        if shown:
            log.write(Text("\n").join(shown))


LINE_STYLES = {"error": "red", "warning": "yellow", "heading": "bold"}


def _line(level: str, text: str) -> Text:
    return Text(text, style=LINE_STYLES.get(level, ""))


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
        """A new attempt: its first error is what a failure modal will show."""
        self.first_error = None

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
    """The headline in the event's colour, its detail lines plain (never markup)."""
    head, _, detail = describe(event).partition("\n")
    colour = "red" if level_of(event) == "error" else "yellow"
    marked = markup(f"[{colour}]$head[/]", head=head)
    return Content.assemble(marked, "\n", detail) if detail else marked


def first_error_block(items: Iterable[Event]) -> str | None:
    """Terraform's first error, as a block of text (headline and detail), or None."""
    for event in items:
        if isinstance(event, Diagnostic | ResourceFailed) and level_of(event) == "error":
            return describe(event)
    return None
