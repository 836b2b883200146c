"""One batch of lifecycle events handed to the deploy screen's widgets in one pass.

The screen folds events from the lifecycle into a bounded batch (intake.py) and flushes it
once per frame at most; this is where a batch reaches the phase bar, the resource table,
the log, the diagnostics and the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npa_sop_tui.events import Event, PhaseChanged, PlanSummary
from npa_sop_tui.tui.widgets.deploy.intake import Batch
from npa_sop_tui.tui.widgets.deploy.progress import (
    DiagnosticsPanel,
    EventLog,
    PhaseBar,
    ResourceTable,
    add_log_lines,
    grow_total,
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

    def add(self, batch: Batch, *, planning: bool) -> bool:
        """Show a batch; True when one of its events started a phase after which the
        cluster's kube context exists (live status can start)."""
        events: Sequence[Event] = batch.events
        self.table.completed += batch.folded_ends  # runs the intake folded away
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
        add_log_lines(self.log, batch.lines, batch.dropped_lines)
        self.diagnostics.add(events)
        self.timeline.add(events)
        return kube_ready
