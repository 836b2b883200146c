"""One job, live: submitted from the run dialog (or reattached by ID), its output streaming,
its state and elapsed time; `c` cancels (after a confirmation), `o` opens the whole output in
the log viewer, `escape` goes back and leaves the job running.

Submitting and following go through the job backend (jobs/backend.py) in a worker; the
follow callbacks run on the app's loop, so they update widgets directly."""

from __future__ import annotations

import asyncio
import codecs
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header, Log, Static

from npa_sop_tui.jobs.model import JobInfo, JobRequest
from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, plain
from npa_sop_tui.tui.widgets.footer import AppFooter

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

MAX_LINES = 5000  # lines the screen keeps; `o` shows the whole output


class JobScreen(Guarded, OperatorGated, Screen[None]):
    DEFAULT_CSS = """
    JobScreen #job-state { height: 1; padding: 0 1; }
    JobScreen #job-output { height: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "cancel_job", "Cancel job", id="job.cancel"),
        Binding("o", "open_log", "Open log", id="job.open_log"),
        Binding("escape", "leave", "Back", id="job.leave"),
    ]

    job: reactive[JobInfo | None] = reactive(None)
    """The job as last seen (None until it is submitted)."""

    def __init__(
        self,
        cluster: str,
        request: JobRequest | None = None,
        *,
        pool: str | None = None,
        job_id: str | None = None,
    ) -> None:
        super().__init__()
        self.cluster = cluster
        self.request = request
        self.pool = pool
        self.job_id = job_id
        self.started_at = time.monotonic()
        self.ended_at: float | None = None
        self.error = ""
        self.output = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.sandbox = False

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("submitting…", id="job-state")
        yield Log(id="job-output", max_lines=MAX_LINES, highlight=False)
        yield AppFooter()

    def on_mount(self) -> None:
        self.npa.cluster = self.cluster
        self._follow()
        self.set_interval(1.0, self._show_state)

    # -- the worker --------------------------------------------------------------------

    @work(exclusive=True, group="job", exit_on_error=False)
    async def _follow(self) -> None:
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.jobs import records
        from npa_sop_tui.jobs.backend import job_backend

        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            backend = job_backend(ops)
            self.sandbox = backend.sandbox
            if self.request is not None:
                # followed at once, as `run` without --detach: srun's start (jobs/attached.py)
                job = await backend.submit(self.request, pool=self.pool, attached=True)
                command = self.request.command or ""
                await asyncio.to_thread(records.save, self.cluster, job, command=command)
            else:
                found = await asyncio.to_thread(records.find, self.cluster, self.job_id or "")
                job = found or JobInfo(id=self.job_id or "", sandbox=backend.sandbox)
            self.job = job
            done = await backend.follow(job, on_output=self._output, on_state=self._state)
            self.ended_at = time.monotonic()
            self.job = done
            if await asyncio.to_thread(records.find, self.cluster, done.id) is not None:
                await asyncio.to_thread(records.save, self.cluster, done)
        except NpaError as exc:
            self.error = str(exc)
        finally:
            await ops.aclose()
        self._show_state()

    def _output(self, chunk: bytes) -> None:
        self.output += chunk
        text = self._decoder.decode(chunk)
        if text:  # the job's own output: every control in it shown, never obeyed
            self.query_one(Log).write(safe_text(text, keep_newlines=True))

    def _state(self, job: JobInfo) -> None:
        self.job = job
        self._show_state()

    def watch_job(self) -> None:
        self._show_state()
        self.refresh_bindings()

    def _show_state(self) -> None:
        line = self.query_one("#job-state", Static)
        if self.error:
            line.update(plain(f"error: {self.error}"))
            return
        job = self.job
        if job is None:
            return
        end = self.ended_at or time.monotonic()
        seconds = int(end - self.started_at)
        label = "SANDBOX · " if self.sandbox else ""
        reason = f" ({job.reason})" if job.reason else ""
        code = "" if job.exit_code is None else f" · exit code {job.exit_code}"
        where = f" · {job.nodes}" if job.nodes else ""
        text = (
            f"{label}job {job.id} · {job.state}{reason}{code}{where} · "
            f"{seconds // 60}:{seconds % 60:02d} · {job.output_path or ''}"
        )
        line.update(plain(text))

    # -- keys --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_job":
            return True if self.job is not None and not self.job.done else None
        return True

    def action_cancel_job(self) -> None:
        job = self.job
        if job is None or job.done:
            return
        from npa_sop_tui.screens.modals import ConfirmModal

        def chosen(yes: bool | None) -> None:
            if yes:
                self._cancel(job.id)

        question = f"Cancel job {job.id} ({safe_text(job.state)})?"
        self.app.push_screen(ConfirmModal(question, yes="Cancel job", danger=True), chosen)

    @work(exclusive=True, group="job-cancel", exit_on_error=False)
    async def _cancel(self, job_id: str) -> None:
        from npa_sop_tui.jobs.backend import job_backend

        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            await job_backend(ops).cancel(job_id)
        finally:
            await ops.aclose()
        self.notify(f"Cancelled job {job_id}")

    def action_open_log(self) -> None:
        from npa_sop_tui.screens.log_viewer import LogViewerScreen

        text = bytes(self.output).decode("utf-8", errors="replace")
        lines = [("info", line) for line in text.splitlines()]
        job = self.job
        where = job.output_path if job and job.output_path else "?"
        title = f"Output of job {job.id if job else '?'} on {self.cluster} ({where})"
        local = Path(where) if self.sandbox and job and job.output_path else None
        self.app.push_screen(LogViewerScreen(title, lines, local))

    def action_leave(self) -> None:
        self.app.pop_screen()  # the job goes on; `jobs` and `logs` know it
