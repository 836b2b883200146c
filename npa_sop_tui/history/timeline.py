"""An operation's timeline: each Terraform resource as a bar from its start to its end.

Built from the operation's events (live, as they arrive, or read back from its NDJSON log):
`resource_started` opens a bar at the event's time, `resource_finished`/`resource_failed`
closes it. A bar still open is running (a live deploy, or a run that was killed).

The critical path is inferred from the times, because Terraform's event stream carries no
dependency graph: walking back from the bar that ended last, each step takes the bar that
ended last before the current one started (within `HANDOFF_SLACK` seconds). That is the
chain the operation waited on; shortening any other bar would not have ended it sooner.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from npa_sop_tui.events import (
    Event,
    OperationFinished,
    OperationStarted,
    PhaseChanged,
    ResourceFailed,
    ResourceFinished,
    ResourceStarted,
)

HANDOFF_SLACK = 0.5
"""Seconds a resource may start before the one it waited on reports its end (the runner
reads Terraform's lines in order, but two events can carry timestamps a little apart)."""


@dataclass(frozen=True)
class Bar:
    """One resource's run in this operation."""

    addr: str
    module: str
    action: str
    start: float
    end: float | None = None
    """None while it runs (or when the run stopped before it ended)."""
    failed: bool = False
    critical: bool = False

    def duration(self, now: float | None = None) -> float:
        end = self.end if self.end is not None else now
        return max(0.0, (end if end is not None else self.start) - self.start)

    @property
    def label(self) -> str:
        """The address without its module prefix (the module is shown as a group)."""
        prefix = f"{self.module}."
        return (
            self.addr[len(prefix) :] if self.module and self.addr.startswith(prefix) else self.addr
        )


@dataclass
class Timeline:
    """The bars of one operation, in start order, and where its phases began."""

    operation_id: str = ""
    operation: str = ""
    cluster: str = ""
    started: float | None = None
    finished: float | None = None
    result: str | None = None
    bars: list[Bar] = field(default_factory=list)
    phases: list[tuple[float, str]] = field(default_factory=list)

    @property
    def span(self) -> tuple[float, float] | None:
        """(first start, last end) of the bars; None without bars."""
        if not self.bars:
            return None
        start = min(b.start for b in self.bars)
        ends = [b.end if b.end is not None else b.start for b in self.bars]
        if self.finished is not None:
            ends.append(self.finished)
        return start, max(ends)

    def modules(self) -> list[tuple[str, list[Bar]]]:
        """Bars grouped by module, modules in the order their first bar started."""
        groups: dict[str, list[Bar]] = {}
        for bar in self.bars:
            groups.setdefault(bar.module or "(root)", []).append(bar)
        return list(groups.items())

    @property
    def critical_path(self) -> list[Bar]:
        return [b for b in self.bars if b.critical]


class TimelineBuilder:
    """Folds events into a Timeline; feed it a live stream or a log read back."""

    def __init__(self) -> None:
        self.timeline = Timeline()
        self._open: dict[str, int] = {}  # addr → index of its running bar

    def add(self, event: Event) -> None:
        t = self.timeline
        if isinstance(event, OperationStarted):
            t.operation_id, t.operation, t.cluster = event.operation_id, event.operation, event.name
            t.started = event.ts
        elif isinstance(event, PhaseChanged):
            t.phases.append((event.ts, event.label))
        elif isinstance(event, ResourceStarted):
            self._open[event.addr] = len(t.bars)
            t.bars.append(Bar(event.addr, event.module, event.action, start=event.ts))
        elif isinstance(event, ResourceFinished | ResourceFailed):
            failed = isinstance(event, ResourceFailed)
            index = self._open.pop(event.addr, None)
            if index is None:  # its start is not in the log: Terraform says how long it took
                t.bars.append(
                    Bar(
                        event.addr,
                        event.module,
                        event.action,
                        start=event.ts - event.elapsed,
                        end=event.ts,
                        failed=failed,
                    )
                )
            else:
                t.bars[index] = replace(t.bars[index], end=event.ts, failed=failed)
        elif isinstance(event, OperationFinished):
            t.finished, t.result = event.ts, event.result

    def build(self) -> Timeline:
        """The timeline so far, bars in start order, the critical path marked."""
        bars = sorted(self.timeline.bars, key=lambda b: (b.start, b.module, b.addr))
        self.timeline.bars = mark_critical_path(bars)
        self._open = {}
        for i, bar in enumerate(self.timeline.bars):
            if bar.end is None:
                self._open[bar.addr] = i
        return self.timeline


def mark_critical_path(bars: list[Bar]) -> list[Bar]:
    """`bars` (start order) with the inferred critical path marked; see the module doc."""
    bars = [replace(b, critical=False) for b in bars]
    if not bars:
        return bars
    ends = [b.end if b.end is not None else float("inf") for b in bars]
    current = max(range(len(bars)), key=lambda i: (ends[i], bars[i].start))
    chain = {current}
    while True:
        start = bars[current].start
        before = [
            i for i in range(len(bars)) if i not in chain and ends[i] <= start + HANDOFF_SLACK
        ]
        if not before:
            break
        current = max(before, key=lambda i: (ends[i], bars[i].start))
        chain.add(current)
    return [replace(b, critical=True) if i in chain else b for i, b in enumerate(bars)]


def duration_text(seconds: float) -> str:
    """Compact durations: 42s, 3m05s, 1h02m."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def timeline_of(events: Iterable[Event]) -> Timeline:
    builder = TimelineBuilder()
    for event in events:
        builder.add(event)
    return builder.build()
