"""Parse `scontrol show node NAME -o` (one line per node) into a `NodeDetail`.

Slurm 22.05 has no `scontrol --json`. The line is `Key=Value` pairs separated by spaces;
values have no spaces except `Reason=`, which comes last and runs to the end of the line
(`Reason=maintenance by me [root@2026-12-01T10:00:00]`: text, then who and when).
"""

from __future__ import annotations

import re

from npa_sop_tui.status.jobs import NodeDetail
from npa_sop_tui.status.slurm import SinfoParseError

_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=")
_REASON_TAIL = re.compile(r"^(.*?)\s*\[([^@\]]+)@([^\]]+)\]\s*$")


def show_node_command(node: str) -> str:
    return f"scontrol show node {node} -o"


def parse_show_node(text: str) -> NodeDetail:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    if not line.startswith("NodeName="):
        raise SinfoParseError(f"scontrol printed no node: {line[:120]!r}")
    fields: dict[str, str] = {}
    reason_at = line.find(" Reason=")
    head, reason_text = (line, None) if reason_at < 0 else (line[:reason_at], line[reason_at + 8 :])
    matches = list(_KEY.finditer(head))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(head)
        fields[match.group(1)] = head[match.end() : end].strip()
    reason = by = when = None
    if reason_text is not None:
        fields["Reason"] = reason_text.strip()
        tail = _REASON_TAIL.match(reason_text)
        reason, by, when = tail.groups() if tail else (reason_text.strip(), None, None)
    return NodeDetail(
        name=fields["NodeName"],  # the line starts with it
        state=fields.get("State", "UNKNOWN"),
        reason=reason or None,
        reason_by=by,
        reason_time=when,
        cpus=_int(fields.get("CPUTot")),
        cpus_allocated=_int(fields.get("CPUAlloc")),
        memory_mb=_int(fields.get("RealMemory")),
        memory_allocated_mb=_int(fields.get("AllocMem")),
        gres=_text(fields.get("Gres")),
        gres_used=_text(fields.get("GresUsed")),
        partitions=[p for p in (_text(fields.get("Partitions")) or "").split(",") if p],
        features=[f for f in (_text(fields.get("ActiveFeatures")) or "").split(",") if f],
        fields=fields,
    )


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _text(value: str | None) -> str | None:
    return None if value in (None, "", "(null)", "N/A", "n/a") else value
