"""The dashboard tells the truth: ages tick every second from the last success, a failing
source says why and since when, verdicts from the inventory show as they are."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.status.model import Freshness, Verdict
from npa_sop_tui.tui.app import NpaSopApp

from .fakes import FixedBackend, _status
from testkit.tui import wait_for

pytestmark = pytest.mark.tui


class AgingBackend(FixedBackend):
    """One snapshot: Kubernetes answered 2 s ago, Slurm failed after an answer 30 s ago."""

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        status = _status()
        now = time.time()
        status.freshness = {
            "kube": Freshness(state="fresh", updated_at=now - 2),
            "slurm": Freshness(
                state="stale", updated_at=now - 30, stale_since=now - 1, error="sinfo timed out"
            ),
        }
        status.verdict = Verdict(state="destroyed", summary="destroyed: npa tore it down")
        yield status
        await asyncio.Event().wait()


def _freshness(screen: StatusScreen) -> str:
    return str(screen.query_one("#freshness").render())


async def test_freshness_ticks_and_stale_sources_say_why() -> None:
    app = NpaSopApp(AgingBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        started = time.time()
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        assert isinstance(screen, StatusScreen)
        await wait_for(pilot, lambda: screen.status is not None)
        first = _freshness(screen)
        # The ages count from the snapshot's times (2 s and 30 s before it was made) plus the
        # time the app took to show it, which a busy machine stretches: bound it by the clock.
        waited = int(time.time() - started) + 1
        kube_age = int(re.search(r"kube fresh (\d+)s", first).group(1))  # type: ignore[union-attr]
        slurm_age = int(re.search(r"slurm STALE (\d+)s", first).group(1))  # type: ignore[union-attr]
        assert 2 <= kube_age <= 2 + waited and 30 <= slurm_age <= 30 + waited, first
        assert "(sinfo timed out)" in first
        await wait_for(pilot, lambda: _freshness(screen) != first)
        later = _freshness(screen)
        assert "kube fresh" in later and "slurm STALE" in later and later != first
        assert "DESTROYED" in str(screen.query_one("#verdict").render())
