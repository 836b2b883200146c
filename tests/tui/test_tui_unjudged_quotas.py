"""Quotas the preflight cannot judge: the app asks whether to plan on without them (what
`--allow-unknown` is in the CLI), never assumes it, and a No stops the plan once, quietly.

The sandbox's `quota-hidden` scenario: credentials that may read quota usage but not the
limits, so two quotas of the spec cannot be judged. Real Terraform on the stand-in recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.events import Event
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.modals import ConfirmModal, FailureModal
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import QuotasUnjudged
from npa_sop_tui.tui.widgets.deploy.outcome_line import OutcomeLine

from testkit.tui import wait_for

pytestmark = [pytest.mark.terraform, pytest.mark.tui]


@pytest.fixture(autouse=True)
def hidden_quota_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "quota-hidden")


def _spec(backend: Any, path: Path) -> Any:
    spec, issues = backend.check(backend.load_spec(path))
    assert spec is not None, issues
    return spec


async def test_the_backend_stops_a_plan_on_unjudged_quotas_unless_allowed(
    sandbox_backend: Any, spec_file: Path
) -> None:
    spec = _spec(sandbox_backend, spec_file)
    events: list[Event] = []
    with pytest.raises(QuotasUnjudged) as caught:
        await sandbox_backend.plan(spec, events.append)
    assert "compute.instance.count (limit hidden)" in caught.value.message
    assert "--allow-unknown" not in caught.value.render()  # the app asks; no CLI flag to name
    assert not [e for e in events if getattr(e, "phase", "") == "init"]  # Terraform never ran

    summary = await sandbox_backend.plan(spec, events.append, allow_unknown=True)
    assert summary.add > 0


async def test_the_app_asks_before_planning_without_unjudged_quotas(
    sandbox_backend: Any, spec_file: Path
) -> None:
    app = NpaSopApp(sandbox_backend, status_interval=1.0)
    spec = _spec(sandbox_backend, spec_file)
    async with app.run_test(size=(80, 24)) as pilot:
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), timeout=60)
        question = app.screen.question  # type: ignore[attr-defined]
        assert "compute.instance.count (limit hidden)" in question
        assert "Plan without them?" in question
        deploy = app.screen_stack[-2]
        assert isinstance(deploy, DeployScreen)

        await pilot.press("enter")  # the focused answer is No: a stray Enter never goes on
        await wait_for(pilot, lambda: deploy.stage == OperationStage.DONE)
        assert app.screen is deploy  # declined: no failure modal to dismiss as well
        assert not isinstance(app.screen, FailureModal)
        assert deploy.outcome is not None and deploy.outcome.result == "failed"
        assert "limit hidden" in deploy.outcome.message
        assert "plan again" in str(deploy.query_one(OutcomeLine).render())

        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), timeout=60)
        await pilot.press("y")
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED, timeout=90)
        assert deploy.plan is not None and deploy.plan.add > 0

        await pilot.press("a")  # the apply goes on without them too, as the user chose
        await wait_for(pilot, lambda: deploy.outcome is not None, timeout=120)
        assert deploy.outcome is not None and deploy.outcome.result == "ok", deploy.outcome
