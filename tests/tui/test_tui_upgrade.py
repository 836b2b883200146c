"""Upgrade from the app, on a sandbox cluster deployed by the CLI (real Terraform on the
stand-in derived from the recipe): the screen shows the plan `npa soperator upgrade
--plan-only` prints, word for word, before anything runs; a version npa cannot deploy is
said on the screen; running it streams each step's resources and ends upgraded, with the
status dashboard one key away. Offered from the home screen's command palette."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static

from npa_sop_tui.cli.entry import main
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.upgrade import UpgradeScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import sandbox_backend
from npa_sop_tui.tui.widgets.deploy.progress import ResourceTable

from testkit.sandbox_cli import deploy_in_sandbox
from testkit.tui import home_loaded, wait_for

pytestmark = [pytest.mark.tui, pytest.mark.terraform, pytest.mark.slow]

SPEC = """apiVersion: npa.soperator/v0.0.1
name: upg
slurm_operator_version: "4.1.6"
k8s_version: "1.34"
workers:
  - name: gpu
    platform: gpu-h200-sxm
    preset: 8gpu-128vcpu-1600gb
    fabric: fabric-3
    size: 1
  - name: cpu
    size: 2
"""


def test_upgrade_from_the_app_shows_the_clis_plan_then_runs_it(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    args = ["soperator", "upgrade", "--name", "upg", "--to", "4.1.13", "--plan-only"]
    assert main([*args, "--sandbox"]) == 0
    cli_plan = capsys.readouterr().out.strip()
    assert "Kubernetes 1.34 → 1.35" in cli_plan and "Kubernetes 1.35 → 1.36" in cli_plan
    asyncio.run(_in_the_app(cli_plan))


def _text(screen: UpgradeScreen) -> str:
    return str(screen.query_one("#upgrade-plan-text", Static).render())


async def _in_the_app(cli_plan: str) -> None:
    app = NpaSopApp(sandbox_backend(sleep_seconds=0))
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_for(pilot, lambda: home.selected == "upg")
        assert "Upgrade upg" in [c.title for c in home.palette_commands()]
        home.action_upgrade()
        await wait_for(pilot, lambda: isinstance(app.screen, UpgradeScreen))
        screen = app.screen
        assert isinstance(screen, UpgradeScreen)
        await wait_for(pilot, lambda: screen.planned_for == "4.1.13")
        run = screen.query_one("#upgrade-run", Button)
        assert _text(screen) == cli_plan  # the same plan, before anything runs
        assert not run.disabled and screen.outcome is None

        # a version without a recipe release: said here, nothing to run
        box = screen.query_one("#upgrade-to", Input)
        box.value = "5.0.0"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _text(screen).startswith("No upgrade to 5.0.0"))
        assert "no recipe release deploys it yet" in _text(screen) and run.disabled

        box.value = "4.1.13"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.planned_for == "4.1.13" and not run.disabled)
        run.press()
        await wait_for(pilot, lambda: screen.outcome is not None, timeout=600)
        assert screen.outcome is not None
        assert screen.outcome.result == "ok", screen.outcome.message
        assert screen.outcome.message.startswith("Soperator 4.1.13, Kubernetes 1.36 (3 step(s))")
        rows = screen.query_one(ResourceTable).row_count
        assert rows > 0  # each step's resources were streamed into the deploy widgets
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
