"""One batch of lifecycle events handed to the deploy screen's widgets in one pass.

The screen buffers events from the lifecycle and flushes them on a timer; this is where a
batch reaches the phase bar, the resource table, the log, the diagnostics and the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npa_sop_tui.events import Event, PhaseChanged, PlanSummary
from npa_sop_tui.tui.widgets.deploy.progress import (
    DiagnosticsPanel,
    EventLog,
    PhaseBar,
    ResourceTable,
    grow_total,
    log_lines,
)
from npa_sop_tui.tui.widgets.deploy.timeline_pane import DeployTimelinePane

KUBE_READY_PHASES = ("plan:full", "apply:full")
"""Phases that start once the Kubernetes cluster (and so its kube context) exists."""


@dataclass
class ProgressWidgets:
    bar: PhaseBar
    table: ResourceTable
    log: EventLog
    diagnostics: DiagnosticsPanel
    timeline: DeployTimelinePane

    def add(self, events: Sequence[Event], *, planning: bool) -> bool:
        """Show `events`; True when one of them started a phase after which the cluster's
        kube context exists (live status can start)."""
        kube_ready = False
        folded = 0  # events[:folded] are in the table
        for i, ev in enumerate(events):
            match ev:
                case PhaseChanged():
                    self.bar.phase = ev.label
                    kube_ready = kube_ready or ev.phase in KUBE_READY_PHASES
                case PlanSummary() if not planning:
                    # each apply phase plans only what is left: grow the total by it, counted
                    # against what was done before this plan (not later in the same batch)
                    self.table.apply(events[folded:i])
                    folded = i
                    grow_total(self.bar, self.table, ev)
        self.table.apply(events[folded:])
        self.bar.done = self.table.completed
        self.log.add_lines(log_lines(events))
        self.diagnostics.add(events)
        self.timeline.add(events)
        return kube_ready
