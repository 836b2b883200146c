"""Upgrade: pick the Soperator version, read what changes, then watch each step run.

The same plan `npa soperator upgrade` prints (the operator's releases in place; Kubernetes
one minor at a time, the control plane then every node group; the expected time; the
workers that will be drained) is shown before anything runs. Running it streams every
step's events into the deploy screen's widgets; at the end the active checks are read and
the status dashboard is one key away.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Static

from npa_sop_tui.tui.backend import OperationOutcome
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, markup
from npa_sop_tui.tui.widgets.deploy.intake import EventIntake, ShowsOperationEvents
from npa_sop_tui.tui.widgets.deploy.progress import (
    PhaseBar,
    ResourceTable,
    operation_body,
)
from npa_sop_tui.tui.widgets.footer import AppFooter

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp


def newest_version() -> str:
    from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS

    return max(SUPPORTED_VERSIONS, key=lambda v: tuple(int(p) for p in v.split(".")))


class UpgradeScreen(Guarded, OperatorGated, ShowsOperationEvents, Screen[None]):
    """Plan an upgrade of one cluster, then run it after the user asks."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back", id="upgrade.leave"),
        Binding("s", "status", "Status", tooltip="The cluster's dashboard", id="upgrade.status"),
    ]

    running: reactive[bool] = reactive(False)
    """True while a step runs (leaving is blocked)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.cluster_name = name
        self.planned_for: str | None = None  # the version the shown plan goes to
        self.outcome: OperationOutcome | None = None
        self._intake = EventIntake()  # bounded, however fast events come (deploy's too)

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="upgrade-form"):
            with Horizontal(classes="buttons"):
                yield Static(markup("Upgrade [b]$name[/] to Soperator", name=self.cluster_name))
                yield Input(newest_version(), id="upgrade-to", max_length=16)
                yield Button("Plan (⏎)", id="upgrade-plan")
                yield Button("Upgrade", id="upgrade-run", variant="warning", disabled=True)
            with VerticalScroll(id="upgrade-plan-box"):
                yield Static("", id="upgrade-plan-text", markup=False)
        yield from operation_body()
        yield AppFooter()

    def on_mount(self) -> None:
        self.npa.cluster = self.cluster_name
        self.query_one("#upgrade-to", Input).focus()
        self.set_interval(0.1, self._flush)
        self._plan(newest_version())

    @on(Input.Submitted, "#upgrade-to")
    @on(Button.Pressed, "#upgrade-plan")
    def _asked_plan(self) -> None:
        if not self.running:
            self._plan(self.query_one("#upgrade-to", Input).value.strip())

    @work(exclusive=True, group="upgrade-plan", exit_on_error=False)
    async def _plan(self, to: str) -> None:
        text = self.query_one("#upgrade-plan-text", Static)
        run = self.query_one("#upgrade-run", Button)
        run.disabled, self.planned_for = True, None
        if self.outcome is not None and self.outcome.result != "ok":
            self.outcome = None  # after a failed step: plan what is left, then run it
        text.update(f"Planning the upgrade to {to} …")
        try:
            lines = await self.npa.backend.upgrade_plan(self.cluster_name, to)
        except Exception as exc:  # a version npa cannot deploy, no deployed spec: said here
            hint = getattr(exc, "hint", None)
            said = f"No upgrade to {to}: {getattr(exc, 'message', None) or exc}"
            text.update(said + (f"\n  hint: {hint}" if hint else ""))
            return
        text.update("\n".join(lines))
        has_steps = not any(line.startswith("  note: nothing to do") for line in lines)
        self.planned_for = to if has_steps else None
        run.disabled = not has_steps

    @on(Button.Pressed, "#upgrade-run")
    def _asked_run(self) -> None:
        if self.running or self.planned_for is None or self.outcome is not None:
            return
        self._run(self.planned_for)

    @work(exclusive=True, group="upgrade", exit_on_error=False)
    async def _run(self, to: str) -> None:
        self.running = True
        for widget in ("#upgrade-run", "#upgrade-plan", "#upgrade-to"):
            self.query_one(widget).disabled = True
        # the plan was read: the progress gets the room (the plan still scrolls)
        self.query_one("#upgrade-plan-box").add_class("-running")
        try:
            outcome = await self.npa.backend.upgrade(self.cluster_name, to, self.sink)
        except asyncio.CancelledError:
            outcome = OperationOutcome("interrupted", "interrupted")
            raise
        except Exception as exc:  # a refused or failed step: its message, Terraform's first error
            outcome = OperationOutcome("failed", str(getattr(exc, "message", None) or exc))
        finally:
            self.running = False
            self._flush()
            self._finished(outcome)

    def _finished(self, outcome: OperationOutcome) -> None:
        self.outcome = outcome
        result = self.query_one("#op-result", Static)
        if outcome.result == "ok":
            result.update(
                markup(
                    "[green]Upgraded $name:[/] $why. Press [b]s[/b] for its status.",
                    name=self.cluster_name,
                    why=outcome.message,
                )
            )
        else:
            self.query_one(ResourceTable).end_in_flight(time.time(), state="failed")
            result.update(
                markup(
                    f"[red]Upgrade {outcome.result}:[/] $why\nThe steps done stay done; "
                    "plan again to see what is left.",
                    name=self.cluster_name,
                    why=outcome.message,
                )
            )
            self.query_one("#upgrade-plan", Button).disabled = False
            self.query_one("#upgrade-to", Input).disabled = False
        self.query_one(PhaseBar).phase = f"upgrade {outcome.result}"
        self.refresh_bindings()

    def operation_running(self) -> bool:
        return self.running

    @property
    def operation_label(self) -> str:
        return f"The upgrade of {self.cluster_name}"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave":
            return None if self.running else True
        if action == "status":
            return True if self.outcome is not None and not self.running else None
        return True

    def action_status(self) -> None:
        if self.outcome is not None and not self.running:
            self.npa.show_status(self.cluster_name)

    def action_leave(self) -> None:
        if not self.running:
            self.app.pop_screen()
