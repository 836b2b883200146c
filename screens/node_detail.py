"""One Slurm node in detail (scontrol show node): state, reason, GRES, its jobs, its
Kubernetes pod and node group; drain (`d`, with a reason) and resume (`u`), both confirmed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, plain

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp


class NodeDetailScreen(Guarded, OperatorGated, ModalScreen[bool]):
    """Dismisses with True when the node was drained or resumed (the dashboard refreshes)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "drain", "Drain", id="node.drain"),
        Binding("u", "resume", "Resume", id="node.resume"),
        Binding("r", "run", "Run", tooltip="Run a job on this node's pool", id="node.run"),
        Binding("ctrl+r", "reload", "Reload", id="node.reload"),
        Binding("escape", "close", "Back", id="node.leave"),
    ]

    def __init__(self, cluster: str, node: str, kube: Any = None) -> None:
        super().__init__()
        self.cluster = cluster
        self.node = node
        self.kube = kube
        self.detail: Any = None
        self.changed = False

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide-error", id="node-detail"):
            yield Label(plain(f"Slurm node {self.node}"), classes="dialog-title")
            with VerticalScroll(classes="dialog-body"):
                yield Static("reading scontrol show node…", id="node-text", markup=False)
            yield Static(
                "d drain (asks a reason) · u resume · r reload · esc back",
                classes="note",
                markup=False,
            )

    def on_mount(self) -> None:
        self.action_reload()

    def action_run(self) -> None:
        from npa_sop_tui.screens.run_dialog import open_run

        # Soperator names a worker `<nodeset>-<i>`: the pool is the name without the index
        pool = self.node.rsplit("-", 1)[0] if "-" in self.node else None
        open_run(self.app, self.cluster, pool=pool)

    @work(exclusive=True, group="node", exit_on_error=False)
    async def action_reload(self) -> None:
        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            self.detail = await ops.node(self.node)
        finally:
            await ops.aclose()
        self._show()

    def _show(self) -> None:
        from npa_sop_tui.status.placement import place_node

        d = self.detail = place_node(self.detail, self.kube)
        # every field is what Slurm or Kubernetes said: one line each, whatever it holds
        lines = [f"state       {safe_text(d.state)}"]
        if d.reason:
            who = f" (by {d.reason_by} at {d.reason_time})" if d.reason_by else ""
            lines.append(f"reason      {safe_text(d.reason + who)}")
        gres_used = f" (used {d.gres_used})" if d.gres_used else ""
        on_node = f" on {d.k8s_node}" if d.k8s_node else ""
        jobs = ", ".join(f"{j.id} {j.name} ({j.user}, {j.state})" for j in d.jobs)
        lines += [
            f"partitions  {safe_text(', '.join(d.partitions) or '—')}",
            f"cpus        {d.cpus_allocated or 0}/{d.cpus or '?'} allocated",
            f"memory      {d.memory_mb or '?'} MB",
            f"gres        {safe_text((d.gres or '—') + gres_used)}",
            f"k8s pod     {safe_text((d.k8s_pod or '—') + on_node)}",
            f"node group  {safe_text(d.node_group or '—')}",
            f"jobs        {safe_text(jobs or 'none')}",
        ]
        self.query_one("#node-text", Static).update(plain("\n".join(lines), keep_newlines=True))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "drain":
            return True if self.detail is not None and "DRAIN" not in self.detail.state else None
        if action == "resume":
            return True if self.detail is not None else None
        return True

    def action_drain(self) -> None:
        from npa_sop_tui.screens.modals import ReasonModal

        def chosen(reason: str | None) -> None:
            if reason:
                self._act("drain", reason)

        self.app.push_screen(ReasonModal(self.node), chosen)

    def action_resume(self) -> None:
        from npa_sop_tui.screens.modals import ConfirmModal

        def chosen(yes: bool | None) -> None:
            if yes:
                self._act("resume", None)

        question = f"Resume {self.node}? Slurm starts scheduling jobs on it again."
        self.app.push_screen(ConfirmModal(question, yes="Resume"), chosen)

    @work(exclusive=True, group="node", exit_on_error=False)
    async def _act(self, what: str, reason: str | None) -> None:
        ops = await self.npa.backend.slurm_ops(self.cluster)
        try:
            if what == "drain":
                await ops.drain(self.node, reason or "")
            else:
                await ops.resume(self.node)
            self.detail = await ops.node(self.node)
        finally:
            await ops.aclose()
        self.changed = True
        self.notify(f"{what}: {self.node} is now {safe_text(self.detail.state)}")
        self._show()

    def action_close(self) -> None:
        self.dismiss(self.changed)
