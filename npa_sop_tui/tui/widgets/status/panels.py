"""Status panes bound to a `ClusterStatus` snapshot (status/model.py).

Each pane has `show(status)`; the screen that owns them decides when a snapshot arrives.
Tables are updated in place, keyed by name, so a refresh keeps the cursor and scroll.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

from rich.text import Text
from textual import work
from textual.content import Content
from textual.widgets import Static

from npa_sop_tui.tui.safety import Guarded, markup, search_pattern, shown
from npa_sop_tui.tui.widgets.lazy_table import Column, LazyTable
from npa_sop_tui.tui.widgets.table import PlainTable

STATE_COLOURS = {
    "idle": "green",
    "mixed": "cyan",
    "allocated": "blue",
    "completing": "blue",
    "drained": "yellow",
    "draining": "yellow",
    "down": "red",
    "fail": "red",
    "failing": "red",
    "unknown": "magenta",
}
VERDICT_COLOURS = {
    "ready": "green",
    "progressing": "yellow",
    "degraded": "darkorange",  # a CSS name: Textual markup drops a style it cannot parse
    "failed": "red",
    "destroyed": "dim",
    "unknown": "magenta",
}


class NodeGroupsTable(PlainTable):
    """Kubernetes nodes grouped by Soperator nodeset: ready/total, capacity mode, conditions."""

    KEEP = ("node group", "ready", "capacity", "notes", "role")

    capacity: dict[str, str]
    """Capacity mode per worker pool from the deployed spec (the state's, when known, wins)."""

    def on_mount(self) -> None:
        self.capacity = {}
        for label in ("Node group", "Ready", "Capacity", "Role", "Notes"):
            self.add_column(label, key=label.lower())

    def show(self, status: Any) -> None:
        kube = getattr(status, "kube", None)
        applied = {w.name: w.capacity_mode for w in getattr(status, "workers", None) or []}
        rows: dict[str, tuple[Any, ...]] = {}
        for g in kube.node_groups if kube else []:
            colour = "green" if g.total and g.ready == g.total else "yellow"
            notes = ", ".join(c.reason or c.type for c in g.notable_conditions)
            mode = applied.get(g.name) or self.capacity.get(g.name)
            if mode is None and g.role == "worker":
                mode = "preemptible" if g.preemptible else "on-demand"
            rows[g.name] = (
                g.name,
                Text(f"{g.ready}/{g.total}", style=colour),
                mode or "—",
                g.role or "—",
                notes,
            )
        self.sync(rows)


class ComponentsTable(PlainTable):
    """Soperator pods by component, with waiting reasons (Pending, image pull errors…)."""

    KEEP = ("component", "ready", "problems")

    def on_mount(self) -> None:
        for label in ("Component", "Ready", "Problems"):
            self.add_column(label, key=label.lower())

    def show(self, status: Any) -> None:
        kube = getattr(status, "kube", None)
        rows: dict[str, tuple[Any, ...]] = {}
        for c in kube.components if kube else []:
            problems = sorted(
                {
                    p.waiting_reason or p.phase
                    for p in c.pods
                    if not p.ready and p.phase != "Succeeded"
                }
            )
            colour = "green" if c.total and c.ready == c.total else "yellow"
            rows[c.component] = (
                c.component,
                Text(f"{c.ready}/{c.total}", style=colour),
                ", ".join(problems),
            )
        self.sync(rows)


class SlurmClusterPanel(Guarded, Static):
    """The SlurmCluster custom resource: phase and conditions."""

    def show(self, status: Any) -> None:
        kube = getattr(status, "kube", None)
        sc = kube.slurm_cluster if kube else None
        if kube is None:
            self.update("[b]SlurmCluster[/b]  no Kubernetes data yet")
            return
        if sc is None:
            what = "not created yet" if kube.slurm_cluster_crd else "CRD not installed yet"
            self.update(f"[b]SlurmCluster[/b]  {what}")
            return
        colour = "green" if (sc.phase or "").lower() == "available" else "yellow"
        lines = [
            markup(
                f"[b]SlurmCluster[/b] $name  phase [{colour}]$phase[/]",
                name=sc.name,
                phase=sc.phase or "—",
            )
        ]
        for cond in sc.conditions:
            mark = "[green]✓[/]" if cond.status == "True" else "[red]✗[/]"
            reason = f" ({cond.reason})" if cond.reason else ""
            lines.append(markup(f"  {mark} $what", what=f"{cond.type}{reason}"))
        lines += checks_lines(status)
        self.update(Content("\n").join(lines))


def apply_wait_lines(status: Any) -> list[Content]:
    """The recipe's long waits a deploy running on this machine is in, with their deadlines
    (status/apply_deadlines.py); nothing when no deploy runs here."""
    from npa_sop_tui.status.apply_deadlines import utc_clock

    return [
        markup(
            "  [yellow]apply waits for[/] $what: [b]gives up at $at[/]",
            what=w.what,
            at=f"{utc_clock(w.gives_up_at)} (up to {w.minutes} min)",
        )
        for w in getattr(status, "apply_waits", None) or []
    ]


def checks_lines(status: Any) -> list[Content]:
    """Active checks (what a running apply waits on, failures with per-node reasons) and
    the last deploy's GPU creation check. Nothing when there is neither."""
    from npa_sop_tui.status.active_checks import results_by_node

    lines: list[Content] = apply_wait_lines(status)
    kube = getattr(status, "kube", None)
    checks = kube.active_checks if kube is not None else []
    if checks:
        waiting = set(kube.waiting_on)
        lines.append(markup("[b]Active checks[/b]"))
        slurm_nodes = status.slurm.nodes if getattr(status, "slurm", None) else []
        for c in checks:
            state = c.status or "not run"
            mark = {"Complete": "[green]✓[/]", "Failed": "[red]✗[/]", "Error": "[red]✗[/]"}.get(
                state, "[yellow]…[/]"
            )
            job = f" job {c.last_run_id}" if c.last_run_id else ""
            wait = "  [yellow]← the apply waits on it[/]" if c.name in waiting else ""
            lines.append(markup(f"  {mark} $what{wait}", what=f"{c.name} {state}{job}"))
            for node, reason in sorted(results_by_node(c.name, slurm_nodes).items()):
                lines.append(markup("      $what", what=f"{node}: {reason}"))
    gpu = getattr(status, "gpu_validation", None)
    if gpu:
        colour = "green" if gpu.get("status") == "ready" else "red"
        pools = ", ".join(
            f"{c['pool']} {c['status']} {len(c.get('nodes') or [])}"
            for c in gpu.get("gpu_creation_checks") or []
        )
        lines.append(
            markup(f"[b]GPU creation check[/b] [{colour}]$state[/]  $pools",
                   state=gpu.get("status"), pools=pools)
        )  # fmt: skip
        message = (gpu.get("validation") or {}).get("message")
        if message:
            lines.append(markup("  $message", message=message))
    return lines


class PartitionsTable(PlainTable):
    """Slurm partitions with node counts by state."""

    KEEP = ("partition", "avail", "nodes", "idle", "alloc", "other")

    def on_mount(self) -> None:
        for label in ("Partition", "Avail", "Nodes", "Alloc", "Idle", "Other"):
            self.add_column(label, key=label.lower())

    def show(self, status: Any) -> None:
        slurm = getattr(status, "slurm", None)
        rows: dict[str, tuple[Any, ...]] = {}
        for p in slurm.partitions if slurm else []:
            name = f"{p.name}*" if p.default else p.name
            avail = Text(p.available or "—", style="green" if p.available == "up" else "red")
            rows[p.name] = (
                name,
                avail,
                str(p.nodes_total),
                str(p.nodes_allocated),
                str(p.nodes_idle),
                str(p.nodes_other),
            )
        self.sync(rows)


NODE_COLUMNS = ("name", "state", "reason", "cpus", "memory", "gres", "partitions")
"""Name and state first, so a narrow terminal cuts the resources, never what a node is."""
NODE_WIDTHS = {"state": 10, "reason": 28, "cpus": 9, "memory": 8, "gres": 16, "partitions": 14}
"""Fixed widths: nothing is measured, whatever the number of nodes."""


class SlurmNodesTable(LazyTable):
    """Slurm nodes: sortable (`o` cycles the column), filterable, coloured by state.

    Built for 10,000 nodes: a LazyTable, so only the rows on screen are turned into cells
    (each node's cells built once and reused while the node is unchanged), and a refresh
    costs a filter and a sort of the node list, never a row-by-row table update.
    Narrower than its columns, it keeps name and state, then what fits whole (Enter on a
    node shows every field; the tooltip names the columns left out)."""

    KEEP = ("name", "state", "reason", "cpus", "memory", "gres", "partitions")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(zebra_stripes=True, **kwargs)
        self.sort_column = "name"
        self.filter_text = ""
        self._slurm_nodes: list[Any] = []
        self._cells: dict[str, tuple[Any, tuple[Any, ...]]] = {}  # name → (node, cells)
        self._name_width = 6
        self._natural: dict[str, tuple[Any, ...]] = {}  # name → natural sort key, computed once
        self._order_of: tuple[list[str], list[int]] = ([], [])  # names → their sorted order

    def on_mount(self) -> None:
        self.set_columns(
            [Column(k, k.capitalize(), NODE_WIDTHS.get(k, self._name_width)) for k in NODE_COLUMNS]
        )

    def show(self, status: Any) -> None:
        slurm = getattr(status, "slurm", None)
        self._slurm_nodes = list(slurm.nodes) if slurm else []
        self._fit_name_column(self._slurm_nodes)
        self._render_rows()

    def _fit_name_column(self, nodes: list[Any]) -> None:
        width = min(40, max([6, *(len(n.name) for n in nodes)]))
        if width != self._name_width:
            self._name_width = width
            self.set_column_width("name", width)

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self._render_rows()

    def cycle_sort(self) -> str:
        index = (NODE_COLUMNS.index(self.sort_column) + 1) % len(NODE_COLUMNS)
        self.sort_column = NODE_COLUMNS[index]
        self._render_rows()
        return self.sort_column

    def visible(self) -> list[Any]:
        nodes = self._slurm_nodes
        pattern = search_pattern(self.filter_text)
        if pattern is not None:
            nodes = [
                n
                for n in nodes
                if pattern.search(
                    " ".join([n.name, n.display, *n.partitions, n.reason or "", n.gres or ""])
                )
            ]
        if self.sort_column == "name":
            return self._by_name(nodes)
        return sorted(nodes, key=_node_sort_key(self.sort_column, self._natural))

    def _by_name(self, nodes: list[Any]) -> list[Any]:
        """Sorted by natural name. The order depends on the names alone, and a refresh
        mostly brings the same names in the same order: then the last order is reused."""
        names = [n.name for n in nodes]
        if names != self._order_of[0]:
            key = _node_sort_key("name", self._natural)
            order = sorted(range(len(nodes)), key=lambda i: key(nodes[i]))
            self._order_of = (names, order)
        return [nodes[i] for i in self._order_of[1]]

    def _row(self, n: Any) -> tuple[Any, ...]:
        """The cells of one node, built when its row is first painted."""
        cached = self._cells.get(n.name)
        if cached is not None and (cached[0] is n or cached[0] == n):
            return cached[1]
        colour = STATE_COLOURS.get(n.state, "")
        if set(n.flags) & {"DRAIN", "NOT_RESPONDING"} and colour == "green":
            colour = "yellow"
        cpus = "—" if n.cpus is None else f"{n.cpus_allocated or 0}/{n.cpus}"
        mem = "—" if n.memory_mb is None else f"{n.memory_mb // 1024} GiB"
        cells = (
            n.name,
            Text(n.display, style=f"bold {colour}".strip()),
            n.reason or "",
            cpus,
            mem,
            n.gres or "",
            ",".join(n.partitions),
        )
        self._cells[n.name] = (n, cells)
        return cells

    def _render_rows(self) -> None:
        self.show_rows(self.visible(), key=_node_name, cells=self._row)


def _node_name(node: Any) -> str:
    return str(node.name)


def _node_sort_key(column: str, cache: dict[str, tuple[Any, ...]] | None = None) -> Any:
    cache = {} if cache is None else cache

    def natural(name: str) -> tuple[Any, ...]:
        key = cache.get(name)
        if key is None:
            key = cache[name] = tuple(
                int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)
            )
        return key

    def key(n: Any) -> Any:
        if column == "state":
            return (n.display, natural(n.name))
        if column == "partitions":
            return (",".join(n.partitions), natural(n.name))
        if column == "cpus":
            return (n.cpus or 0, natural(n.name))
        if column == "memory":
            return (n.memory_mb or 0, natural(n.name))
        if column == "gres":
            return (n.gres or "", natural(n.name))
        if column == "reason":
            return (n.reason or "", natural(n.name))
        return natural(n.name)

    return key


FRESHNESS_COLOURS = {"fresh": "green", "stale": "yellow", "error": "red"}


def freshness_text(
    status: Any, *, now: float | None = None, interval: float | None = None
) -> Content:
    """`kube fresh 2s · slurm STALE 40s (connection refused)`: ages from the last success."""
    from npa_sop_tui.status.freshness import view

    parts: list[Content] = []
    for source in ("kube", "slurm"):
        f = status.freshness.get(source)
        if f is None:
            continue
        seen = view(f, interval=interval if source == "slurm" else None, now=now)
        colour = FRESHNESS_COLOURS.get(seen.state, "dim")
        parts.append(markup(f"{source} [{colour}]$label[/]", label=seen.label()))
    return Content(" · ").join(parts)


class VerdictPanel(Guarded, Static):
    """The verdict (ready / progressing / degraded / failed) and what to do about it."""

    def show(self, status: Any) -> None:
        v = status.verdict
        colour = VERDICT_COLOURS.get(v.state, "")
        lines = [markup(f"[b reverse {colour}] {v.state.upper()} [/] $summary", summary=v.summary)]
        for h in v.hints:
            mark = {"error": "[red]✗[/]", "warning": "[yellow]![/]"}.get(h.severity, "·")
            lines.append(markup(f" {mark} $message → $action", message=h.message, action=h.action))
        self.update(Content("\n").join(lines))


class MiniStatus(Guarded, Static):
    """A compact status summary for the deploy screen: nodes, pods, SlurmCluster phase."""

    @work(exclusive=True, group="deploy-status", exit_on_error=False)
    async def follow(self, snapshots: AsyncIterator[Any]) -> None:
        """Show each snapshot of a live feed until the feed ends or the widget goes."""
        with contextlib.suppress(asyncio.CancelledError):
            async for snapshot in snapshots:
                self.show(snapshot)

    def show(self, status: Any) -> None:
        kube = status.kube
        lines = [Content.assemble(markup("[b]Live status[/b] ("), freshness_text(status), ")")]
        if kube is not None:  # names and phases are what Kubernetes said: shown, not obeyed
            for g in kube.node_groups:
                lines.append(shown(f"  nodes {g.name}: {g.ready}/{g.total}"))
            for c in kube.components:
                lines.append(shown(f"  pods {c.component}: {c.ready}/{c.total}"))
            sc = kube.slurm_cluster
            lines.append(shown(f"  SlurmCluster: {(sc.phase or '—') if sc else 'not yet'}"))
            if kube.waiting_on:
                lines.append(shown(f"  apply waits on: {', '.join(kube.waiting_on)}"))
        lines += apply_wait_lines(status)
        if status.slurm is not None:
            usable = sum(1 for n in status.slurm.nodes if n.usable)
            lines.append(Content(f"  slurm nodes usable: {usable}/{len(status.slurm.nodes)}"))
        lines.append(Content(f"  verdict: {status.verdict.state}"))
        self.update(Content("\n").join(lines))
