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


async def test_review_step_shows_the_sandbox_price(sandbox_backend: Any, spec_file: Path) -> None:
    app = NpaSopApp(sandbox_backend, spec_path=spec_file)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
            wizard = app.screen
            wizard.step = "review"
            price = wizard.query_one("#price", Static)
            await wait_for(pilot, lambda: price.display, timeout=60)
            text = str(price.render())
            assert "Hourly price (sandbox prices) ≈ $" in text
            assert "cpu $" in text and "control plane $" in text
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
