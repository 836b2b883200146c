"""Parse `scontrol show node NAME -o` (one line per node) into a `NodeDetail`.

The line is `Key=Value` pairs separated by spaces, in the order Slurm's
`slurm_sprint_node_table` (src/api/node_info.c, 22.05 to 26.05) prints them. Most values
have no spaces; `OS=` (`Linux 6.1.0 #1 SMP …`) and the free-text fields do. After the
power line come, each only when set: `Reason=` (text, then ` [user@time]` when Slurm knows
who set it and when; more reason lines follow after eight spaces), `Comment=`, `Extra=`,
`InstanceId=` / `InstanceType=`, `ReservationName=` (and `Topology=` in 25.11). Soperator's
slurmd entrypoint always passes `--instance-id` and passes `--extra` when the recipe sets
it, so on a real cluster a reason is followed by more fields, and its value has spaces:

    … AveWatts=0 Reason=gres/gpu count reported lower than configured (1 < 2)
    [root@2026-12-01T19:59:46] Extra={"nebius":"x"} InstanceId=i-abc123

So the line is split at Slurm's known keys, never "from Reason= to the end". A key this
list does not know (a newer Slurm) is still found wherever a space-free value is expected.
Slurm 22.05 has no `scontrol --json`, so this text is what every version shares.
"""

from __future__ import annotations

import re

from npa_sop_tui.status.jobs import NodeDetail
from npa_sop_tui.status.slurm import SinfoParseError

# Every key slurm_sprint_node_table prints (22.05–26.05), in its order.
KNOWN_KEYS = (
    "NodeName", "Arch", "CpuBind", "CoresPerSocket", "CPUAlloc", "CPUEfctv", "CPUTot",
    "CPULoad", "AvailableFeatures", "ActiveFeatures", "Gres", "GresDrain", "GresUsed",
    "NodeAddr", "NodeHostName", "BcastAddr", "Port", "Version", "OS", "RealMemory",
    "AllocMem", "FreeMem", "Sockets", "Boards", "CoreSpecCount", "CPUSpecList",
    "MemSpecLimit", "RestrictedCoresPerGPU", "State", "ThreadsPerCore", "TmpDisk", "Weight",
    "Owner", "MCS_label", "NextState", "Partitions", "BootTime", "SlurmdStartTime",
    "LastBusyTime", "ResumeAfterTime", "SuspendTime", "CfgTRES", "AllocTRES", "CapWatts",
    "CurrentWatts", "AveWatts", "LowestJoules", "ConsumedJoules", "ExtSensorsJoules",
    "ExtSensorsWatts", "ExtSensorsTemp", "Reason", "Comment", "Extra", "InstanceId",
    "InstanceType", "ReservationName", "Topology",
)  # fmt: skip
# Values that may hold spaces: everything else ends at the first space.
FREE_TEXT = frozenset({"OS", "Reason", "Comment", "Extra"})
_ORDER = {key: i for i, key in enumerate(KNOWN_KEYS)}
_KNOWN = re.compile(r"(?:^|(?<=\s))(" + "|".join(KNOWN_KEYS) + r")=")
_ANY_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=")
# first reason line, then ` [user@time]` (a time: `[a@b]` in the text is text), then any
# further lines
_REASON_BY = re.compile(r"^(.*?) \[([^@\]\s]+)@(\d[\d:/.T-]*)\](.*)$", re.DOTALL)


def show_node_command(node: str) -> str:
    return f"scontrol show node {node} -o"


def split_fields(line: str) -> dict[str, str]:
    """`Key=Value` pairs of one `scontrol show … -o` line, split at Slurm's known keys.

    Each key appears once; inside a free-text value only a key that Slurm prints later
    ends it (a reason may well say `State=` or `Reason=`)."""
    starts: list[re.Match[str]] = []
    for match in _KNOWN.finditer(line):
        key = match.group(1)
        current = starts[-1].group(1) if starts else None
        if any(m.group(1) == key for m in starts):
            continue
        if current in FREE_TEXT and _ORDER[key] < _ORDER[current]:
            continue
        starts.append(match)
    fields: dict[str, str] = {}
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
        key, value = match.group(1), line[match.end() : end].strip()
        if key not in FREE_TEXT and " " in value:
            # a key this list does not know follows: split the rest the generic way
            value, _, rest = value.partition(" ")
            for extra in _pairs(rest):
                fields.setdefault(*extra)
        fields[key] = value
    return fields


def _pairs(text: str) -> list[tuple[str, str]]:
    found = list(_ANY_KEY.finditer(text))
    return [
        (m.group(1), text[m.end() : found[i + 1].start() if i + 1 < len(found) else None].strip())
        for i, m in enumerate(found)
    ]


def split_reason(text: str) -> tuple[str | None, str | None, str | None]:
    """`maintenance [root@2026-12-01T10:00:00]` → (text, who, when); lines after the first
    (Slurm indents them) join the text."""
    match = _REASON_BY.match(text)
    if match is None:
        return " ".join(text.split()) or None, None, None
    first, by, when, more = match.groups()
    reason = " ".join(f"{first} {more}".split())
    return reason or None, by, when


def parse_show_node(text: str) -> NodeDetail:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    if not line.startswith("NodeName="):
        raise SinfoParseError(f"scontrol printed no node: {line[:120]!r}")
    fields = split_fields(line)
    reason, by, when = split_reason(fields["Reason"]) if "Reason" in fields else (None,) * 3
    return NodeDetail(
        name=fields["NodeName"],  # the line starts with it
        state=fields.get("State", "UNKNOWN"),
        reason=reason,
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
