"""The wizard's review step shows the hourly price (billing calculator); the deploy screen
gets preflight, repair and GPU-check lines as they happen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from npa_sop_tui.events import GpuCheckReported, RepairReported
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import log_lines

from testkit.tui import wait_for

pytestmark = pytest.mark.tui


@pytest.mark.parametrize("size", [(120, 40), (60, 20)], ids=["120x40", "60x20"])
async def test_review_step_shows_the_sandbox_price(
    sandbox_backend: Any, spec_file: Path, size: tuple[int, int]
) -> None:
    """The price, and at 60x20 (a 24-column pane) wrapped between words, never inside one
    ('filesystem/controller-sp' / 'ool')."""
    app = NpaSopApp(sandbox_backend, spec_path=spec_file)
    try:
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
            wizard = app.screen
            wizard.step = "review"
            price = wizard.query_one("#price", Static)
            await wait_for(pilot, lambda: price.display and price.region.area, timeout=60)
            text = str(price.render())
            assert "Hourly price (sandbox prices) ≈ $" in text
            assert "cpu $" in text and "control plane $" in text
            assert "filesystem controller-spool $" in text
            drawn = price.render_lines(price.region.reset_offset)
            words = {w for strip in drawn for w in "".join(s.text for s in strip).split()}
            assert words <= set(text.split()), words - set(text.split())
    finally:
        await sandbox_backend.close()


def test_gate_events_reach_the_deploy_screen() -> None:
    lines = log_lines(
        [
            GpuCheckReported(operation_id="x", pool="gpu", node="gpu-1", status="FAIL",
                             check="vectorAdd.result", message="boom"),
            RepairReported(operation_id="x", repair="worker-recovery", result="not-needed"),
        ]
    )  # fmt: skip
    assert lines == [
        ("error", "GPU check gpu/gpu-1 vectorAdd.result FAIL: boom"),
        ("info", "repair worker-recovery: not-needed"),
    ]
