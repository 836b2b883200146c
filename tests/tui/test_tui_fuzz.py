"""Fuzz: random printable text (rich in `[ ] \\ : = /`) typed into every input of every screen.

Cluster data is hostile too: node reasons, partition names, log lines and Terraform
diagnostics that look like markup and carry escape sequences (a clipboard write, a title).
The app must stay up, show no error modal (the autouse `unexpected_errors` fixture fails the
test on any), keep the typed text as typed, and draw no control it was sent.
"""

from __future__ import annotations

import asyncio
import random
import string
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen
from textual.widgets import Input

from npa_sop_tui.events import (
    Diagnostic,
    EventSink,
    LogLine,
    PhaseChanged,
    ResourceFailed,
    ResourceStarted,
)
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.modals import PathModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.wizard import STEPS, WizardScreen
from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor

from .fakes import T0, FixedBackend, _status
from testkit.hostile import ATTACK, OSC52, TITLE, assert_inert
from testkit.tui import CPU_SPEC, screen_text, wait_for

pytestmark = [pytest.mark.tui, pytest.mark.slow]

SEED = 1313
NASTY = ["[", "]", "[/]", "[b]", "[/x]", "[@click=app.quit]x", "\\", "\\[", "a:b=c/d", "[red"]
BIASED = string.ascii_letters + string.digits + string.punctuation + " " + "[]\\:=/" * 6


def texts(rng: random.Random, count: int = 1) -> list[str]:
    """A few fixed markup-lookalikes and `count` random printable strings."""
    out = list(rng.sample(NASTY, 2))
    for _ in range(count):
        out.append("".join(rng.choice(BIASED) for _ in range(rng.randint(1, 10))))
    return out


class HostileBackend(FixedBackend):
    """FixedBackend whose cluster data looks like markup wherever text comes from outside."""

    def list_clusters(self) -> list[ClusterRow]:
        return [
            ClusterRow("demo", f"[/]{OSC52}", "deploy [failed]", "[@click=app.quit]x [/x]"),
            ClusterRow("train", "us-central1", "failed", "deploy failed \\[ 2026"),
        ]

    async def deploy(
        self, spec: Any, sink: EventSink, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        op, addr = "fuzz", 'module.x.null_resource.y["[/]"]'
        sink(PhaseChanged(ts=T0, operation_id=op, phase="apply:full", label="[/] phase"))
        sink(ResourceStarted(ts=T0, operation_id=op, addr=addr, module="x", action="create"))
        sink(LogLine(ts=T0, operation_id=op, stream="terraform", text=f"[/] log {TITLE}[b]"))
        sink(
            Diagnostic(
                ts=T0,
                operation_id=op,
                severity="error",
                summary="Error: [/x] bad",
                detail="  on main.tf line 1, in [@click=app.quit]x:\n  [/]",
            )
        )
        sink(
            ResourceFailed(
                ts=T0,
                operation_id=op,
                addr=addr,
                module="x",
                action="create",
                elapsed=1.0,
                message="[@click=app.quit]",
            )
        )
        await asyncio.Event().wait()

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        status = _status()
        assert status.slurm is not None
        status.slurm.nodes.append(
            SlurmNode(
                name="[/]-0",
                state="drained",
                flags=["DRAIN"],
                display="drained",
                partitions=["[b]main"],
                gres="gpu:[/x]:8",
                reason=f"[/] maintenance by [@click=app.quit]me {ATTACK}",
            )
        )
        status.verdict.summary = "[/] summary"
        yield status
        await asyncio.Event().wait()


def _alive(app: NpaSopApp) -> None:
    assert app.is_running and app.return_code is None, "the app stopped"


async def type_everywhere(
    pilot: Any, screen: Screen[Any], rng: random.Random, *, enter: bool = False
) -> int:
    """Type random texts into every shown input of `screen`; returns how many inputs."""
    app: NpaSopApp = pilot.app
    boxes = [b for b in screen.query(Input) if b.display and not b.disabled and b.is_on_screen]
    for box in boxes:
        for text in texts(rng):
            box.focus()
            box.value = ""
            await pilot.press(*text)
            _alive(app)
            if box.type == "text" and box.restrict is None:  # number fields drop letters
                assert box.value == text[: box.max_length or None], (box.id, text, box.value)
            if enter and rng.random() < 0.3:
                await pilot.press("enter")
                _alive(app)
                await _back_to(pilot, screen)
    return len(boxes)


async def _back_to(pilot: Any, screen: Screen[Any]) -> None:
    """Close whatever Enter opened (a dialog) so typing goes on where it was."""
    for _ in range(3):
        if pilot.app.screen is screen:
            return
        await pilot.press("escape")
        await pilot.pause()
    assert pilot.app.screen is screen


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NpaSopApp:
    monkeypatch.chdir(tmp_path)  # Enter in "Write to" writes wherever the text points
    spec = tmp_path / "cluster.yaml"
    spec.write_text(CPU_SPEC)
    return NpaSopApp(HostileBackend(), spec_path=None)


async def _on(pilot: Any, kind: type[Screen[Any]], opener: Callable[[], Any]) -> Screen[Any]:
    opener()
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, kind), timeout=20)
    await pilot.pause()
    return pilot.app.screen


async def test_fuzz_every_input_on_every_screen(app: NpaSopApp, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    typed = 0
    async with app.run_test(size=(100, 30)) as pilot:
        home = await _on(pilot, HomeScreen, lambda: None)
        await wait_for(pilot, lambda: len(home.rows) == 2)
        modal = await _on(pilot, PathModal, app.action_open_spec)
        typed += await type_everywhere(pilot, modal, rng)
        await pilot.press("escape")

        app.open_spec(tmp_path / "cluster.yaml")
        wizard = await _on(pilot, WizardScreen, lambda: None)
        assert isinstance(wizard, WizardScreen)
        for step in STEPS:
            wizard.step = step
            await pilot.pause()
            typed += await type_everywhere(pilot, wizard, rng, enter=True)
        wizard.step = "pools"
        await pilot.pause()
        editor = await _on(pilot, PoolEditor, lambda: wizard.query_one("#pool-edit").press())
        typed += await type_everywhere(pilot, editor, rng, enter=True)
        await pilot.press("ctrl+s")  # a refused save shows the problem beside the field
        _alive(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is wizard)
        app.pop_screen()

        spec, _ = app.backend.check(app.backend.load_spec(tmp_path / "cluster.yaml"))
        deploy = await _on(pilot, DeployScreen, lambda: app.deploy(spec))
        assert isinstance(deploy, DeployScreen)
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED)
        deploy.post_message(DeployScreen.DeployRequested(allow_destructive=False))
        await wait_for(pilot, lambda: len(deploy.query_one("#log").lines) >= 3)
        typed += await type_everywhere(pilot, deploy, rng)
        viewer = await _on(pilot, LogViewerScreen, deploy.action_log)
        await pilot.press("slash")
        typed += await type_everywhere(pilot, viewer, rng, enter=True)
        app.pop_screen()
        deploy._op_task.cancel()  # type: ignore[union-attr]
        await wait_for(pilot, lambda: deploy.stage == OperationStage.DONE)
        app.pop_screen()

        status = await _on(pilot, StatusScreen, lambda: app.show_status("demo"))
        await wait_for(pilot, lambda: status.status is not None)  # type: ignore[attr-defined]
        await pilot.pause()
        assert_inert(screen_text(app))  # the reason's escape sequences are shown, not sent
        await pilot.press("slash")
        typed += await type_everywhere(pilot, status, rng, enter=True)
        app.pop_screen()

        destroy = await _on(pilot, DestroyScreen, lambda: app.destroy("demo"))
        typed += await type_everywhere(pilot, destroy, rng, enter=True)
        _alive(app)
    assert typed >= 10, f"only {typed} inputs were reached"
