"""The plan screen shows the spec's price as the wizard's review does (per hour and per
day, the sandbox's too), fetched without holding up the plan, and says when it is
unavailable."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from npa_sop_tui.events import PlanSummary
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.plan_price import ASKING, NO_CLOUD

from .fakes import FixedBackend
from testkit.tui import cut_off, planned, wait_for

pytestmark = pytest.mark.tui

PLAN = PlanSummary(ts=0.0, operation_id="op", phase="plan", add=3, change=0, remove=0)


async def _plan_screen(pilot: Any, app: NpaSopApp, tmp_path: Path) -> DeployScreen:
    screen = await planned(pilot, tmp_path / "cluster.yaml")
    assert isinstance(screen, DeployScreen)
    return screen


def _price(screen: DeployScreen) -> str:
    return str(screen.query_one("#plan-price", Static).render())


async def test_the_plan_screen_shows_the_sandbox_price(
    sandbox_backend: Any, tmp_path: Path
) -> None:
    async def plan(spec: Any, sink: Any, *, allow_unknown: bool = False) -> PlanSummary:
        return PLAN  # the plan itself is tested elsewhere; the price path here is real

    sandbox_backend.plan = plan
    app = NpaSopApp(sandbox_backend)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await _plan_screen(pilot, app, tmp_path)
            await wait_for(pilot, lambda: _price(screen) != ASKING, timeout=60)
            text = _price(screen)
            assert "Hourly price (sandbox prices) ≈ $" in text
            assert "per day" in text and "control plane $" in text
            assert "3 to add" in str(screen.query_one("#plan-summary", Static).render())

            # the price and the plan fit whole at 80 columns (the resource table's own
            # width at 80x24 is a known, separate matter)
            def mine() -> list[str]:
                return [p for p in cut_off(screen) if "plan-price" in p or "plan-summary" in p]

            # the new text is laid out a refresh after it arrived (later on a busy machine)
            await wait_for(pilot, lambda: not mine(), timeout=10)
            region = screen.query_one("#plan-price").region
            assert region.height >= 2 and region.bottom <= 24
    finally:
        await sandbox_backend.close()


class NoPlanBackend(FixedBackend):
    """Plans three resources at once."""

    async def plan(self, spec: Any, sink: Any, *, allow_unknown: bool = False) -> PlanSummary:
        return PLAN


class SlowPrice(NoPlanBackend):
    """A billing calculator that answers only when told to."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = threading.Event()

    async def price_estimate(self, spec: Any) -> str | None:
        threading.Event.wait(self.answer, 30)  # blocking, as a slow SDK call is
        return "Hourly price ≈ $1.00 ($24.00 per day): cpu $0.50, control plane $0.50"


async def test_the_plan_does_not_wait_for_the_price(tmp_path: Path) -> None:
    backend = SlowPrice()
    app = NpaSopApp(backend)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _plan_screen(pilot, app, tmp_path)
        await pilot.press("tab")  # the screen answers keys while the price is out
        assert _price(screen) == ASKING
        assert "3 to add" in str(screen.query_one("#plan-summary", Static).render())
        backend.answer.set()
        await wait_for(pilot, lambda: "$24.00 per day" in _price(screen))


async def test_without_a_cloud_the_price_says_it_is_unavailable(tmp_path: Path) -> None:
    app = NpaSopApp(NoPlanBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _plan_screen(pilot, app, tmp_path)
        await wait_for(pilot, lambda: _price(screen) != ASKING)
        assert _price(screen) == NO_CLOUD
        assert "unavailable" in _price(screen)
