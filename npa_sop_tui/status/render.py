"""Compact rich view of a `ClusterStatus` for the headless CLI (the TUI has its own widgets).

Every name, state, reason and message is what a cluster said: each goes in as a `Text` of
its `safe_text` (`_t`), never as a string Rich would parse as markup, and no control in it
reaches the terminal (a drain reason `[/] x` is text, an escape sequence reads `␛]…`)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.status.apply_deadlines import utc_clock
from npa_sop_tui.status.freshness import view
from npa_sop_tui.status.model import ClusterStatus, Freshness

VERDICT_STYLE = {
    "ready": "bold green",
    "progressing": "bold yellow",
    "degraded": "bold red",
    "failed": "bold white on red",
    "unknown": "bold magenta",
}
SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "red"}


def _t(value: object, style: str = "") -> Text:
    """Outside text as one line of Rich text: shown, never markup, never obeyed."""
    return Text(safe_text(value), style=style)


def freshness_text(name: str, f: Freshness, *, interval: float | None = None) -> Text:
    """`slurm: STALE 41s (connection refused)`: age since the last successful collection."""
    shown = view(f, interval=interval)
    style = {"fresh": "green", "stale": "yellow", "error": "red"}.get(shown.state, "dim")
    text = Text(f"{name}: ", style="bold")
    head = shown.label()
    reason = f" ({shown.reason})" if shown.reason else ""
    text.append(safe_text(head[: len(head) - len(reason)]), style=style)
    if shown.reason:
        text.append(safe_text(f" — {shown.reason}"), style="dim")
    return text


def render_status(snap: ClusterStatus, *, interval: float | None = None) -> RenderableType:
    parts: list[RenderableType] = []
    head = Text()
    head.append(safe_text(snap.name), style="bold")
    head.append(safe_text(f"  context {snap.context}  "), style="dim")
    head.append(snap.verdict.state.upper(), style=VERDICT_STYLE.get(snap.verdict.state, ""))
    head.append(safe_text(f"  {snap.verdict.summary}"))
    parts.append(head)
    login = snap.login
    parts.append(
        _t(
            f"login: {login.user}@{login.host}:{login.port} ({login.source})"
            if login.host
            else "login: no address yet",
            style="dim",
        )
    )
    for name, f in snap.freshness.items():
        parts.append(freshness_text(name, f, interval=interval if name == "slurm" else None))

    kube = snap.kube
    if kube is not None:
        t = Table(title="Kubernetes", title_justify="left", expand=False, pad_edge=False)
        for col in ("node group", "ready", "notes"):
            t.add_column(col)
        for g in kube.node_groups:
            notes = ", ".join(f"{c.type}={c.status}" for c in g.notable_conditions)
            if g.preemptible:
                notes = ("preemptible " + notes).strip()
            style = "green" if g.ready == g.total else "yellow"
            t.add_row(_t(g.name), Text(f"{g.ready}/{g.total}", style=style), _t(notes))
        for ns in kube.nodesets:
            style = "green" if ns.phase == "Ready" else "yellow"
            t.add_row(
                _t(f"NodeSet {ns.name}"),
                Text(f"{ns.ready}/{ns.desired}", style=style),
                _t(ns.phase or ""),
            )
        sc = kube.slurm_cluster
        t.add_row(
            "SlurmCluster",
            _t(sc.phase or "-" if sc else "-"),
            _t(
                ", ".join(f"{c.type}={c.status}" for c in sc.conditions if c.status != "True")
                if sc
                else ("CRD not installed" if not kube.slurm_cluster_crd else "absent")
            ),
        )
        for comp in kube.components:
            bad = [p for p in comp.pods if not p.ready]
            note = "; ".join(f"{p.name} {p.waiting_reason or p.phase}" for p in bad[:3])
            style = "green" if comp.ready == comp.total else "yellow"
            t.add_row(
                _t(f"pods {comp.component}"),
                Text(f"{comp.ready}/{comp.total}", style=style),
                _t(note),
            )
        parts.append(t)

    slurm = snap.slurm
    if slurm is not None:
        t = Table(
            title=_t(f"Slurm {slurm.version or ''} ({slurm.source_format})"),
            title_justify="left",
            pad_edge=False,
        )
        for col in ("partition", "avail", "nodes", "states"):
            t.add_column(col)
        for p in slurm.partitions:
            states = ", ".join(f"{k} {v}" for k, v in sorted(p.state_counts.items()))
            t.add_row(
                _t(p.name + ("*" if p.default else "")),
                _t(p.available or ""),
                str(p.nodes_total),
                _t(states),
            )
        parts.append(t)
        problems = [n for n in slurm.nodes if not n.usable]
        if problems:
            nt = Table(title="Slurm nodes needing attention", title_justify="left", pad_edge=False)
            for col in ("node", "state", "cpus", "gres", "reason"):
                nt.add_column(col)
            for n in problems[:20]:
                nt.add_row(
                    _t(n.name),
                    _t(n.display, style="red"),
                    str(n.cpus or ""),
                    _t(n.gres or ""),
                    _t(n.reason or ""),
                )
            if len(problems) > 20:
                nt.add_row(f"… {len(problems) - 20} more", "", "", "", "")
            parts.append(nt)

    if kube is not None and kube.active_checks:
        at = Table(title="Active checks", title_justify="left", pad_edge=False)
        for col in ("check", "type", "status", "last run", "notes"):
            at.add_column(col)
        for c in kube.active_checks:
            notes = "the apply waits on it" if c.name in kube.waiting_on else ""
            notes = "; ".join(x for x in (notes, *c.failures[:2]) if x)
            style = {"Complete": "green", "Failed": "red", "Error": "red"}.get(c.status or "", "")
            at.add_row(_t(c.name), _t(c.type), _t(c.status or "-", style=style),
                       _t(c.last_run_id or ""), _t(notes))  # fmt: skip
        parts.append(at)
    for w in snap.apply_waits:
        line = Text("The running deploy's apply waits for ", style="yellow")
        line.append(safe_text(w.what))
        line.append(
            f": gives up at {utc_clock(w.gives_up_at)} "
            f"(up to {w.minutes} min from {utc_clock(w.started_at)})",
            style="bold",
        )
        parts.append(line)
    if snap.gpu_validation:
        gv = snap.gpu_validation
        line = Text("GPU creation check (last deploy): ")
        status = safe_text(gv.get("status"))
        line.append(status, style="green" if gv.get("status") == "ready" else "red")
        for check in gv.get("gpu_creation_checks") or []:  # type: ignore[union-attr]
            line.append(safe_text(f"  {check['pool']} {check['status']}"))
        parts.append(line)

    for h in snap.verdict.hints:
        line = Text(f"[{h.severity}] ", style=SEVERITY_STYLE.get(h.severity, ""))
        line.append(safe_text(h.message))
        line.append(f"\n    → {safe_text(h.action)}", style="dim")
        parts.append(line)
    return Group(*parts)
