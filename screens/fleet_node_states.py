"""Node states of a fleet of clusters in one view: for each live cluster on home, its Slurm
node states over time (idle / allocated / drained / down per pool), side by side from 100
columns, stacked below.

Opened with `f` on home. Each cluster gets its own status stream in a worker (the same feed
as its dashboard, so the same login resolver and kube context), and its chart starts from
the cluster's node-state history in the home (what its dashboard, or this view, saw
before) and adds the snapshots this screen receives. Unknown SSH host keys are not trusted
from here (that is a decision for the cluster's own dashboard); such a cluster says why its
Slurm side is empty.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static

from npa_sop_tui.tui.safety import Guarded, plain
from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart
from npa_sop_tui.tui.widgets.footer import AppFooter

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

MAX_CLUSTERS = 12
"""Clusters streamed at once: each holds a kube client and an SSH session open."""

LIVE_STATES = frozenset({"deployed", "degraded-validation", "deploying"})
"""Inventory states of a cluster that has (or is getting) Slurm nodes to chart."""


class ClusterNodeStates(Guarded, Vertical):
    """One cluster's title line and chart."""

    DEFAULT_CSS = """
    ClusterNodeStates { height: auto; border: round $primary-darken-2; padding: 0 1; }
    ClusterNodeStates > .fleet-title { height: auto; }
    ClusterNodeStates > NodeStatesChart { height: 12; }
    """

    def __init__(self, cluster: str) -> None:
        super().__init__(classes="fleet-cluster")
        self.cluster = cluster

    def compose(self) -> ComposeResult:
        waiting = plain(f"{self.cluster}: waiting for the first snapshot…")
        yield Static(waiting, classes="fleet-title")
        yield NodeStatesChart()

    def on_mount(self) -> None:
        read_only = bool(getattr(self.app, "read_only", False))
        self.query_one(NodeStatesChart).follow(self.cluster, writable=not read_only)

    def show(self, status: Any) -> None:
        verdict = getattr(getattr(status, "verdict", None), "state", "unknown")
        line = f"{self.cluster}: {str(verdict).upper()}"
        slurm = getattr(status, "freshness", {}).get("slurm")
        if getattr(status, "slurm", None) is None and slurm is not None:
            why = slurm.error or slurm.note or slurm.state
            line += f" · no Slurm data ({why})"
        self.query_one(".fleet-title", Static).update(plain(line))
        self.query_one(NodeStatesChart).add(status)

    def failed(self, why: str) -> None:
        self.query_one(".fleet-title", Static).update(plain(f"{self.cluster}: {why}"))


class FleetNodeStatesScreen(Guarded, Screen[None]):
    """Every live cluster's node states; escape goes back."""

    DEFAULT_CSS = """
    FleetNodeStatesScreen #fleet-grid { grid-size: 1; grid-rows: auto; height: auto; }
    FleetNodeStatesScreen.-wide #fleet-grid { grid-size: 2; }
    FleetNodeStatesScreen #fleet-title { height: auto; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back", id="fleet.leave"),
    ]

    class SnapshotArrived(Message):
        """A status snapshot of one of the fleet's clusters."""

        def __init__(self, cluster: str, status: Any) -> None:
            super().__init__()
            self.cluster = cluster
            self.status = status

    class StreamFailed(Message):
        def __init__(self, cluster: str, why: str) -> None:
            super().__init__()
            self.cluster = cluster
            self.why = why

    def __init__(self, clusters: list[str]) -> None:
        super().__init__()
        self.clusters = clusters[:MAX_CLUSTERS]
        self.left_out = clusters[MAX_CLUSTERS:]

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        title = f"Slurm node states of {len(self.clusters)} live cluster(s), newest right"
        if self.left_out:
            title += f" (first {MAX_CLUSTERS}; not shown: {', '.join(self.left_out)})"
        if not self.clusters:
            title = "No live cluster: deploy one (or choose the team's state store) first."
        yield Static(plain(title), id="fleet-title")
        with VerticalScroll(id="fleet-body"), Grid(id="fleet-grid"):
            for name in self.clusters:
                yield ClusterNodeStates(name)
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#fleet-body", VerticalScroll).focus()
        for name in self.clusters:
            self.run_worker(
                self._stream(name), group=f"fleet-{name}", exit_on_error=False, exclusive=True
            )

    async def _stream(self, name: str) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            try:
                async for snapshot in self.npa.backend.status_snapshots(
                    name, interval=self.npa.status_interval
                ):
                    self.post_message(self.SnapshotArrived(name, snapshot))
            except Exception as exc:  # one cluster's failure is its own, not the screen's
                why = str(getattr(exc, "message", None) or exc) or type(exc).__name__
                self.post_message(self.StreamFailed(name, why))

    def _pane(self, name: str) -> ClusterNodeStates | None:
        for pane in self.query(ClusterNodeStates):
            if pane.cluster == name:
                return pane
        return None

    @on(SnapshotArrived)
    def _arrived(self, message: SnapshotArrived) -> None:
        pane = self._pane(message.cluster)
        if pane is not None:
            pane.show(message.status)

    @on(StreamFailed)
    def _failed(self, message: StreamFailed) -> None:
        pane = self._pane(message.cluster)
        if pane is not None:
            pane.failed(message.why)

    def action_leave(self) -> None:
        self.app.pop_screen()
