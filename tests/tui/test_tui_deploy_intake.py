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
from npa_sop_tui.tui.widgets.deploy.intake import MAX_OTHERS, EventIntake

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
    assert len(resource_events) == 40  # 20 resources × (start, end)
    first = resource_events[:2]
    assert isinstance(first[0], ResourceStarted) and isinstance(first[1], ResourceFinished)
    assert first[0].ts == 49_980 and first[1].ts == 49_980.5  # the newest run
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
