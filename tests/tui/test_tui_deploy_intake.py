"""The deploy screen's event intake: whatever the event rate, one batch per flush holds at
most one slot per resource (its first start and its latest end), a window of log lines, and
the other events in their order; errors are never left out."""

from __future__ import annotations

from npa_sop_tui.events import (
    Diagnostic,
    LogLine,
    PhaseChanged,
    PlanSummary,
    ResourceFinished,
    ResourceProgress,
    ResourceStarted,
)
from npa_sop_tui.tui.widgets.deploy.intake import MAX_OTHERS, MAX_RUNS, EventIntake

OP = "op"


def _start(addr: str, ts: float) -> ResourceStarted:
    return ResourceStarted(ts=ts, operation_id=OP, addr=addr, module="k8s", action="create")


def _end(addr: str, ts: float) -> ResourceFinished:
    return ResourceFinished(
        ts=ts, operation_id=OP, addr=addr, module="k8s", action="create", elapsed=1
    )


def test_a_flood_folds_into_one_slot_per_resource_and_a_window_of_lines() -> None:
    intake = EventIntake(window=100)
    intake.append(PhaseChanged(operation_id=OP, phase="apply:k8s", label="Creating"))
    for n in range(50_000):
        addr = f"module.k8s.null_resource.w[{n % 20}]"
        intake.append(_start(addr, n))
        intake.append(
            ResourceProgress(
                ts=n, operation_id=OP, addr=addr, module="k8s", action="create", elapsed=1
            )
        )
        intake.append(LogLine(ts=n, operation_id=OP, stream="terraform", text=f"line {n}"))
        intake.append(_end(addr, n + 0.5))
    batch = intake.take()
    assert isinstance(batch.events[0], PhaseChanged)
    resource_events = batch.events[1:]
    # 20 resources × MAX_RUNS runs kept apart × (start, end), whatever the flood's length
    assert len(resource_events) == 20 * MAX_RUNS * 2
    last = resource_events[20 * (MAX_RUNS - 1) * 2 :][:2]  # w[0]'s last run: the newest
    assert isinstance(last[0], ResourceStarted) and isinstance(last[1], ResourceFinished)
    assert last[0].ts == 49_980 and last[1].ts == 49_980.5
    assert batch.folded_ends == 20 * (2_500 - MAX_RUNS)  # every run still counts
    assert len(batch.lines) == 100 and batch.lines[-1][1].endswith("created in 1s")
    assert batch.dropped_lines == 150_001 - 100  # started, log, finished lines; no progress
    assert len(intake) == 0 and intake.take().events == []


def test_order_of_other_events_is_kept_and_errors_are_never_dropped() -> None:
    intake = EventIntake()
    intake.append(_start("a", 0))
    intake.append(PlanSummary(operation_id=OP, phase="plan:full", add=3, change=0, remove=0))
    intake.append(_end("a", 1))  # joins a's slot, before the plan (the state as of now)
    for n in range(MAX_OTHERS + 10):
        intake.append(Diagnostic(operation_id=OP, severity="warning", summary=f"w{n}"))
    intake.append(Diagnostic(operation_id=OP, severity="error", summary="boom"))
    events = intake.take().events
    assert [type(e).__name__ for e in events[:3]] == [
        "ResourceStarted",
        "ResourceFinished",
        "PlanSummary",
    ]
    diagnostics = [e for e in events if isinstance(e, Diagnostic)]
    assert len(diagnostics) == MAX_OTHERS - 1 + 1 and diagnostics[-1].summary == "boom"


def test_a_run_folded_away_still_counts_as_a_run() -> None:
    """The recipe re-runs a resource in a later phase (its kube-context step on every apply):
    two runs within one batch keep one slot but both count, so the bar reaches its total."""
    intake = EventIntake()
    addr = "module.k8s.terraform_data.kubectl_cluster_context"
    phase = PhaseChanged(operation_id="op", phase="apply-2", label="second apply")
    for event in (_start(addr, 1), _end(addr, 2), phase, _start(addr, 3), _end(addr, 4)):
        intake.append(event)
    batch = intake.take()
    # each run where it began: the second after the phase that re-ran it
    kinds = [type(e).__name__ for e in batch.events]
    assert kinds == ["ResourceStarted", "ResourceFinished", "PhaseChanged", *kinds[:2]]
    assert batch.folded_ends == 0
    for i in range(MAX_RUNS + 3):  # a stream that restarts it without end stays bounded
        intake.append(_start(addr, 10 + 2 * i))
        intake.append(_end(addr, 11 + 2 * i))
    batch = intake.take()
    assert len(batch.events) == 2 * MAX_RUNS and batch.folded_ends == 3
    ended = sum(isinstance(e, ResourceFinished) for e in batch.events) + batch.folded_ends
    assert ended == MAX_RUNS + 3
