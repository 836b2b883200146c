"""The deploy screen's event intake: every event between two frames folded into one batch
whose size is bounded by the resources, not by the events.

The lifecycle calls `append` for each event (thousands per second on a big apply, or in a
flood); the screen takes one `Batch` per flush. Nothing here grows with the stream:

- the log lines are worded as they arrive and kept in a window of `LOG_WINDOW` (what the
  log pane can show; the whole log is the operation's NDJSON file);
- a run of a resource shares one slot, where it began: its start and its latest end (or
  progress), so a resource that starts, ticks a hundred times and finishes between two
  frames costs two events; a resource run again in the same batch (a later phase re-runs
  it) gets a slot where that run began, up to `MAX_RUNS`, then the last slot takes the
  newest run and the ended ones are counted (`folded_ends`), so every run still counts;
- the other events (phases, plans, diagnostics, the end) keep their order; past
  `MAX_OTHERS` in one batch, warnings and notes are left to the log lines (errors never).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    ResourceFailed,
    ResourceFinished,
    ResourceProgress,
    ResourceStarted,
)
from npa_sop_tui.tui.widgets.deploy.progress import LOG_WINDOW, log_lines, show_events

MAX_OTHERS = 1_000
"""Non-resource events one batch keeps in order (phases, plans, diagnostics)."""
MAX_SLOTS = 20_000
"""Resources one batch holds; a flood of new addresses beyond it goes to the log only."""
MAX_RUNS = 4
"""Runs of one resource one batch keeps apart, each where it began (the recipe re-runs a
resource in a later phase, after that phase's plan); more are folded into the last."""

_RESOURCE = (ResourceStarted, ResourceProgress, ResourceFinished, ResourceFailed)


@dataclass
class Batch:
    """What the widgets get at one flush."""

    events: list[Event] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)
    """(level, text) log lines, in the order their events came."""
    dropped_lines: int = 0
    """Lines that fell out of the window before this flush."""
    folded_ends: int = 0
    """Runs that ended and were started again within this batch (the recipe re-runs some
    resources in a later phase): their ends are folded away but still count as runs."""


@dataclass
class _Slot:
    """One resource's events in a batch: its first start, then its latest other event."""

    start: Event | None = None
    latest: Event | None = None
    folded_ends: int = 0

    @property
    def ended(self) -> bool:
        return isinstance(self.latest, ResourceFinished | ResourceFailed)

    def add(self, event: Event) -> None:
        if isinstance(event, ResourceStarted) and self.start is None and self.latest is None:
            self.start = event
        elif isinstance(event, ResourceStarted):
            if isinstance(self.latest, ResourceFinished | ResourceFailed):
                self.folded_ends += 1  # the run that ended is still a run
            self.start, self.latest = event, None  # started again: the new run
        elif isinstance(event, ResourceProgress) and isinstance(
            self.latest, ResourceFinished | ResourceFailed
        ):
            pass  # a late tick does not reopen an ended resource
        else:
            self.latest = event

    def events(self) -> list[Event]:
        return [e for e in (self.start, self.latest) if e is not None]


class EventIntake:
    """Folds events into the next batch; `take` hands it over and starts a new one."""

    def __init__(self, *, window: int = LOG_WINDOW) -> None:
        self._lines: deque[tuple[str, str]] = deque(maxlen=window)
        self._order: list[Event | _Slot] = []  # other events, and resources' runs
        self._slots: dict[str, _Slot] = {}  # each resource's latest run in this batch
        self._runs: dict[str, int] = {}
        self._others = 0
        self._lines_in = 0
        self.operation_id: str | None = None

    def __len__(self) -> int:
        return len(self._order) + len(self._lines)

    def append(self, event: Event) -> None:
        self.operation_id = event.operation_id
        said = log_lines((event,))  # worded now: the event itself may be folded away
        self._lines.extend(said)
        self._lines_in += len(said)
        if isinstance(event, LogLine):
            return
        if isinstance(event, _RESOURCE) and event.addr:
            slot = self._slots.get(event.addr)
            again = isinstance(event, ResourceStarted) and slot is not None and slot.ended
            if slot is None or (again and self._runs[event.addr] < MAX_RUNS):
                if slot is None and len(self._slots) >= MAX_SLOTS:
                    return
                # a new run starts here, after what came between (a later phase's plan)
                slot = self._slots[event.addr] = _Slot()
                self._runs[event.addr] = self._runs.get(event.addr, 0) + 1
                self._order.append(slot)
            slot.add(event)
            return
        if self._others >= MAX_OTHERS and not _must_keep(event):
            return
        self._others += 1
        self._order.append(event)

    def take(self) -> Batch:
        events: list[Event] = []
        folded = 0
        for item in self._order:
            if isinstance(item, _Slot):
                events.extend(item.events())
                folded += item.folded_ends
            else:
                events.append(item)
        lines = list(self._lines)
        batch = Batch(events, lines, self._lines_in - len(lines), folded_ends=folded)
        self._lines.clear()
        self._order.clear()
        self._slots.clear()
        self._runs.clear()
        self._others = 0
        self._lines_in = 0
        return batch


def _must_keep(event: Event) -> bool:
    """Events a batch never leaves out: errors, and everything but diagnostics."""
    return not isinstance(event, Diagnostic) or event.severity == "error"


class ShowsOperationEvents:
    """A screen running an operation (destroy, upgrade): its events go to `sink` from the
    operation's worker and are shown by `_flush`, a batch at a time, in the progress
    widgets `operation_body` composed. The screen creates `_intake` and calls `_flush` on
    its own timer."""

    _intake: EventIntake

    def sink(self, event: Event) -> None:
        self._intake.append(event)

    def _flush(self) -> None:
        if not len(self._intake):
            return
        batch = self._intake.take()
        show_events(
            self,  # type: ignore[arg-type]  # mixed into a Screen
            batch.events,
            batch.lines,
            batch.dropped_lines,
            batch.folded_ends,
        )
