"""The status dashboard: Kubernetes and Slurm side by side, with freshness per source.

Snapshots come from the backend's status stream in a worker; each one is posted as
StatusUpdated and shown by every pane. The refresh interval can be changed live (+/-),
which restarts the stream with the new interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header, Input, Label, Static

from npa_sop_tui.screens.timeline_key import timeline_binding
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, markup, plain, regex_problem
from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.status.panels import (
    VERDICT_COLOURS,
    ComponentsTable,
    NodeGroupsTable,
    PartitionsTable,
    SlurmClusterPanel,
    SlurmNodesTable,
    VerdictPanel,
    freshness_text,
)

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

INTERVALS = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


class StatusScreen(Guarded, OperatorGated, Screen[None]):
    """Live status of one cluster."""

    # the cursor where the work is: the Slurm nodes (enter: a node's detail). Textual's own
    # first focus, or a return from a dialog, must pick them too, not the first scroll box.
    AUTO_FOCUS = "#slurm-nodes"

    BINDINGS: ClassVar[list[BindingType]] = [
        # short labels so 80 columns show them all; `?` shows the tooltips
        Binding(
            "slash", "filter", "Filter", tooltip="Filter Slurm nodes (regex)", id="status.filter"
        ),
        Binding(
            "o", "sort", "Sort", tooltip="Sort Slurm nodes by the next column", id="status.sort"
        ),
        # in `?` and the palette, not the footer: 80 columns must show every other key
        Binding(
            "plus,equals_sign",
            "slower",
            "Slower",
            tooltip="Refresh less often (+)",
            show=False,
            id="status.slower",
        ),
        Binding(
            "minus",
            "faster",
            "Faster",
            tooltip="Refresh more often (-)",
            show=False,
            id="status.faster",
        ),
        Binding("r", "run", "Run", tooltip="Run a job (command or template)", id="status.run"),
        Binding("ctrl+r", "refresh", "Refresh now", show=False, id="status.refresh"),
        Binding(
            "l", "ssh", "SSH", tooltip="SSH command for the login node (copy)", id="status.ssh"
        ),
        Binding(
            "j", "jobs", "Jobs", tooltip="Slurm jobs: queue, history, cancel", id="status.jobs"
        ),
        Binding(
            "g", "log", "Log", tooltip="The last operation's log, with search", id="status.log"
        ),
        timeline_binding("status"),
        Binding("x", "destroy", "Destroy", id="status.destroy"),
        Binding("escape", "leave", "Back", id="status.leave"),
    ]

    class StatusUpdated(Message):
        """A new ClusterStatus snapshot arrived."""

        def __init__(self, status: Any) -> None:
            super().__init__()
            self.status = status

    interval: reactive[float] = reactive(0.0)
    """Seconds between refreshes; changing it restarts the status stream."""

    status: reactive[Any | None] = reactive(None)
    """The newest snapshot (status.model.ClusterStatus), None before the first one."""

    def __init__(self, name: str, *, interval: float | None = None) -> None:
        super().__init__()
        self.cluster_name = name
        self._initial_interval = interval
        self._suggested = False  # the first-job hint shows once per visit
        self._cost: Any = None
        """history.cost.CostSoFar of this cluster, None while unknown (no quoted price)."""

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="status-head"):
            yield Static("waiting for the first snapshot…", id="verdict")
            yield Static("", id="freshness")
        with Horizontal(id="status-grid"):
            # scrolls (tab reaches it) when 24 rows cannot hold every Kubernetes pane
            with VerticalScroll(id="status-left"):
                yield Label("Kubernetes node groups")
                yield NodeGroupsTable(id="node-groups")
                yield Label("Soperator components")
                yield ComponentsTable(id="components")
                yield SlurmClusterPanel("", id="slurm-cluster", classes="panel")
            with Vertical(id="status-right"):
                yield Label("Slurm partitions")
                yield PartitionsTable(id="partitions")
                yield Label("Slurm nodes", id="nodes-label")
                yield Input(
                    placeholder="filter nodes (regex) · enter keeps it · esc clears it",
                    id="node-filter",
                )
                yield SlurmNodesTable(id="slurm-nodes")
        # the full width under the tables, always in view: a plot from 32 rows, one
        # sparkline row per pool below that
        with Vertical(id="node-states-pane"):
            yield Label(
                "Slurm node states over time (▁…█ share allocated, ▒ drained, × down)",
                id="node-states-title",
            )
            yield NodeStatesChart(id="node-states")
        yield VerdictPanel("", id="hints")
        yield AppFooter()

    def on_mount(self) -> None:
        # the cursor where the work is: the Slurm nodes (enter: a node's detail), not four
        # tabs away behind the Kubernetes tables
        self.query_one(SlurmNodesTable).focus()
        self._load_capacity()
        # the cluster's node-state history from the home; a read-only session adds none
        self.query_one(NodeStatesChart).follow(self.cluster_name, writable=not self.npa.read_only)
        self.npa.cluster = self.cluster_name
        self.npa.kube_context = self.npa.backend.kube_context(self.cluster_name)
        self.interval = self._initial_interval or self.npa.status_interval
        self.set_interval(1.0, self._tick_freshness)

    @work(thread=True, group="capacity", exit_on_error=False)
    def _load_capacity(self) -> None:
        capacity = self.npa.backend.pool_capacity(self.cluster_name)
        self.app.call_from_thread(self._set_capacity, capacity)
        # cost so far and per hour: the home screen's figures (history.cost), for this one
        cost = self.npa.backend.cluster_costs([self.cluster_name]).get(self.cluster_name)
        self.app.call_from_thread(self._set_cost, cost)

    def _set_cost(self, cost: Any) -> None:
        self._cost = cost
        if self.status is not None:
            self._show_verdict(self.status)

    def _set_capacity(self, capacity: dict[str, str]) -> None:
        table = self.query_one(NodeGroupsTable)
        table.capacity = capacity
        if self.status is not None:
            table.show(self.status)

    def watch_interval(self) -> None:
        if self.interval > 0:  # 0 until mounted: no stream before the real interval is known
            self._stream()

    # -- the stream ------------------------------------------------------------------------

    @work(exclusive=True, group="status", exit_on_error=False)
    async def _stream(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            async for snapshot in self.npa.backend.status_snapshots(
                self.cluster_name, interval=self.interval, confirm_host_key=self.confirm_host_key
            ):
                self.post_message(self.StatusUpdated(snapshot))

    async def confirm_host_key(self, host: str, port: int, fingerprint: str) -> bool:
        """Ask the user (modal) whether to trust a login node's new SSH host key."""
        from npa_sop_tui.screens.modals import ask_host_key

        return await ask_host_key(self.npa, host, port, fingerprint)

    @on(StatusUpdated)
    def _updated(self, message: StatusUpdated) -> None:
        self.status = message.status

    def watch_status(self, status: Any | None) -> None:
        if status is None:
            return
        for pane in (NodeGroupsTable, ComponentsTable, PartitionsTable, SlurmNodesTable):
            self.query_one(pane).show(status)
        self.query_one(SlurmClusterPanel).show(status)
        self.query_one(NodeStatesChart).add(status)
        self.query_one(VerdictPanel).show(status)
        v = status.verdict
        self._show_verdict(status)
        self._tick_freshness()
        self._nodes_label()
        self.refresh_bindings()
        if v.state == "ready" and not self._suggested:
            self._suggested = True
            self._suggest_first_job()

    def _show_verdict(self, status: Any) -> None:
        v = status.verdict
        colour = VERDICT_COLOURS.get(v.state, "")
        cost = "  $cost" if self._cost is not None else ""
        self.query_one("#verdict", Static).update(
            # reversed and bold: readable under NO_COLOR's monochrome too
            markup(
                f"[b]$name[/b]  [b reverse {colour}] {v.state.upper()} [/]  "
                f"{len(v.hints)} hint(s) below{cost}",
                name=status.name,
                cost=self._cost.short_text(time.time()) if self._cost is not None else "",
            )
        )

    def _tick_freshness(self) -> None:
        text = Content(f"every {self.interval:g}s")
        if self.status is not None:
            fresh = freshness_text(self.status, now=time.time(), interval=self.interval)
            text = Content.assemble(fresh, " · ", text)
        self.query_one("#freshness", Static).update(text)

    def _nodes_label(self) -> None:
        table = self.query_one(SlurmNodesTable)
        shown = table.row_count
        total = len(table._slurm_nodes)
        flt = f", filter /{table.filter_text}/" if table.filter_text else ""
        problem = regex_problem(table.filter_text)
        label = f"Slurm nodes {shown}/{total} (sorted by {table.sort_column}{flt})"
        self.query_one("#nodes-label", Label).update(
            # short: the right half of 80 columns; the full reason is the box's tooltip
            plain(f"{label} · not a regex: matched as text" if problem else label)
        )
        self.query_one("#node-filter", Input).tooltip = problem
        self.query_one("#nodes-label", Label).set_class(problem is not None, "-warning")

    # -- keys ------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#node-filter", Input)
        box.set_class(True, "-open")
        box.focus()

    @on(Input.Changed, "#node-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.query_one(SlurmNodesTable).set_filter(event.value)
        self._nodes_label()

    @on(Input.Submitted, "#node-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        box = self.query_one("#node-filter", Input)
        if not event.value:
            box.set_class(False, "-open")
        self.query_one(SlurmNodesTable).focus()

    def action_sort(self) -> None:
        self.query_one(SlurmNodesTable).cycle_sort()
        self._nodes_label()

    def action_slower(self) -> None:
        later = [i for i in INTERVALS if i > self.interval]
        self.interval = later[0] if later else self.interval
        self.notify(f"Refreshing every {self.interval:g}s")

    def action_faster(self) -> None:
        earlier = [i for i in INTERVALS if i < self.interval]
        self.interval = earlier[-1] if earlier else self.interval
        self.notify(f"Refreshing every {self.interval:g}s")

    def action_refresh(self) -> None:
        self._stream()

    def _login_target(self) -> tuple[str, int, str] | None:
        status = self.status
        if status is None:
            return None
        login = status.login
        host = login.host or (status.kube.login_ip if status.kube else None)
        if not host:
            return None
        from npa_sop_tui.errors import UsageError
        from npa_sop_tui.status.ssh import check_login_host, check_login_user

        try:  # the Service's address is what the cluster says: it never shapes the command
            return check_login_host(host), login.port, check_login_user(login.user)
        except UsageError:
            return None

    def action_ssh(self) -> None:
        from npa_sop_tui.screens.modals import SshModal, TextModal, sandbox_ssh_text

        configured = self.status is not None and self.status.login.source in ("flag", "config")
        if self.npa.sandbox and not configured:
            # A command that goes nowhere is worse than none: the simulated login node has
            # an address in the fake API (its LoadBalancer IP) but nothing listens there.
            self.app.push_screen(TextModal("No login node in the sandbox", sandbox_ssh_text()))
            return
        target = self._login_target()
        if target is None:
            self.notify("The login node has no address yet.", severity="warning")
            return
        host, port, user = target
        port_arg = f" -p {port}" if port != 22 else ""
        self.app.push_screen(SshModal(f"ssh{port_arg} {user}@{host}", host))

    def _first_template(self) -> str:
        """The template the first-job offer names: the one that fits this cluster."""
        from npa_sop_tui.jobs.remote import gpu_count
        from npa_sop_tui.jobs.templates import first_job_template

        slurm = self.status.slurm if self.status is not None else None
        nodes = slurm.nodes if slurm is not None else []
        return first_job_template(sum(1 for n in nodes if gpu_count(n.gres or "")))

    @work(thread=True, group="first-job", exit_on_error=False)
    def _suggest_first_job(self) -> None:
        """After READY, once a visit: the first-job hint if npa has run no job here yet
        (jobs.json is read in this worker, not on the event loop). A session without the
        run key (read-only) is offered nothing it cannot do."""
        from npa_sop_tui.jobs.records import none_yet
        from npa_sop_tui.jobs.templates import first_job_summary
        from npa_sop_tui.tui.read_only import offers

        if not offers(self, "run"):
            return
        if none_yet(self.cluster_name):
            template = self._first_template()
            self.app.call_from_thread(
                self.notify,
                f"The cluster is READY. Press r to run {template}, a first job: "
                f"{first_job_summary(template)}.",
                title="First job",
                timeout=15,
            )

    def action_run(self) -> None:
        ready = self.status is not None and self.status.verdict.state == "ready"
        self._open_run(ready, self._selected_pool(), self._first_template())

    @work(thread=True, group="first-job", exit_on_error=False)
    def _open_run(self, ready: bool, pool: str | None, first: str) -> None:
        """The run dialog, the first-job template preselected on a READY cluster without
        npa jobs (the records are read in this worker)."""
        from npa_sop_tui.jobs.records import none_yet
        from npa_sop_tui.screens.run_dialog import open_run

        template = first if ready and none_yet(self.cluster_name) else None
        self.app.call_from_thread(
            open_run, self.app, self.cluster_name, pool=pool, template=template
        )

    def _selected_pool(self) -> str | None:
        """The pool of the focused node group's row, if the node groups table has focus."""
        table = self.query_one(NodeGroupsTable)
        if not table.has_focus or not table.row_count:
            return None
        return str(table.get_row_at(table.cursor_row)[0]) or None

    def action_jobs(self) -> None:
        from npa_sop_tui.screens.jobs import JobsScreen

        self.app.push_screen(JobsScreen(self.cluster_name, interval=self.interval))

    def action_log(self) -> None:
        from npa_sop_tui.screens.log_viewer import LogViewerScreen
        from npa_sop_tui.tui.operation_log import operation_log

        path, lines = operation_log(self.cluster_name)
        title = f"Last operation log of {self.cluster_name}"
        self.app.push_screen(LogViewerScreen(title, lines, path))

    def action_timeline(self) -> None:
        from npa_sop_tui.screens.timeline import TimelineScreen

        self.app.push_screen(TimelineScreen(self.cluster_name))

    @on(NodeGroupsTable.RowSelected, "#node-groups")
    def _pool_nodes(self, event: NodeGroupsTable.RowSelected) -> None:
        """Enter on a node group: its Slurm nodes (the filter set to the pool's names)."""
        pool = str(event.row_key.value or "")
        box = self.query_one("#node-filter", Input)
        box.value = f"^{re.escape(pool)}-" if pool else ""
        box.set_class(bool(pool), "-open")
        self.query_one(SlurmNodesTable).focus()

    @on(SlurmNodesTable.RowSelected, "#slurm-nodes")
    def _node_detail(self, event: SlurmNodesTable.RowSelected) -> None:
        from npa_sop_tui.screens.node_detail import NodeDetailScreen

        node = event.key
        kube = self.status.kube if self.status is not None else None

        def closed(changed: bool | None) -> None:
            if changed:
                self.action_refresh()  # show the drain (or its end) at once

        self.app.push_screen(NodeDetailScreen(self.cluster_name, node, kube), closed)

    def action_destroy(self) -> None:
        self.npa.destroy(self.cluster_name)

    def action_leave(self) -> None:
        box = self.query_one("#node-filter", Input)
        if box.has_focus:
            # esc in the filter box clears the filter; a second esc leaves
            box.value = ""
            box.set_class(False, "-open")
            self.query_one(SlurmNodesTable).focus()
            return
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            from npa_sop_tui.screens.home import HomeScreen

            self.app.switch_screen(HomeScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "ssh":
            return True if self._login_target() else None
        if action == "slower":
            return True if self.interval < INTERVALS[-1] else None
        if action == "faster":
            return True if self.interval > INTERVALS[0] else None
        return True
