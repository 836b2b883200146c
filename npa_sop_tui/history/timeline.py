"""An operation's timeline: each Terraform resource as a bar from its start to its end.

Built from the operation's events (live, as they arrive, or read back from its NDJSON log):
`resource_started` opens a bar at the event's time, `resource_finished`/`resource_failed`
closes it. A bar still open is running (a live deploy, or a run that was killed). A resource
has one bar per action (a replacement's delete and create are two); a later run of the same
resource and action replaces the earlier one, so the timeline holds at most one bar per
resource and action however long the event stream (and at most `MAX_BARS`).

The critical path is computed from the dependency graph Terraform plans with (the
operation's `dependency_graph` event, terraform/graph.py): walking back from the bar that
ended last, each step takes, among the resources the current one waited on (for a delete:
those that waited on it, which Terraform destroys first), the one whose bar ended last.
That is the chain the operation waited on; shortening any other bar would not have ended it
sooner. Its span runs from the first bar's start to the last bar's end. A log without a
graph (an older one) infers the chain from the times instead, and says so.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from npa_sop_tui.events import (
    DependencyGraph,
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
MAX_BARS = 10_000
"""Bars one timeline holds; resources beyond are counted (`Timeline.left_out`), not drawn."""


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
    dependencies: dict[str, list[str]] | None = None
    """The dependency graph (resource → what it waits on); None: the path is inferred."""
    left_out: int = 0
    """Resources not drawn: beyond MAX_BARS."""

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
        """The path's bars, first first."""
        return sorted((b for b in self.bars if b.critical), key=lambda b: (b.start, b.addr))

    def path_span(self, now: float) -> float:
        """Seconds from the path's first start to its last end (or `now` while it runs):
        how long the operation waited on it, gaps between its bars included."""
        path = self.critical_path
        if not path:
            return 0.0
        ends = [b.end if b.end is not None else now for b in path]
        return max(0.0, max(ends) - path[0].start)

    @property
    def path_source(self) -> str:
        """How the path was found: from the dependency graph, or inferred from the times."""
        return "dependency graph" if self.dependencies is not None else "inferred from times"


class TimelineBuilder:
    """Folds events into a Timeline; feed it a live stream or a log read back. Its memory
    is bounded by the resources (one bar per resource and action), not by the events."""

    def __init__(self) -> None:
        self.timeline = Timeline()
        self._bars: dict[tuple[str, str], Bar] = {}

    def add(self, event: Event) -> None:
        t = self.timeline
        if isinstance(event, OperationStarted):
            t.operation_id, t.operation, t.cluster = event.operation_id, event.operation, event.name
            t.started = event.ts
        elif isinstance(event, PhaseChanged):
            if len(t.phases) < 64:  # a handful per operation; a broken stream stays bounded
                t.phases.append((event.ts, event.label))
        elif isinstance(event, DependencyGraph):
            t.dependencies = event.dependencies
        elif isinstance(event, ResourceStarted):
            self._put(Bar(event.addr, event.module, event.action, start=event.ts))
        elif isinstance(event, ResourceFinished | ResourceFailed):
            failed = isinstance(event, ResourceFailed)
            key = (event.addr, event.action)
            open_bar = self._bars.get(key)
            if open_bar is not None and open_bar.end is None:
                self._bars[key] = replace(open_bar, end=event.ts, failed=failed)
            else:  # its start is not in the log: Terraform says how long it took
                start = event.ts - event.elapsed
                bar = Bar(event.addr, event.module, event.action, start, event.ts, failed)
                self._put(bar)
        elif isinstance(event, OperationFinished):
            t.finished, t.result = event.ts, event.result

    def _put(self, bar: Bar) -> None:
        key = (bar.addr, bar.action)
        if key not in self._bars and len(self._bars) >= MAX_BARS:
            self.timeline.left_out += 1
            return
        self._bars.pop(key, None)  # a run again: the newest run, in its own place
        self._bars[key] = bar

    def build(self) -> Timeline:
        """The timeline so far, bars in start order, the critical path marked."""
        bars = sorted(self._bars.values(), key=lambda b: (b.start, b.module, b.addr))
        self.timeline.bars = mark_critical_path(bars, self.timeline.dependencies)
        return self.timeline


def mark_critical_path(
    bars: list[Bar], dependencies: dict[str, list[str]] | None = None
) -> list[Bar]:
    """`bars` (start order) with the critical path marked; see the module doc."""
    bars = [replace(b, critical=False) if b.critical else b for b in bars]
    if not bars:
        return bars
    ends = [b.end if b.end is not None else float("inf") for b in bars]
    last = max(range(len(bars)), key=lambda i: (ends[i], bars[i].start))
    if dependencies is None:
        chain = _chain_by_times(bars, ends, last)
    else:
        chain = _chain_by_graph(bars, ends, last, dependencies)
    return [replace(b, critical=True) if i in chain else b for i, b in enumerate(bars)]


def _chain_by_graph(
    bars: list[Bar], ends: list[float], last: int, dependencies: dict[str, list[str]]
) -> set[int]:
    from npa_sop_tui.terraform.graph import resource_of

    by_resource: dict[str, list[int]] = {}
    for i, bar in enumerate(bars):
        by_resource.setdefault(resource_of(bar.addr), []).append(i)
    waited_on_by: dict[str, list[str]] = {}  # the reverse edges, for deletes
    for resource, needs in dependencies.items():
        for need in needs:
            waited_on_by.setdefault(need, []).append(resource)
    chain, current = {last}, last
    while True:
        bar = bars[current]
        resource = resource_of(bar.addr)
        before = (
            waited_on_by.get(resource, [])
            if bar.action == "delete"
            else dependencies.get(resource, [])
        )
        candidates = [
            i
            for other in before
            for i in by_resource.get(other, [])
            if i not in chain and ends[i] <= bar.start + HANDOFF_SLACK
        ]
        # the same resource's other action (a replacement's delete before its create)
        candidates += [
            i
            for i in by_resource.get(resource, [])
            if i not in chain and ends[i] <= bar.start + HANDOFF_SLACK
        ]
        if not candidates:
            return chain
        current = max(candidates, key=lambda i: (ends[i], bars[i].start))
        chain.add(current)


def _chain_by_times(bars: list[Bar], ends: list[float], last: int) -> set[int]:
    """Without a graph: each step takes the bar that ended last before the current one
    started (within HANDOFF_SLACK)."""
    order = sorted(range(len(bars)), key=lambda i: (ends[i], bars[i].start))
    sorted_ends = [ends[i] for i in order]
    chain, current = {last}, last
    while True:
        limit = bisect.bisect_right(sorted_ends, bars[current].start + HANDOFF_SLACK)
        pick = next((order[k] for k in range(limit - 1, -1, -1) if order[k] not in chain), None)
        if pick is None:
            return chain
        chain.add(pick)
        current = pick


def duration_text(seconds: float) -> str:
    """Compact durations: 42s, 3m05s, 1h02m."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


NICE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200)
"""Tick spacings in seconds a time axis chooses from (round numbers of s, min, h)."""


def time_ticks(total: float, room: int) -> list[float]:
    """Seconds since the start at which a time axis `total` seconds long puts a tick, at
    most `room` of them, at a round spacing (1s, 2s, 5s, 10s, 15s, 30s, 1m, 2m, 5m …)."""
    room = max(2, room)
    step = next((s for s in NICE_STEPS if total / s <= room - 1), NICE_STEPS[-1])
    while total / step > room - 1:
        step *= 2
    count = int(total // step)
    return [i * step for i in range(count + 1)]


def timeline_of(events: Iterable[Event]) -> Timeline:
    builder = TimelineBuilder()
    for event in events:
        builder.add(event)
    return builder.build()
