"""One cluster's last operation as a self-contained HTML page, to attach to a ticket.

Everything is inline (style, SVG): the page makes no request when opened, so it reads the
same offline, in a mail client or years later. Every value from a cluster or a log is
HTML-escaped. The log is redacted already (lifecycle/operation.py writes it so), and the
page shows no log lines: summaries, the timeline, checks and the verdict only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from html import escape
from typing import Any

from npa_sop_tui.events import GpuCheckReported
from npa_sop_tui.history.timeline import Timeline, duration_text
from npa_sop_tui.report.svg import timeline_svg
from npa_sop_tui.status.model import ClusterStatus

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left; }
th { background: #eee; } .muted { color: #777; }
.verdict { display: inline-block; padding: 4px 12px; font-weight: bold; border: 2px solid; }
.ready, .PASS, .ok, .Complete { color: #1e8449; } .progressing, .running { color: #b9770e; }
.degraded, .failed, .FAIL, .TIMEOUT, .Failed, .interrupted { color: #c0392b; }
svg { border: 1px solid #ddd; margin-top: .5em; }
"""


@dataclass
class ReportData:
    """What the page shows; `report_cmds` gathers it."""

    cluster: str
    operation: dict[str, Any]
    """The inventory's record of the operation (id, kind, started, ended, result, summary…)."""
    timeline: Timeline
    gpu_checks: list[GpuCheckReported] = field(default_factory=list)
    validation: dict[str, Any] | None = None
    status: ClusterStatus | None = None
    status_problem: str | None = None
    generated: float = field(default_factory=time.time)


def _when(ts: object) -> str:
    if not isinstance(ts, int | float):
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def verdict_of(data: ReportData) -> tuple[str, str]:
    """(state, sentence): the live status's verdict, else the operation's own result."""
    if data.status is not None:
        return data.status.verdict.state, data.status.verdict.summary
    result = str(data.operation.get("result") or "unknown")
    why = f" (live status unavailable: {data.status_problem})" if data.status_problem else ""
    return result, f"{data.operation.get('kind', 'operation')} {result}{why}"


def render_report(data: ReportData) -> str:
    op = data.operation
    started, ended = op.get("started"), op.get("ended")
    took = (
        duration_text(ended - started)
        if isinstance(started, int | float) and isinstance(ended, int | float)
        else "—"
    )
    state, sentence = verdict_of(data)
    summary = [
        ("Cluster", data.cluster),
        ("Operation", f"{op.get('kind', '?')} {op.get('id', '')}"),
        ("Result", str(op.get("result", "?"))),
        ("Started", _when(started)),
        ("Ended", _when(ended)),
        ("Took", took),
        ("By", " on ".join(str(p) for p in (op.get("user"), op.get("host")) if p) or "—"),
        ("Summary", str(op.get("summary") or "—")),
        (
            "Resources",
            f"{len(data.timeline.bars)} ({len(data.timeline.critical_path)} on the critical path)",
        ),
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>npa report: {escape(data.cluster)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(data.cluster)}: last operation</h1>",
        f'<p id="verdict">Verdict: <span class="verdict {escape(state)}">{escape(state.upper())}'
        f"</span> {escape(sentence)}</p>",
        "<h2>Summary</h2>",
        _table(["", ""], summary, header=False),
        "<h2>Timeline</h2>",
        timeline_svg(
            data.timeline, now=ended if isinstance(ended, int | float) else data.generated
        ),
        "<h2>Active checks</h2>",
        _active_checks(data),
        "<h2>GPU gate</h2>",
        _gpu_gate(data),
        f'<p class="muted">Written by npa soperator report at {_when(data.generated)}.</p>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _table(head: list[str], rows: list[tuple[str, ...]], *, header: bool = True) -> str:
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>")
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            tag = "th" if not header and i == 0 else "td"
            cells.append(f'<{tag} class="{escape(str(cell))}">{escape(str(cell))}</{tag}>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _active_checks(data: ReportData) -> str:
    kube = data.status.kube if data.status is not None else None
    if kube is None:
        why = data.status_problem or "Kubernetes was not reachable"
        return f'<p class="muted">Not available: {escape(why)}.</p>'
    if not kube.active_checks:
        crd = (
            "no ActiveCheck resources"
            if kube.active_checks_crd
            else "the ActiveCheck CRD is absent"
        )
        return f'<p class="muted">None ({escape(crd)}).</p>'
    rows = [
        (c.name, c.type, c.status or "—", "; ".join(c.failures) or "—") for c in kube.active_checks
    ]
    return _table(["Check", "Type", "Status", "Failures"], rows)


def _gpu_gate(data: ReportData) -> str:
    finals = [c for c in data.gpu_checks if c.status != "running"]
    if finals:
        rows = [(c.pool, c.node or "—", c.check or "—", c.status, c.message or "—") for c in finals]
        return _table(["Pool", "Node", "Check", "Result", "Message"], rows)
    validation = data.validation or {}
    checks = validation.get("gpu_creation_checks")
    if isinstance(checks, list) and checks:
        rows = [
            tuple(str(c.get(k, "—")) for k in ("pool", "node", "status", "message"))
            for c in checks
            if isinstance(c, dict)
        ]
        return _table(["Pool", "Node", "Result", "Message"], rows)
    return (
        '<p class="muted">No GPU gate ran in this operation (no GPU pool, or it was skipped).</p>'
    )
