"""The deploy screen reads the lifecycle's own events: a real sandbox stream, replayed.

The stream is recorded once from the sandbox backend (real Terraform on the stand-in recipe)
and replayed into the screen, so what the screen shows can be checked against exactly the
events that produced it: table rows and their durations, the bar, phases, log words.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from npa_sop_tui.events import (
    Event,
    EventSink,
    PhaseChanged,
    PlanSummary,
    ResourceFinished,
    ResourceStarted,
    describe,
)
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import Backend
from npa_sop_tui.tui.widgets.deploy.progress import (
    DiagnosticsPanel,
    EventLog,
    PhaseBar,
    ResourceTable,
)

from testkit.tui import wait_for

pytestmark = [pytest.mark.terraform, pytest.mark.tui, pytest.mark.slow]


class ReplayBackend(Backend):
    """Plays recorded plan and deploy streams into the screen's sink, then keeps applying."""

    def __init__(
        self, summary: PlanSummary, plan_events: list[Event], deploy_events: list[Event]
    ) -> None:
        self.summary = summary
        self.plan_events = plan_events
        self.deploy_events = deploy_events

    async def plan(self, spec: Any, sink: EventSink, *, allow_unknown: bool = False) -> PlanSummary:
        for event in self.plan_events:
            sink(event)
        return self.summary

    async def deploy(
        self, spec: Any, sink: EventSink, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        for event in self.deploy_events:
            sink(event)
        await asyncio.Event().wait()  # stays "applying": the screen is inspected as it is

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        await asyncio.Event().wait()
        yield None


async def _record(sandbox_backend: Any, spec_file: Path) -> tuple[Any, PlanSummary, list, list]:
    spec, issues = sandbox_backend.check(sandbox_backend.load_spec(spec_file))
    assert spec is not None, issues
    plan_events: list[Event] = []
    deploy_events: list[Event] = []
    try:
        summary = await sandbox_backend.plan(spec, plan_events.append)
        await sandbox_backend.deploy(spec, deploy_events.append, allow_destructive=False)
    finally:
        await sandbox_backend.close()
    return spec, summary, plan_events, deploy_events


async def test_deploy_screen_shows_a_real_sandbox_stream(
    sandbox_backend: Any, spec_file: Path
) -> None:
    spec, summary, plan_events, deploy_events = await _record(sandbox_backend, spec_file)
    assert summary.add > 0 and any(isinstance(e, PlanSummary) for e in plan_events)
    started = {e.addr: e for e in deploy_events if isinstance(e, ResourceStarted)}
    finished = {e.addr: e for e in deploy_events if isinstance(e, ResourceFinished)}
    assert finished and set(finished) == set(started)

    app = NpaSopApp(ReplayBackend(summary, plan_events, deploy_events))
    async with app.run_test(size=(120, 40)) as pilot:
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)

        box = str(screen.query_one("#plan-summary", Static).render())
        assert f"{summary.add} to add, {summary.change} to change, {summary.remove} to destroy" in (
            box
        )
        assert "destructive" not in box
        log = screen.query_one(EventLog)
        plan_labels = [e.label for e in plan_events if isinstance(e, PhaseChanged)]
        headings = [text for level, text in log.lines if level == "heading"]
        assert headings == plan_labels
        assert describe(summary).splitlines()[0] in "\n".join(t for _, t in log.lines)

        screen.post_message(DeployScreen.DeployRequested(allow_destructive=False))
        table = screen.query_one(ResourceTable)
        await wait_for(pilot, lambda: table.row_count == len(finished))

        # one row per resource, done, with the time Terraform took between start and finish
        for addr, done in finished.items():
            state, duration, action, resource = (str(c) for c in table.get_row(addr))
            assert (state, action, resource) == ("done", done.action, addr)
            assert duration == f"{done.ts - started[addr].ts:.0f}s"
        assert table.counts() == {"in flight": 0, "done": len(finished), "failed": 0, "stopped": 0}

        bar = screen.query_one(PhaseBar)
        # the bar counts runs: the recipe re-runs some resources in a later phase (its kube
        # context step is replaced on every apply), one row each but a run per phase
        runs = sum(1 for e in deploy_events if isinstance(e, ResourceFinished))
        assert runs > len(finished) and bar.done == bar.total == runs
        deploy_labels = [e.label for e in deploy_events if isinstance(e, PhaseChanged)]
        assert bar.phase == deploy_labels[-1] == "deploy ok"
        assert [t for lv, t in log.lines if lv == "heading"] == plan_labels + deploy_labels
        logged = {t for _, t in log.lines}
        assert {describe(e) for e in finished.values()} <= logged
        assert screen.query_one(DiagnosticsPanel).items == []
