"""Slurm jobs of one cluster: the queue (squeue), refreshed live; `h` switches to the finished
jobs (sacct, when accounting is on); `c` cancels the highlighted job after a confirmation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, plain, search_pattern
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.table import PlainTable

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

COLUMNS = (("Job", 9), ("State", 10), ("Name", 18), ("User", 10), ("Time", 9), ("Nodes", 20))


class JobsTable(PlainTable):
    """Jobs, one row each (fixed column widths: no re-measuring on refresh). At 80 columns
    the user column gives way first (a cluster's jobs are mostly one's own)."""

    KEEP = ("job", "state", "name", "nodes", "time", "user")

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, key=label.lower(), width=width)


class JobsScreen(Guarded, OperatorGated, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c,delete", "cancel_job", "Cancel job", id="jobs.cancel"),
        Binding("h", "toggle_history", "History", id="jobs.history"),
        Binding("slash", "filter", "Filter", id="jobs.filter"),
        Binding("r", "reload", "Reload", id="jobs.reload"),
        Binding("escape", "leave", "Back", id="jobs.leave"),
    ]

    def __init__(self, cluster: str, *, interval: float = 5.0) -> None:
        super().__init__()
        self.cluster = cluster
        self.interval = interval
        self.history = False
        self.jobs: list[Any] = []
        self.note = ""
        self.filter_text = ""

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="jobs-title")
        yield Input(placeholder="filter jobs (regex) · esc clears", id="jobs-filter")
        yield JobsTable(id="jobs-table", zebra_stripes=True)
        yield AppFooter()

    def on_mount(self) -> None:
        self.npa.cluster = self.cluster
        self.query_one(JobsTable).focus()
        self.action_reload()
        self.set_interval(self.interval, self._live)

    def _live(self) -> None:
        if not self.history:  # the queue moves; the history is read once
            self.action_reload()

    @work(exclusive=True, group="jobs", exit_on_error=False)
    async def action_reload(self) -> None:
        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            if self.history:
                history = await ops.history()
                self.jobs, self.note = history.jobs, history.note or ""
            else:
                self.jobs, self.note = await ops.jobs(), ""
        finally:
            await ops.aclose()
        self._show()

    def _visible(self) -> list[Any]:
        pattern = search_pattern(self.filter_text)
        if pattern is None:
            return self.jobs
        return [j for j in self.jobs if pattern.search(f"{j.id} {j.name} {j.user} {j.state}")]

    def _show(self) -> None:
        rows = {}
        for j in self._visible():
            where = j.nodelist or (f"({j.reason})" if j.reason else "")
            time_text = j.elapsed or ""
            rows[j.id] = (j.id, j.state, j.name, j.user, time_text, where)
        self.query_one(JobsTable).sync(rows)
        what = "finished jobs (sacct)" if self.history else "queue (squeue, live)"
        shown = f"{len(rows)}/{len(self.jobs)}"
        title = f"{self.cluster}: {what} · {shown} · {self.note}".rstrip(" ·")
        self.query_one("#jobs-title", Static).update(plain(title))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_job":
            return True if not self.history and self.query_one(JobsTable).row_count else None
        return True

    def action_toggle_history(self) -> None:
        self.history = not self.history
        self.jobs = []
        self._show()
        self.action_reload()

    def action_filter(self) -> None:
        box = self.query_one("#jobs-filter", Input)
        box.add_class("-open")
        box.focus()

    @on(Input.Changed, "#jobs-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._show()

    @on(Input.Submitted, "#jobs-filter")
    def _filter_done(self) -> None:
        self.query_one(JobsTable).focus()

    def action_cancel_job(self) -> None:
        job_id = self.query_one(JobsTable).selected_key()
        job = next((j for j in self.jobs if j.id == job_id), None)
        if job is None:
            return
        from npa_sop_tui.screens.modals import ConfirmModal

        def chosen(yes: bool | None) -> None:
            if yes:
                self._cancel(job.id)

        question = f"Cancel job {job.id} ({safe_text(f'{job.name}, {job.user}, {job.state}')})?"
        self.app.push_screen(ConfirmModal(question, yes="Cancel job", danger=True), chosen)

    @work(exclusive=True, group="jobs-cancel", exit_on_error=False)
    async def _cancel(self, job_id: str) -> None:
        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            await ops.cancel(job_id)
        finally:
            await ops.aclose()
        self.notify(f"Cancelled job {job_id}")
        self.action_reload()

    def action_leave(self) -> None:
        box = self.query_one("#jobs-filter", Input)
        if box.has_focus:
            box.value = ""
            box.remove_class("-open")
            self.query_one(JobsTable).focus()
            return
        self.app.pop_screen()
