"""Destroy: type the cluster's name to confirm, watch teardown stream, get an honest result."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Static

from npa_sop_tui.tui.backend import OperationOutcome
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, markup
from npa_sop_tui.tui.widgets.deploy.intake import EventIntake, ShowsOperationEvents
from npa_sop_tui.tui.widgets.deploy.progress import (
    DiagnosticsPanel,
    EventLog,
    PhaseBar,
    ResourceTable,
    operation_body,
)
from npa_sop_tui.tui.widgets.footer import AppFooter

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp


class DestroyScreen(Guarded, OperatorGated, ShowsOperationEvents, Screen[None]):
    """Tear a cluster down after the user types its name."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back", id="destroy.leave"),
        Binding("r", "retry", "Retry", tooltip="Run destroy again", id="destroy.retry"),
        Binding(
            "l", "log", "Log", tooltip="The whole operation log, with search", id="destroy.log"
        ),
    ]

    class DestroyRequested(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    class DestroyFinished(Message):
        def __init__(self, outcome: OperationOutcome) -> None:
            super().__init__()
            self.outcome = outcome

    running: reactive[bool] = reactive(False)
    """True while Terraform destroy runs (leaving is blocked)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.cluster_name = name
        self.outcome: OperationOutcome | None = None
        self._intake = EventIntake()  # bounded, however fast events come (deploy's too)

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="destroy-confirm"):
            where = "in the SANDBOX" if self.npa.sandbox else "and every cloud resource it owns"
            yield Static(
                markup(
                    f"[b red]Destroy $name[/] {where}.\nType the cluster name to confirm:",
                    name=self.cluster_name,
                ),
                id="destroy-question",
            )
            with Horizontal(classes="buttons"):
                yield Input(placeholder=self.cluster_name, id="confirm-name")
                yield Button("Destroy (⏎)", id="destroy", variant="error")
            yield Static("", id="destroy-error", classes="inline-error", markup=False)
        yield from operation_body()
        yield AppFooter()

    def on_mount(self) -> None:
        self.npa.cluster = self.cluster_name
        self.query_one("#confirm-name", Input).focus()
        self.set_interval(0.1, self._flush)

    @on(Input.Submitted, "#confirm-name")
    @on(Button.Pressed, "#destroy")
    def _confirm(self) -> None:
        if self.running or self.outcome is not None:
            return
        typed = self.query_one("#confirm-name", Input).value.strip()
        if typed != self.cluster_name:
            self.query_one("#destroy-error", Static).update(
                f"That is not the cluster's name; type {self.cluster_name!r} exactly. "
                "Nothing was destroyed."
            )
            return
        self.query_one("#destroy-error", Static).update("")
        self.post_message(self.DestroyRequested(self.cluster_name))

    @on(DestroyRequested)
    def _requested(self, message: DestroyRequested) -> None:
        self._run(message.name)

    @work(exclusive=True, group="destroy", exit_on_error=False)
    async def _run(self, name: str) -> None:
        self.running = True
        self.query_one("#destroy", Button).disabled = True
        self.query_one("#confirm-name", Input).disabled = True
        try:
            outcome = await self.npa.backend.destroy(name, self.sink)
        except asyncio.CancelledError:
            outcome = OperationOutcome("interrupted", "interrupted")
            raise
        except Exception as exc:  # shown in the failure modal, with Terraform's first error
            outcome = OperationOutcome("failed", str(getattr(exc, "message", None) or exc))
        finally:
            self.running = False
            self._flush()
            self.post_message(self.DestroyFinished(outcome))

    @on(DestroyFinished)
    def _finished(self, message: DestroyFinished) -> None:
        self.outcome = message.outcome
        result = self.query_one("#op-result", Static)
        o = message.outcome
        if o.result == "ok":
            result.update(
                markup(
                    "[green]Destroyed $name:[/] $why. Press [b]esc[/b] for the cluster list.",
                    name=self.cluster_name,
                    why=o.message,
                )
            )
        else:
            failed = o.result == "failed"
            table = self.query_one(ResourceTable)
            table.end_in_flight(time.time(), state="failed" if failed else "stopped")
            if failed:
                self._offer_retry(o.message)
            lines = [
                markup(f"[red]Destroy {o.result}:[/] $why", why=o.message),
                *(markup("  - $address", address=r) for r in o.remaining[:20]),
                markup(
                    "Run destroy again after fixing the cause; nothing is reported gone that isn't."
                ),
            ]
            result.update(Content("\n").join(lines))
        self.query_one(PhaseBar).phase = f"destroy {o.result}"
        self.refresh_bindings()

    def _offer_retry(self, message: str) -> None:
        from npa_sop_tui.screens.modals import FailureModal

        block = self.query_one(DiagnosticsPanel).first_error or message

        def chosen(answer: str | None) -> None:
            if answer == "retry":
                self.action_retry()
            elif answer == "log":
                self.action_log()

        title = f"Destroy failed: {self.cluster_name}"
        self.app.push_screen(FailureModal(title, message, block), chosen)

    def action_retry(self) -> None:
        """Run destroy again (the name was confirmed already)."""
        if self.running or self.outcome is None or self.outcome.result == "ok":
            return
        self.outcome = None
        self.query_one(DiagnosticsPanel).reset()
        self.query_one("#op-result", Static).update("")
        self.post_message(self.DestroyRequested(self.cluster_name))

    def action_log(self) -> None:
        from npa_sop_tui.screens.log_viewer import LogViewerScreen
        from npa_sop_tui.tui.operation_log import operation_log

        path, lines = operation_log(self.cluster_name)
        if not lines:
            lines = list(self.query_one(EventLog).lines)
        title = f"Operation log of {self.cluster_name}"
        self.app.push_screen(LogViewerScreen(title, lines, path))

    def operation_running(self) -> bool:
        return self.running

    @property
    def operation_label(self) -> str:
        return f"The destroy of {self.cluster_name}"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave":
            return None if self.running else True
        if action == "retry":
            failed = self.outcome is not None and self.outcome.result == "failed"
            if self.outcome is not None and self.outcome.result == "ok":
                return False  # destroyed: nothing to retry, so no key for it
            return True if failed and not self.running else None
        if action == "log":
            return True if self.outcome is not None or self.running else None
        return True

    def action_leave(self) -> None:
        if self.running:
            return
        from npa_sop_tui.screens.home import HomeScreen

        # back to a fresh home list, whatever led here (status → destroy)
        while len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        if not isinstance(self.app.screen, HomeScreen):
            self.app.switch_screen(HomeScreen())
