"""Deploy: plan summary → confirm → apply with live progress → the status dashboard.

Lifecycle events arrive through a sink that only folds them into a bounded batch
(tui/widgets/deploy/intake.py: a resource's events share one slot, log lines a window); a
10 Hz timer hands the batch to the widgets in one pass (toolong's pattern), and never a
second one before the first was shown, so a flood of Terraform events costs one redraw per
tick and a bounded amount of memory, not one of each per event, and keys stay responsive.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, Header

from npa_sop_tui.events import Event, PlanSummary
from npa_sop_tui.screens.deploy_stage import OperationStage, offered, running
from npa_sop_tui.screens.timeline import timeline_binding
from npa_sop_tui.tui.backend import OperationOutcome, QuotasUnjudged
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.deploy.fan_out import ProgressWidgets
from npa_sop_tui.tui.widgets.deploy.intake import Batch, EventIntake
from npa_sop_tui.tui.widgets.deploy.outcome_line import OutcomeLine
from npa_sop_tui.tui.widgets.deploy.plan_review import PlanReview
from npa_sop_tui.tui.widgets.deploy.progress import (
    DiagnosticsPanel,
    EventLog,
    PhaseBar,
    ResourceTable,
)
from npa_sop_tui.tui.widgets.deploy.timeline_pane import DeployTimelinePane
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.status.panels import MiniStatus

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

FLUSH_SECONDS = 0.1


class DeployScreen(Guarded, OperatorGated, Screen[None]):
    """Plan, confirm and apply one cluster spec."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "apply", "Apply", id="deploy.apply"),
        Binding("c", "cancel", "Cancel", id="deploy.cancel"),
        Binding("s", "status", "Dashboard", id="deploy.status"),
        Binding("r", "retry", "Retry", tooltip="Plan again after a failure", id="deploy.retry"),
        Binding("l", "log", "Log", tooltip="The whole operation log, with search", id="deploy.log"),
        timeline_binding("deploy"),
        Binding("escape", "leave", "Back", id="deploy.leave"),
    ]

    class PlanReady(Message):
        """The plan finished: counts and the resources it would delete or replace."""

        def __init__(self, summary: PlanSummary) -> None:
            super().__init__()
            self.summary = summary

    class QuotasUnjudgedFound(Message):
        """The preflight could not judge every quota: the user may plan on without them."""

        def __init__(self, why: str) -> None:
            super().__init__()
            self.why = why

    class DeployRequested(Message):
        def __init__(self, allow_destructive: bool) -> None:
            super().__init__()
            self.allow_destructive = allow_destructive

    class ResourceProgressed(Message):
        """A batch of lifecycle events since the last flush (folded: intake.py)."""

        def __init__(self, batch: Batch) -> None:
            super().__init__()
            self.batch = batch

        @property
        def events(self) -> list[Event]:
            return self.batch.events

    class DeployFinished(Message):
        """The plan (`step` "plan") or the apply ("deploy") ended: ok, failed or interrupted.
        `declined`: the user chose to stop there, so no failure modal tells them again."""

        def __init__(
            self, outcome: OperationOutcome, step: str = "deploy", *, declined: bool = False
        ) -> None:
            super().__init__()
            self.outcome = outcome
            self.step = step
            self.declined = declined

    stage: reactive[str] = reactive(OperationStage.PLANNING)
    """Where the screen is: planning → planned → applying (→ cancelling) → done."""

    cancels: reactive[int] = reactive(0)
    """How many times the user confirmed cancel (1 = graceful, 2 = forced)."""

    def __init__(self, spec: Any, *, spec_path: Path | None = None) -> None:
        super().__init__()
        self.spec = spec
        self.spec_path = spec_path
        self.outcome: OperationOutcome | None = None
        self._intake = EventIntake()
        self._batch_shown = True  # the last batch posted has reached the widgets
        self._op_task: asyncio.Task[Any] | None = None
        self._planned_before_phase = 0
        self._status_started = False
        self._operation_id: str | None = None
        self._allow_unknown = False  # the user chose to go on past unjudged quotas

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    @property
    def plan(self) -> PlanSummary | None:
        """The plan under review (None while planning)."""
        return self.query_one(PlanReview).plan

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="op-head"):
            yield PhaseBar(id="phase-bar")
            yield PlanReview(self.spec, id="plan-review")
        with Horizontal(id="op-body"):
            with Vertical(id="op-left"):
                yield ResourceTable(id="resources")
                yield DiagnosticsPanel(id="diagnostics")
            with Vertical(id="op-right"):
                yield EventLog(id="log")
                yield MiniStatus(
                    "Live status starts once the Kubernetes cluster exists.", id="mini-status"
                )
        yield DeployTimelinePane(id="deploy-timeline")
        yield OutcomeLine("", id="op-result")
        yield AppFooter()

    def on_mount(self) -> None:
        self.npa.cluster = self.spec.name
        self.npa.kube_context = self.npa.backend.kube_context(self.spec.name)
        self.set_interval(FLUSH_SECONDS, self._flush)
        self._run_plan()

    # -- event intake (called from the lifecycle's on_event; never touches widgets) --------

    def sink(self, event: Event) -> None:
        self._intake.append(event)
        self._operation_id = event.operation_id

    def _flush(self, *, force: bool = False) -> None:
        """Post the batch, unless the last one is still on its way (a busy loop then gets
        one bigger batch later, not a queue of them); `force` at the end of a step."""
        if not len(self._intake) or not (self._batch_shown or force):
            return
        self._batch_shown = False
        self.post_message(self.ResourceProgressed(self._intake.take()))

    @on(ResourceProgressed)
    def _progress(self, message: ResourceProgressed) -> None:
        widgets = ProgressWidgets(
            self.query_one(PhaseBar),
            self.query_one(ResourceTable),
            self.query_one(EventLog),
            self.query_one(DiagnosticsPanel),
            self.query_one(DeployTimelinePane),
        )
        try:
            if widgets.add(message.batch, planning=self.stage == OperationStage.PLANNING):
                self._start_status()
        finally:
            self._batch_shown = True

    # -- plan ------------------------------------------------------------------------------

    @work(exclusive=True, group="plan", exit_on_error=False)
    async def _run_plan(self) -> None:
        self.stage = OperationStage.PLANNING
        self.query_one(PhaseBar).phase = "planning"
        try:
            summary = await self.npa.backend.plan(
                self.spec, self.sink, allow_unknown=self._allow_unknown
            )
        except asyncio.CancelledError:
            raise
        except QuotasUnjudged as exc:
            self._flush(force=True)
            self.post_message(self.QuotasUnjudgedFound(exc.message))
            return
        except Exception as exc:
            self._flush(force=True)
            self.post_message(
                self.DeployFinished(OperationOutcome("failed", _message(exc)), "plan")
            )
            return
        self._flush(force=True)
        self.post_message(self.PlanReady(summary))

    @on(QuotasUnjudgedFound)
    def _ask_to_go_on(self, message: QuotasUnjudgedFound) -> None:
        """What `--allow-unknown` is in the CLI: asked, never assumed."""
        from npa_sop_tui.screens.modals import unjudged_quotas_modal

        def answered(yes: bool | None) -> None:
            if yes:
                self._allow_unknown = True
                self._plan_again()
            else:
                outcome = OperationOutcome("failed", message.why)
                self.post_message(self.DeployFinished(outcome, "plan", declined=True))

        self.app.push_screen(unjudged_quotas_modal(message.why), answered)

    @on(PlanReady)
    def _plan_ready(self, message: PlanReady) -> None:
        plan = message.summary
        self.stage = OperationStage.PLANNED
        bar = self.query_one(PhaseBar)
        bar.total = plan.total
        bar.phase = "planned: review and apply"
        self.query_one(PlanReview).show_plan(plan, sandbox=self.npa.sandbox)

    # -- apply -----------------------------------------------------------------------------

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        review = self.query_one(PlanReview)
        if self.stage != OperationStage.PLANNED or not review.ready:
            return
        from npa_sop_tui.screens.modals import ConfirmModal

        question = review.confirm_question()
        if question is None:
            # The plan summary is on this screen: pressing Apply is the one confirmation
            # between the wizard and the apply. Only a plan that deletes or replaces
            # something asks again, naming what it would lose.
            self.post_message(self.DeployRequested(allow_destructive=False))
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.post_message(self.DeployRequested(allow_destructive=True))

        self.app.push_screen(ConfirmModal(question, yes="Apply", danger=True), confirmed)

    @on(DeployRequested)
    def _deploy_requested(self, message: DeployRequested) -> None:
        self._run_deploy(message.allow_destructive)

    @work(exclusive=True, group="deploy", exit_on_error=False)
    async def _run_deploy(self, allow_destructive: bool) -> None:
        self.stage = OperationStage.APPLYING
        self.query_one(PlanReview).show_applying()
        # not the log filter: there `c` (cancel) would type a letter instead
        self.query_one(ResourceTable).focus()
        self._op_task = asyncio.create_task(
            self.npa.backend.deploy(
                self.spec,
                self.sink,
                allow_destructive=allow_destructive,
                allow_unknown=self._allow_unknown,
            )
        )
        try:
            await asyncio.shield(self._op_task)
            outcome = OperationOutcome("ok", "deployed")
        except asyncio.CancelledError:
            if not self._op_task.done():
                self._op_task.cancel()  # the screen itself is going away: stop Terraform too
                raise
            outcome = OperationOutcome("interrupted", "interrupted on request")
        except Exception as exc:
            outcome = OperationOutcome("failed", _message(exc))
        self._flush(force=True)
        self.post_message(self.DeployFinished(outcome))

    @on(DeployFinished)
    def _finished(self, message: DeployFinished) -> None:
        outcome, step = message.outcome, message.step
        self.outcome = outcome
        self.stage = OperationStage.DONE
        self.query_one(OutcomeLine).show_ending(outcome, step)
        if outcome.result != "ok":
            state = "failed" if outcome.result == "failed" else "stopped"
            self.query_one(ResourceTable).end_in_flight(time.time(), state=state)
        if step == "plan":
            self.query_one(PlanReview).show_plan_failed(outcome.message)
            self.query_one(PhaseBar).phase = "plan failed"
            if not message.declined:
                self._offer_retry("Plan failed", outcome.message)
        else:
            self.query_one(PlanReview).show_applied(outcome.result)
            self.query_one(PhaseBar).phase = f"deploy {outcome.result}"
            if outcome.result == "ok":
                self.set_timer(0.5, self._to_dashboard)
            elif outcome.result == "failed":
                self._offer_retry("Deploy failed", outcome.message)
        self.refresh_bindings()

    def _offer_retry(self, title: str, message: str) -> None:
        """The failure modal: Terraform's first error block; retry (r) or the log (l)."""
        from npa_sop_tui.screens.modals import FailureModal

        block = self.query_one(DiagnosticsPanel).first_error or message

        def chosen(answer: str | None) -> None:
            if answer == "retry":
                self.action_retry()
            elif answer == "log":
                self.action_log()

        self.app.push_screen(FailureModal(f"{title}: {self.spec.name}", message, block), chosen)

    def action_retry(self) -> None:
        """Plan again (a failed apply too: apply only ever runs a plan you confirmed)."""
        if self.stage != OperationStage.DONE or self.outcome is None:
            return
        if self.outcome.result == "ok" and self.plan is not None:
            return
        self._plan_again()

    def _plan_again(self) -> None:
        self.outcome = None
        self.cancels = 0
        self._op_task = None
        self.query_one(DiagnosticsPanel).reset()
        self.query_one(OutcomeLine).clear()
        self.query_one(PlanReview).restart()
        self._run_plan()

    def action_log(self) -> None:
        """The whole log of this operation (from its file), searchable."""
        from npa_sop_tui.screens.log_viewer import LogViewerScreen
        from npa_sop_tui.tui.operation_log import operation_log

        path, lines = operation_log(self.spec.name, self._operation_id)
        if not lines:  # nothing on disk yet (or no inventory): what this screen received
            lines = list(self.query_one(EventLog).lines)
        self.app.push_screen(LogViewerScreen(f"Operation log of {self.spec.name}", lines, path))

    def action_timeline(self) -> None:
        """Enlarge the timeline pane over the body (or put it back)."""
        self.query_one(DeployTimelinePane).toggle()

    def _to_dashboard(self) -> None:
        if self.is_current:
            from npa_sop_tui.screens.status import StatusScreen

            self.app.switch_screen(StatusScreen(self.spec.name))

    # -- cancel ----------------------------------------------------------------------------

    def action_cancel(self) -> None:
        task = self._op_task
        if task is None or task.done():
            return
        from npa_sop_tui.screens.modals import interrupt_modal

        modal = interrupt_modal("deploy", forced=self.cancels > 0)

        def confirmed(yes: bool | None) -> None:
            if yes and task is not None and not task.done():
                self.cancels += 1
                self.stage = OperationStage.CANCELLING
                self.query_one(PhaseBar).phase = (
                    "interrupting (graceful)…" if self.cancels == 1 else "force-stopping…"
                )
                task.cancel()

        self.app.push_screen(modal, confirmed)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        failed = self.outcome is not None and self.outcome.result != "ok"
        return offered(action, self.stage, failed=failed, status_started=self._status_started)

    def operation_running(self) -> bool:
        return running(self.stage)

    @property
    def operation_label(self) -> str:
        return f"The deploy of {self.spec.name}"

    def watch_stage(self) -> None:
        self.refresh_bindings()

    @on(Button.Pressed, "#leave")
    def action_leave(self) -> None:
        if running(self.stage):
            self.notify("Cancel the deploy first (c).", severity="warning")
            return
        self.app.pop_screen()

    def action_status(self) -> None:
        from npa_sop_tui.screens.status import StatusScreen

        self.app.push_screen(StatusScreen(self.spec.name))

    # -- live status while applying --------------------------------------------------------

    def _start_status(self) -> None:
        if self._status_started:
            return
        self._status_started = True
        self.refresh_bindings()
        feed = self.npa.backend.status_snapshots(self.spec.name, interval=self.npa.status_interval)
        self.query_one(MiniStatus).follow(feed)


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__
