"""Home: the clusters in the inventory and what you can do with them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from npa_sop_tui.errors import NpaError
from npa_sop_tui.safe_text import safe_markup
from npa_sop_tui.screens.fleet_key import fleet_binding
from npa_sop_tui.screens.timeline_key import timeline_binding
from npa_sop_tui.tui.backend import ClusterRow, issue_text
from npa_sop_tui.tui.drafts import DRAFT, draft_rows
from npa_sop_tui.tui.read_only import OperatorGated, offers
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.charts.cost import CostChart
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.table import PlainTable

if TYPE_CHECKING:
    from pathlib import Path

    from npa_sop_tui.tui.app import NpaSopApp

STATE_STYLE = {
    "deployed": "green",
    "ready": "green",
    "destroyed": "dim",
    "deploying": "yellow",
    "destroying": "yellow",
    DRAFT: "cyan",
}


class ClusterTable(PlainTable):
    """The inventory; posts ClusterHighlighted as the cursor moves."""

    class ClusterHighlighted(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def show(self, rows: list[ClusterRow]) -> None:
        """Hold `rows`; the highlighted cluster stays highlighted across reloads."""
        if not self.columns:
            self.add_columns("Name", "State", "Region", "Last operation")
        cells: dict[str, tuple[object, ...]] = {}
        for row in rows:
            style = STATE_STYLE.get(row.state, "red" if "fail" in row.state else "")
            state = Text(row.state, style=f"bold {style}".strip())
            cells[row.name] = (row.name, state, row.region or "—", row.last_operation)
        self.sync(cells)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        self.post_message(self.ClusterHighlighted(key or ""))


class HomeScreen(Guarded, OperatorGated, Screen[None]):
    """Clusters (name, region, state, last operation) and the actions on them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new", "New", id="home.new"),
        Binding("o", "open", "Open", tooltip="Open a cluster.yaml in the wizard", id="home.open"),
        Binding("e", "edit", "Edit", id="home.edit"),
        Binding("d", "deploy", "Deploy", id="home.deploy"),
        Binding("s", "status", "Status", id="home.status"),
        Binding("x", "destroy", "Destroy", id="home.destroy"),
        # in `?` and the palette, not the footer: at 80 columns it has no room left
        Binding(
            "u",
            "upgrade",
            "Upgrade",
            show=False,
            tooltip="Another Soperator version, planned first",
            id="home.upgrade",
        ),
        timeline_binding("home"),
        fleet_binding(),
        Binding("b", "sandbox", "Sandbox", id="home.sandbox"),
        # the list reloads on its own when you come back; the key stays for the impatient
        Binding("r", "reload", "Reload", show=False, id="home.reload"),
    ]

    selected: reactive[str] = reactive("")
    """Name of the highlighted cluster; "" when the inventory is empty."""

    rows: reactive[tuple[ClusterRow, ...]] = reactive(())
    """What the inventory returned last time."""

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="home"):
            yield Static("", id="sandbox-offer")
            yield Static("", id="empty-hint")
            yield ClusterTable(id="clusters", cursor_type="row", zebra_stripes=True)
            yield CostChart(id="costs")
        yield AppFooter()

    def on_screen_resume(self) -> None:
        # also the first showing; the load waits for the frame: the inventory's modules
        # (pydantic models, YAML, the state store) load in the worker's thread, and that
        # thread would otherwise compete with the first frame for the interpreter
        self.npa.cluster = self.selected
        self.npa.kube_context = ""
        self.call_after_refresh(self.reload)

    def reload(self) -> None:
        self._load()

    @work(exclusive=True, group="inventory", thread=True, exit_on_error=False)
    def _load(self) -> None:
        rows = self.npa.backend.list_clusters()
        # specs the wizard wrote (./cluster.yaml, or where the user chose) not deployed yet
        written = [self.npa.backend.default_spec_path(""), *self.npa.written_specs]
        rows += draft_rows((row.name for row in rows), written)
        identity = self.npa.backend.has_cloud_identity()
        self.app.call_from_thread(self._show, rows, identity)
        costs = self.npa.backend.cluster_costs([row.name for row in rows])
        self.app.call_from_thread(self._show_costs, costs)

    def _show_costs(self, costs: dict[str, object]) -> None:
        self.query_one(CostChart).costs = costs

    def _show(self, rows: list[ClusterRow], identity: bool) -> None:
        self.rows = tuple(rows)
        self.query_one(ClusterTable).show(rows)
        offer = self.query_one("#sandbox-offer", Static)
        if self.npa.sandbox:
            offer.update(
                "[b reverse] SANDBOX [/] Terraform runs locally on a stand-in recipe; "
                "Kubernetes and Slurm are simulated on this machine. "
                "Nothing is created in the cloud."
            )
        elif not identity:
            from npa_sop_tui.home.paths import config_path, shown

            offer.update(
                f"No cloud identity in {safe_markup(shown(config_path()))} (tenant_id, "
                "project_id, subnet_id). "
                "Press [b]b[/] to try the whole flow in the SANDBOX on this machine."
            )
        else:
            offer.update("")
        offer.display = bool(self.npa.sandbox or not identity)
        empty = self.query_one("#empty-hint", Static)
        from npa_sop_tui.tui.read_only import offers

        create = "Press [b]n[/] to create one, [b]o[/] to open a cluster.yaml."
        empty.update("" if rows else "No clusters yet. " + (create if offers(self, "new") else ""))
        empty.display = not rows
        if not rows:
            self.selected = ""
        self.refresh_bindings()

    @on(ClusterTable.ClusterHighlighted)
    def _highlight(self, event: ClusterTable.ClusterHighlighted) -> None:
        self.selected = event.name
        self.npa.cluster = event.name

    def watch_selected(self) -> None:
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in {"status", "destroy", "timeline", "upgrade"}:
            row = self._row()  # a draft has no cluster yet: nothing to show, upgrade or destroy
            return True if self.selected and (row is None or row.state != DRAFT) else None
        if action in {"edit", "deploy"}:
            return True if self.selected else None
        if action == "sandbox":
            return not self.npa.sandbox  # False hides it (not greyed): it cannot apply
        return True

    # -- actions ---------------------------------------------------------------------------

    def action_new(self) -> None:
        self.npa.action_new_cluster()

    def action_open(self) -> None:
        self.npa.action_open_spec()

    def action_sandbox(self) -> None:
        self.npa.action_sandbox()

    def action_reload(self) -> None:
        self.reload()

    def _row(self) -> ClusterRow | None:
        return next((r for r in self.rows if r.name == self.selected), None)

    def action_edit(self) -> None:
        row = self._row()
        if row is None:
            return
        from npa_sop_tui.screens.wizard import WizardScreen

        if row.state == DRAFT and row.spec_path is not None:
            self.npa.open_spec(row.spec_path)  # the file the wizard wrote
            return
        own = self.npa.backend.user_spec_for(row.name)
        if own is not None:  # the user's file (the wizard writes ./cluster.yaml), not a copy
            self.npa.open_spec(own)
            if row.spec_path is not None and _differs(own, row.spec_path):
                self.notify(
                    f"{own} differs from what {row.name} was last deployed with "
                    f"({row.spec_path}); deploying it applies the difference.",
                    title="Editing your file",
                )
            return
        if row.spec_path is not None and row.spec_path.exists():
            self.npa.open_spec(row.spec_path)
            self.notify(
                f"Editing the copy recorded at the last deploy: {row.spec_path} (no "
                f"cluster.yaml for {row.name} in this folder).",
                title="Editing the deployed copy",
            )
            return
        try:
            mapping = self.npa.backend.spec_for_cluster(row.name)
        except NpaError as exc:
            self.npa.show_error(exc, title=f"Cannot edit {row.name}")
            return
        self.app.push_screen(WizardScreen(mapping, path=None))

    def action_deploy(self) -> None:
        row = self._row()
        if row is None:
            return
        try:
            if row.state == DRAFT and row.spec_path is not None:
                mapping = self.npa.backend.load_spec(row.spec_path)  # first deploy: the file
            else:
                mapping = self.npa.backend.spec_for_cluster(row.name)
        except NpaError as exc:
            self.npa.show_error(exc, title=f"Cannot deploy {row.name}")
            return
        spec, issues = self.npa.backend.check(mapping)
        if spec is None:
            self.notify("; ".join(issue_text(i) for i in issues), severity="error")
            return
        self.npa.deploy(spec, spec_path=row.spec_path)

    def action_status(self) -> None:
        if self.selected:
            self.npa.show_status(self.selected)

    def action_destroy(self) -> None:
        if self.selected:
            self.npa.destroy(self.selected)

    def action_upgrade(self) -> None:
        if self.selected:
            self.npa.upgrade(self.selected)

    def action_timeline(self) -> None:
        from npa_sop_tui.screens.timeline import TimelineScreen

        if self.selected:
            self.app.push_screen(TimelineScreen(self.selected))

    def action_fleet(self) -> None:
        """Node states of every live cluster in one view."""
        from npa_sop_tui.screens.fleet_node_states import LIVE_STATES, FleetNodeStatesScreen

        live = [row.name for row in self.rows if row.state in LIVE_STATES]
        self.app.push_screen(FleetNodeStatesScreen(live))

    def palette_commands(self) -> Iterable[SystemCommand]:
        if self.selected:
            # a command's title is markup to the palette, and a draft's name is a file's text
            name = safe_markup(self.selected)
            commands = [
                ("deploy", f"Deploy {name}", "Plan and apply", self.action_deploy),
                ("status", f"Status of {name}", "Live dashboard", self.action_status),
                ("edit", f"Edit {name}", "Open its spec in the wizard", self.action_edit),
                (
                    "upgrade",
                    f"Upgrade {name}",
                    "Another Soperator version, planned first",
                    self.action_upgrade,
                ),
                ("destroy", f"Destroy {name}", "Tear it down", self.action_destroy),
            ]
            for action, title, help_text, call in commands:
                if offers(self, action):
                    yield SystemCommand(title, help_text, call)


def _differs(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() != b.read_bytes()
    except OSError:
        return False
