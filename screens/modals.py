"""Small modal dialogs shared by every flow: confirm, error, text (SSH command), host key.

What they show often quotes a cluster, the cloud or a file (an error's text, a job's name, a
node's reason): every piece is shown through `safe_text` (`shown`), never obeyed."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded, shown


class ConfirmModal(Guarded, ModalScreen[bool]):
    """Yes/no question. Dismisses with True only on an explicit yes (the button or `y`).

    The safe answer has focus, so a stray Enter never confirms, unless the question is a
    harmless next step (`default_yes`, e.g. "deploy now?", which still plans and asks).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(False)", "Cancel", id="modal.cancel"),
        Binding("y", "dismiss(True)", "Yes", id="modal.yes"),
        Binding("n", "dismiss(False)", "No", id="modal.no"),
    ]

    def __init__(
        self,
        question: str,
        *,
        yes: str = "Yes",
        no: str = "No",
        danger: bool = False,
        default_yes: bool = False,
    ):
        super().__init__()
        self.question = question
        self.yes_label = yes
        self.no_label = no
        self.danger = danger
        self.default_yes = default_yes and not danger

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            # a long question (a destructive plan names what it loses) scrolls: the buttons
            # stay on screen at 80x24
            with VerticalScroll(classes="dialog-body"):
                yield Static(shown(self.question, keep_newlines=True), id="question")
            with Horizontal(classes="buttons"):
                yield Button(f"{self.no_label} (n)", id="no")
                yield Button(
                    f"{self.yes_label} (y)",
                    id="yes",
                    variant="error" if self.danger else "primary",
                )

    def on_mount(self) -> None:
        self.query_one("#yes" if self.default_yes else "#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)


class TextModal(Guarded, ModalScreen[None]):
    """Shows a piece of text to copy, e.g. the SSH command for the login node."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "dismiss(None)", "Close", id="modal.close")
    ]
    DIALOG_CLASSES = "dialog"
    BODY_ID = "text-body"
    CLOSE_LABEL = "Close (esc)"

    def __init__(self, title: str, text: str, *, note: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.note = note
        """A dimmed paragraph below the text (the help's "where the logs are")."""

    def compose(self) -> ComposeResult:
        with Vertical(classes=self.DIALOG_CLASSES):
            yield Label(shown(self.title_text), classes="dialog-title")
            with VerticalScroll(classes="dialog-body"):
                yield Static(shown(self.text, keep_newlines=True), id=self.BODY_ID)
                if self.note:
                    yield Static(
                        shown(self.note, keep_newlines=True), id="text-note", classes="note"
                    )
                yield from self.compose_after_body()
            with Horizontal(classes="buttons"):
                yield Button(self.CLOSE_LABEL, id="close", variant="primary")

    def compose_after_body(self) -> ComposeResult:
        yield from ()

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss(None)


class ErrorModal(TextModal):
    """What went wrong, where, and what to do next; one for every failed worker."""

    DIALOG_CLASSES = "dialog error"
    BODY_ID = "error-message"
    CLOSE_LABEL = "Close"

    def __init__(self, title: str, message: str, hint: str | None = None) -> None:
        super().__init__(title, message)
        self.hint = hint

    def compose_after_body(self) -> ComposeResult:
        if self.hint:
            yield Static(shown(f"hint: {self.hint}", keep_newlines=True), id="error-hint")


class HostKeyModal(Guarded, ModalScreen[bool]):
    """Consent for an SSH host key seen for the first time. Only an explicit accept trusts it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(False)", "Reject", id="modal.cancel")
    ]

    def __init__(self, host: str, fingerprint: str) -> None:
        super().__init__()
        self.host = host
        self.fingerprint = fingerprint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Unknown SSH host key", classes="dialog-title")
            yield Static(
                shown(
                    f"The login node {safe_text(self.host)} presented a host key that is not "
                    f"in ~/.npa/known_hosts:\n\n  {safe_text(self.fingerprint)}\n\n"
                    "Accept it only if it matches the cluster you created. "
                    "Rejecting keeps the Slurm view off; Kubernetes status still works.",
                    keep_newlines=True,
                ),
                id="host-key-text",
            )
            with Horizontal(classes="buttons"):
                yield Button("Reject", id="no")
                yield Button("Trust and remember", id="yes", variant="warning")

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)


class PathModal(Guarded, ModalScreen[str | None]):
    """Ask for a file path (open cluster.yaml)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="modal.cancel")
    ]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.prompt, classes="dialog-title")
            yield Input(self.value, id="path", placeholder="path/to/cluster.yaml")
            yield Static("", id="path-error", classes="inline-error")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="no")
                yield Button("Open", id="yes", variant="primary")

    @on(Input.Submitted, "#path")
    @on(Button.Pressed, "#yes")
    def _open(self) -> None:
        value = self.query_one("#path", Input).value.strip()
        if not value:
            self.query_one("#path-error", Static).update("Type the path of a cluster.yaml.")
            return
        self.dismiss(value)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(None)


class FailureModal(Guarded, ModalScreen[str | None]):
    """An operation failed: what, Terraform's first error block, and what to do next.

    Dismisses with "retry" (`r`), "log" (`l`) or None (`esc`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="failure.close"),
        Binding("r", "dismiss('retry')", "Retry", id="failure.retry"),
        Binding("l", "dismiss('log')", "Log", id="failure.log"),
    ]

    def __init__(self, title: str, message: str, error_block: str) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.error_block = error_block

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error wide-error"):
            yield Label(shown(self.title_text), classes="dialog-title")
            yield Static(shown(self.message, keep_newlines=True), id="failure-message")
            with VerticalScroll(classes="dialog-body"):
                yield Static(shown(self.error_block, keep_newlines=True), id="failure-error")
            with Horizontal(classes="buttons"):
                yield Button("Close (esc)", id="close")
                yield Button("Log (l)", id="log")
                yield Button("Retry (r)", id="retry", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#retry", Button).focus()

    @on(Button.Pressed, "#retry")
    def _retry(self) -> None:
        self.dismiss("retry")

    @on(Button.Pressed, "#log")
    def _show_log(self) -> None:
        self.dismiss("log")

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss(None)


class ReasonModal(Guarded, ModalScreen[str | None]):
    """Drain a node: ask for the reason (Slurm keeps it until the node is resumed)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="modal.cancel")
    ]

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(shown(f"Drain {self.node}"), classes="dialog-title")
            yield Static(
                "No new jobs start on it; running jobs finish. The reason shows in the node "
                "list until the node is resumed.",
                markup=False,
            )
            yield Input(placeholder="reason, e.g. disk check failed", id="reason")
            yield Static("", id="reason-error", classes="inline-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Cancel (esc)", id="no")
                yield Button("Drain (enter)", id="yes", variant="error")

    @on(Input.Submitted, "#reason")
    @on(Button.Pressed, "#yes")
    def _drain(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.query_one("#reason-error", Static).update("Type why the node is drained.")
            self.query_one("#reason", Input).focus()
            return
        self.dismiss(reason)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(None)


class SshModal(TextModal):
    """The ssh command for the login node, with keys that copy it or the address."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy('command')", "Copy command", id="ssh.copy"),
        Binding("i", "copy('ip')", "Copy IP", id="ssh.copy_ip"),
    ]

    def __init__(self, command: str, host: str, note: str = "") -> None:
        super().__init__("SSH to the login node", command + (f"\n\n{note}" if note else ""))
        self.command = command
        self.host = host

    def compose_after_body(self) -> ComposeResult:
        yield Static("c copies the command, i the address (terminal clipboard)", classes="note")

    def action_copy(self, what: str) -> None:
        text = self.command if what == "command" else self.host
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {text}")


def unjudged_quotas_modal(why: str) -> ConfirmModal:
    """The app's `--allow-unknown`: quotas the preflight could not judge (`why` names them
    and the reason), and whether to plan on without them. No is the focused answer."""
    question = (
        f"{why}\n\nPlan without them? The apply still stops on a quota the cloud "
        "enforces, possibly after some resources were created."
    )
    return ConfirmModal(question, yes="Plan without them")


def interrupt_modal(operation: str, *, forced: bool) -> ConfirmModal:
    """Stopping a running `operation`: first gracefully (Terraform saves its state and a
    later run continues), then, asked again, by force (and what that may leave behind)."""
    if not forced:
        question = (
            f"Interrupt the {operation}?\n\nTerraform is asked to stop gracefully: resources "
            "being created finish, state is saved, and a later deploy continues from there."
        )
        return ConfirmModal(question, yes="Interrupt", no="Keep going")
    question = (
        "Force-stop Terraform now?\n\nIt is killed without saving: resources in "
        "flight may exist in the cloud but not in state, and the state lock may stay. "
        "Prefer waiting for the graceful stop."
    )
    return ConfirmModal(question, yes="Force stop", no="Wait", danger=True)


async def ask_host_key(app: Any, host: str, port: int, fingerprint: str) -> bool:
    """Whether the user trusts a login node's new SSH host key (a modal). A read-only
    session never trusts one: that writes known_hosts, an operator's decision."""
    import asyncio

    if app.read_only:
        app.notify(
            f"The SSH host key of {host} is not trusted yet; this read-only session "
            "cannot trust it. Trust it once in the terminal app, then Slurm shows here.",
            severity="warning",
        )
        return False
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def done(result: bool | None) -> None:
        if not answer.done():
            answer.set_result(bool(result))

    where = host if port == 22 else f"{host}:{port}"
    app.push_screen(HostKeyModal(where, fingerprint), done)
    return await answer


def sandbox_ssh_text() -> str:
    """Why `s` (ssh) offers no command in the sandbox, and what to set to use a real sshd."""
    from npa_sop_tui.home.paths import config_path, shown

    return (
        "The sandbox has no login node to SSH into: Kubernetes and Slurm are "
        "simulated on this machine, and this dashboard shows that simulation.\n\n"
        "To watch real Slurm over SSH, set login.host, login.port and login.user in "
        f"{shown(config_path())} to an sshd where sinfo runs (for example the test "
        "substrate: 127.0.0.1, 2222, slurmops)."
    )
