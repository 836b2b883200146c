"""The run dialog (`r` on the dashboard or a node): a command or a template, the pool, nodes,
GPUs per node and a time limit. It only builds the request; the job screen submits it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.tui.safety import Guarded, plain
from npa_sop_tui.tui.widgets.footer import AppFooter

COMMAND = "command"  # the Select value meaning "the command typed below"


@dataclass
class RunChoice:
    """What the dialog asks to run."""

    request: JobRequest
    pool: str | None


class RunDialog(Guarded, ModalScreen[RunChoice | None]):
    # Fits 80×24 with the buttons in view: two fields a row, no blank lines.
    DEFAULT_CSS = """
    RunDialog { align: center middle; }
    RunDialog .dialog { width: 78; max-width: 100%; height: auto; max-height: 100%;
                        padding: 0 1; border: round $accent; }
    RunDialog .row { height: 3; }
    RunDialog .row Label { width: 11; padding: 1 0 0 0; }
    RunDialog .row Label.second { width: 12; padding: 1 0 0 1; }
    RunDialog .row Input { width: 1fr; }
    RunDialog #run-template { width: 1fr; }
    /* one line: a template's summary wrapped to two and drew the box over the Command field */
    RunDialog #run-template #label { text-wrap: nowrap; text-overflow: ellipsis; }
    RunDialog #run-error { color: $error; height: auto; }
    RunDialog .buttons { height: 3; align-horizontal: right; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="run.cancel"),
        Binding("ctrl+s", "submit", "Run", id="run.submit"),
    ]

    def __init__(self, *, pool: str | None = None, template: str | None = None) -> None:
        super().__init__()
        self.pool = pool
        self.template = template
        self._answered = False

    def compose(self) -> ComposeResult:
        from npa_sop_tui.jobs.templates import load_templates

        options: list[tuple[Any, str]] = [("a command (type it below)", COMMAND)]
        # a template's name and summary come from a file in the home: shown, never markup
        options += [(plain(f"{t.name}: {t.summary}"[:70]), t.name) for t in load_templates()]
        with Vertical(classes="dialog"):
            yield Static("Run a job on the cluster (Slurm, through the login node)")
            with Horizontal(classes="row"):
                yield Label("What")
                yield Select(
                    options, value=self.template or COMMAND, allow_blank=False, id="run-template"
                )
            with Horizontal(classes="row"):
                yield Label("Command")
                yield Input(placeholder="e.g. nvidia-smi -L", id="run-command")
            with Horizontal(classes="row"):
                yield Label("Pool")
                yield Input(self.pool or "", placeholder="any", id="run-pool")
                yield Label("Nodes", classes="second")
                yield Input(placeholder="1 / template's", id="run-nodes", type="integer")
            with Horizontal(classes="row"):
                yield Label("GPUs/node")
                yield Input(placeholder="all of the node", id="run-gpus", type="integer")
                yield Label("Time limit", classes="second")
                yield Input(placeholder="none, e.g. 30", id="run-time")
            yield Static("", id="run-error")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (esc)", id="run-no")
                yield Button("Run (ctrl+s)", id="run-yes", variant="primary")
        # its own footer, over the dashboard's: this dialog's keys, not the screen's behind
        yield AppFooter()

    def on_mount(self) -> None:
        target = "#run-template" if self.template else "#run-command"
        self.query_one(target).focus()

    @on(Button.Pressed, "#run-no")
    def _no(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#run-yes")
    @on(Input.Submitted)
    def action_submit(self) -> None:
        # A dialog answers once: a submit queued behind the first answer or a cancel (Enter
        # on a busy machine) would otherwise read the widgets of a dialog already taken down.
        if self._answered or not self.is_current:
            return
        try:
            choice = self._choice()
        except UsageError as exc:
            self.query_one("#run-error", Static).update(plain(exc.args[0]))
            return
        self._answered = True
        self.dismiss(choice)

    def _choice(self) -> RunChoice:
        def number(selector: str) -> int | None:
            text = self.query_one(selector, Input).value.strip()
            return int(text) if text else None

        what = self.query_one("#run-template", Select).value
        command = self.query_one("#run-command", Input).value.strip()
        time_limit = self.query_one("#run-time", Input).value.strip() or None
        request = JobRequest(
            nodes=number("#run-nodes"), gpus_per_node=number("#run-gpus"), time=time_limit
        )
        if what == COMMAND:
            if not command:
                raise UsageError("type a command, or pick a template")
            request.command = command
            request.checked()
        else:
            from npa_sop_tui.jobs.templates import apply_template

            request = apply_template(str(what), request)
        pool = self.query_one("#run-pool", Input).value.strip() or None
        return RunChoice(request, pool)


def open_run(
    app: App[Any], cluster: str, *, pool: str | None = None, template: str | None = None
) -> None:
    """The run dialog, then the job screen of what it asked to run."""
    from npa_sop_tui.screens.job_screen import JobScreen

    def chosen(choice: RunChoice | None) -> None:
        if choice is not None:
            app.push_screen(JobScreen(cluster, choice.request, pool=choice.pool))

    # the first-job toast has said its piece: it would cover the dialog's buttons
    app.clear_notifications()
    app.push_screen(RunDialog(pool=pool, template=template), chosen)
