"""`npa-sop`: the Textual app shell — header, footer, command palette, keymap.

Screens (in `npa_sop_tui.screens`) do the flows; this module only wires them together and
owns the app-wide actions, so the command palette, the home screen's keys and the other
screens all reach the same code path.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.backend import Backend
from npa_sop_tui.tui.error_log import log_places
from npa_sop_tui.tui.error_reporting import ErrorReporting
from npa_sop_tui.tui.key_help import key_help
from npa_sop_tui.tui.no_color import make_readable
from npa_sop_tui.tui.palette import palette_commands
from npa_sop_tui.tui.safety import ControlNet, Guarded
from npa_sop_tui.tui.theme_setting import follow_theme

APP_TITLE = "npa-sop"


class NpaSopApp(Guarded, ErrorReporting, App[int]):
    """Stand up and watch Soperator (Slurm on Kubernetes) clusters."""

    CSS_PATH = "app.tcss"
    TITLE = APP_TITLE
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (100, "-wide")]
    """Screens get -narrow below 100 columns (80x24 layouts), -wide from 100."""
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (32, "-tall")]
    """Screens get -short below 32 rows: a dialog's body then scrolls sooner, so its
    buttons stay on a 24-row screen."""
    BINDINGS: ClassVar[list[BindingType]] = [
        # q and ? are letters in a text field: there they type, and the footer hides them
        # (check_action); f1 opens the help anywhere, ctrl+q (Textual's) quits anywhere
        Binding("q", "quit_key", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding(
            "f1",
            "help_anywhere",
            "Help",
            show=False,
            tooltip="Help, also while typing",
            id="app.help_f1",
        ),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            show=False,
            tooltip="Command palette: every action by name",
            id="app.palette",
        ),
    ]

    cluster: reactive[str] = reactive("")
    """The cluster the current screen is about ("" on the home screen)."""

    kube_context: reactive[str] = reactive("")
    """Its kube context (nebius-<name>-slurm), shown in the header."""

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        spec_path: Path | None = None,
        keymap: dict[str, str] | None = None,
        theme: str | None = None,
        status_interval: float | None = None,
        config_path: Path | None = None,
        read_only: bool = False,
        open_cluster: str | None = None,
    ) -> None:
        super().__init__()
        self.read_only = read_only
        """A watching session: no action that changes a cluster or a file (tui/read_only.py)."""
        self._open_cluster = open_cluster
        make_readable(self._filters)  # NO_COLOR: greys, but no text lost in its background
        # under every widget: a control character that reached a drawn line is dropped there
        self._filters.insert(0, ControlNet())
        self._status_interval = status_interval
        self.backend: Backend = backend or Backend()
        self.spec_path = spec_path
        self.written_specs: list[Path] = []
        """Spec files the wizard wrote this session (home lists undeployed ones as drafts)."""
        self._keymap_config = dict(keymap or {})
        self._theme_config = theme
        self._config_path = config_path
        """The config.yaml the app read; a theme picked in the palette is saved there."""

    @property
    def status_interval(self) -> float:
        """Seconds between status refreshes: as given, else the environment's setting."""
        if self._status_interval is not None:
            return self._status_interval
        return self.backend.environment.settings.status_interval

    @property
    def sandbox(self) -> bool:
        return self.backend.sandbox

    # -- lifecycle of the app --------------------------------------------------------------

    def on_wizard_screen_spec_written(self, message: Any) -> None:
        """The wizard wrote a spec: home lists it as a draft until it is deployed."""
        self.written_specs.append(Path(message.path))

    def on_mount(self) -> None:
        if self._keymap_config:
            self.set_keymap(self._keymap_config)
        # a read-only session writes no file, not even the theme it was shown in
        follow_theme(self, self._theme_config, None if self.read_only else self._config_path)
        self._update_titles()
        from npa_sop_tui.screens.home import HomeScreen

        self.push_screen(HomeScreen())
        if self.spec_path is not None:
            self.open_spec(self.spec_path)
        if self._open_cluster:
            self.show_status(self._open_cluster)
        self.call_after_refresh(_freeze_startup_objects)

    async def on_unmount(self) -> None:
        await self.backend.close()

    def watch_cluster(self) -> None:
        self._update_titles()

    def watch_kube_context(self) -> None:
        self._update_titles()

    def _update_titles(self) -> None:
        from npa_sop_tui.tui.read_only import READ_ONLY_LABEL

        marks = [
            m for m, on in (("SANDBOX", self.sandbox), (READ_ONLY_LABEL, self.read_only)) if on
        ]
        self.title = " · ".join([APP_TITLE, *marks])
        parts = [safe_text(p) for p in (self.cluster, self.kube_context) if p]
        self.sub_title = " · ".join(parts) if parts else "no cluster selected"
        self.set_class(self.sandbox, "-sandbox")
        self.set_class(self.read_only, "-read-only")

    def use_backend(self, backend: Backend) -> None:
        """Switch backends (home screen → sandbox) and refresh what depends on it."""
        self.backend = backend
        self._update_titles()
        self.refresh_bindings()

    def notify(self, message: str, **kwargs: Any) -> None:  # type: ignore[override]
        """Notifications are plain text, every control in them shown: they often quote
        names, paths, errors and what a cluster said."""
        kwargs["markup"] = False
        if kwargs.get("title"):
            kwargs["title"] = safe_text(kwargs["title"])
        super().notify(safe_text(message, keep_newlines=True), **kwargs)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """Every failed worker ends in the error modal (error_reporting.py)."""
        if event.state is WorkerState.ERROR:
            self.show_error(event.worker.error, title=f"{event.worker.group or 'operation'} failed")

    # -- app-wide actions (keys, palette and screens all call these) -----------------------

    def unwritten_work(self) -> bool:
        """True when a screen (the wizard) holds changes not written to a file."""
        for screen in self.screen_stack:
            dirty = getattr(screen, "dirty", None)
            if callable(dirty) and dirty():
                return True
        return False

    def running_operation(self) -> str | None:
        """The name of a deploy/destroy in progress on any screen, if there is one."""
        for screen in self.screen_stack:
            busy = getattr(screen, "operation_running", None)
            if callable(busy) and busy():
                return str(getattr(screen, "operation_label", "an operation"))
        return None

    def typing(self) -> bool:
        """Whether the focused widget takes printable keys as text (a text field)."""
        from textual.widgets import Input

        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("quit_key", "help"):
            return not self.typing()
        return True

    async def action_quit_key(self) -> None:
        await self.action_quit()

    def action_help_anywhere(self) -> None:
        self.action_help()

    async def action_quit(self) -> None:
        from npa_sop_tui.screens.modals import ConfirmModal

        running = self.running_operation()
        if running is None:
            if not self.unwritten_work():
                self.exit(0)
                return

            def discard(yes: bool | None) -> None:
                if yes:
                    self.exit(0)

            self.push_screen(
                ConfirmModal(
                    "The wizard has changes that are not written to a file. Quit anyway?",
                    yes="Discard and quit",
                    no="Stay",
                    danger=True,
                ),
                discard,
            )
            return

        def chosen(yes: bool | None) -> None:
            if yes:
                self.exit(130)

        self.push_screen(
            ConfirmModal(
                f"{running} is running.\n\nQuitting interrupts Terraform gracefully (state is "
                "saved; deploy again to continue). Quit anyway?",
                yes="Interrupt and quit",
                no="Stay",
                danger=True,
            ),
            chosen,
        )

    def action_help(self) -> None:
        from npa_sop_tui.screens.modals import TextModal

        help_text = key_help(self, self.screen)
        self.push_screen(TextModal("Keys on this screen", help_text, note=log_places()))

    def refused(self, what: str) -> bool:
        """True (with a notice) when this read-only session does not offer `what`."""
        if not self.read_only:
            return False
        self.notify(
            f"This session is read-only: {what} is not offered. "
            "Use the terminal app (or a session served with --operator) to change the cluster.",
            severity="warning",
        )
        return True

    def action_new_cluster(self) -> None:
        from npa_sop_tui.screens.wizard import WizardScreen

        if self.refused("the wizard"):
            return
        self.push_screen(WizardScreen(self.backend.example_mapping(), path=None))

    def action_open_spec(self) -> None:
        from npa_sop_tui.screens.modals import PathModal

        if self.refused("opening a file"):
            return

        def opened(value: str | None) -> None:
            if value:
                self.open_spec(Path(value).expanduser())

        self.push_screen(PathModal("Open cluster.yaml", "cluster.yaml"), opened)

    def open_spec(self, path: Path) -> None:
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.screens.wizard import WizardScreen

        if self.refused("opening a file"):
            return
        try:
            # a misspelt key or a wrong type still opens: the form shows what it can read
            # and the findings say where and what to fix; only a non-YAML file is refused
            mapping, document, findings = self.backend.open_with_findings(path)
        except NpaError as exc:
            findings = getattr(exc, "findings", None)
            message = exc.message
            if findings:
                message = "\n".join(f.render() for f in findings)
            self.show_error(NpaError(message, hint=exc.hint), title=f"Cannot open {path}")
            return
        self.push_screen(WizardScreen(mapping, path=path, document=document, findings=findings))
        if any(f.is_error for f in findings):
            self.notify(
                f"{path.name} has {len(findings)} problem(s); fix them before writing.",
                title="Opened with findings",
                severity="warning",
            )

    def deploy(self, spec: Any, *, spec_path: Path | None = None, replace: bool = False) -> None:
        """Open the deploy screen; `replace` swaps it for the current screen (the wizard)."""
        from npa_sop_tui.screens.deploy import DeployScreen

        if self.refused("deploy"):
            return
        screen = DeployScreen(spec, spec_path=spec_path)
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def show_status(self, name: str) -> None:
        from npa_sop_tui.screens.status import StatusScreen

        self.push_screen(StatusScreen(name))

    def destroy(self, name: str) -> None:
        from npa_sop_tui.screens.destroy import DestroyScreen

        if self.refused("destroy"):
            return
        self.push_screen(DestroyScreen(name))

    def action_sandbox(self) -> None:
        """Switch this session to the sandbox (local Terraform + in-process Kubernetes)."""
        if self.sandbox:
            return
        from npa_sop_tui.tui.backend import sandbox_backend

        self.use_backend(sandbox_backend())
        self.notify("Sandbox mode: everything runs on this machine.", title="SANDBOX")
        screen = self.screen
        reload = getattr(screen, "reload", None)
        if callable(reload):
            reload()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from palette_commands(self, screen, super().get_system_commands(screen))


def _freeze_startup_objects() -> None:
    """Move everything alive after the first frame (modules, CSS, widgets) out of the
    garbage collector's reach: a full collection then scans only what came later, instead
    of pausing every screen for tens of milliseconds under a flood of events. (Frozen
    objects are still freed when their last reference goes; only a cycle among them that
    dies later stays: a bounded, one-time cost.)"""
    import gc

    gc.freeze()


def run_app(
    *,
    sandbox: bool = False,
    spec_path: Path | None = None,
    read_only: bool = False,
    open_cluster: str | None = None,
) -> int:
    """Build and run the app in its environment; returns the exit code."""
    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.tui.backend import sandbox_backend

    backend = sandbox_backend() if sandbox else Backend(open_environment())
    settings = backend.environment.settings
    app = NpaSopApp(
        backend,
        spec_path=spec_path,
        keymap=dict(settings.config.tui.keys),
        theme=settings["tui.theme"],
        config_path=settings.config_file,
        read_only=read_only,
        open_cluster=open_cluster,
    )
    result = app.run()
    if app.return_code:  # the app died of an error Textual could not hand to a modal
        return int(app.return_code)
    return int(result or 0)
