"""What the sandbox's login node prints: Slurm's own text and JSON for a list of nodes.

The sandbox hands its simulated nodes through these formats and back through npa's real
parsers (status/sinfo_summary.py, status/scontrol.py, status/sinfo_json.py), so that what a
sandbox shows is what npa would read from a real login node. It follows Slurm 25.11.3
(SchedMD/slurm tag slurm-25-11-3-1), the Slurm that Soperator 4.1.6 and 4.1.7 build, as
checked against a real 26.05.5 (the same formats):
- partitions as the recipe makes them (soperator/ at 9a187732): `main` (Default=YES, every
  worker) and `hidden` (Hidden=YES, for active checks); `sinfo -a` lists both, `%P` marks
  the default as `main*`;
- `sinfo -o '%E'` is the reason text alone (no `[user@time]`; src/sinfo/print.c);
- `scontrol show node NAME -o`: keys in `slurm_sprint_node_table`'s order
  (src/api/node_info.c), the reason followed by ` [user@time]`, then `Extra=` and
  `InstanceId=`, which Soperator's slurmd entrypoint always sets (`--instance-id`,
  `--extra`);
- `sinfo --json=v0.0.44`: `meta.plugin.data_parser`, `meta.slurm`, one `sinfo[]` entry per
  group of alike nodes in a partition (sinfo's grouping), `node.state` a list, `reason` an
  object, and sinfo's other keys (port, sockets, cores, threads, disk, weight, cluster,
  comment, extra, reservation, resource_spec).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.slurm_versions import PREFERRED_DATA_PARSER, SOPERATOR_4_1

PARTITIONS = (("main", True), ("hidden", False))  # (name, default), as the recipe makes them
SLURM_RELEASE = SOPERATOR_4_1
# sinfo's compact state names (%t) for its long ones (%T)
_COMPACT = {
    "allocated": "alloc",
    "mixed": "mix",
    "unknown": "unk",
    "drained": "drain",
    "draining": "drng",
    "completing": "comp",
}
_BUSY = ("allocated", "mixed", "completing")


def with_partitions(node: SlurmNode) -> list[str]:
    """The partitions a worker is in on a real cluster: `main` and `hidden`."""
    return [*node.partitions, *(p for p, _ in PARTITIONS if p not in node.partitions)]


def summary_text(nodes: Iterable[SlurmNode]) -> str:
    """`sinfo -h -N -a -o '%N|%P|%a|%l|%t|%T|%C|%m|%G|%f|%E'` (status/sinfo_summary.py)."""
    default = {name for name, is_default in PARTITIONS if is_default}
    lines = []
    for node in nodes:
        suffix = node.display[len(node.state) :]
        compact = _COMPACT.get(node.state, node.state) + suffix
        total = node.cpus or 0
        alloc = node.cpus_allocated or 0
        unusable = node.state in ("down", "drained", "draining", "fail", "inval")
        idle, other = (0, total - alloc) if unusable else (total - alloc, 0)
        for part in with_partitions(node):
            lines.append(
                "|".join(
                    [
                        node.name,
                        part + ("*" if part in default else ""),
                        "up",
                        "infinite",
                        compact,
                        node.display,
                        f"{alloc}/{idle}/{other}/{total}",
                        str(node.memory_mb or 1),
                        node.gres or "(null)",
                        ",".join(node.features) or "(null)",
                        node.reason or "none",
                    ]
                )
            )
    return "".join(f"{line}\n" for line in lines)


def show_node_line(
    node: SlurmNode, *, reason_by: str | None, reason_time: str | None, nodeset: str
) -> str:
    """`scontrol show node NAME -o` for one node, as Slurm 25.11 prints it."""
    base = {"drained": "idle", "draining": "mixed"}.get(node.state, node.state).upper()
    state = base + "".join(f"+{flag}" for flag in node.flags)
    cpus, alloc = node.cpus or 1, node.cpus_allocated or 0
    parts = ",".join(with_partitions(node))
    features = ",".join(node.features) or "(null)"
    line = (
        f"NodeName={node.name} Arch=x86_64 CoresPerSocket=1 CPUAlloc={alloc} CPUEfctv={cpus} "
        f"CPUTot={cpus} CPULoad=0.00 AvailableFeatures={features} ActiveFeatures={features} "
        f"Gres={node.gres or '(null)'} NodeAddr={node.name} NodeHostName={node.name} "
        f"Version={SLURM_RELEASE} OS=Linux 5.15.0-1-nebius #1 SMP "
        f"RealMemory={node.memory_mb or 1} AllocMem=0 FreeMem=N/A Sockets={cpus} Boards=1 "
        f"State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
        f"Partitions={parts} BootTime=None SlurmdStartTime=None LastBusyTime=Unknown "
        f"ResumeAfterTime=None CfgTRES=cpu={cpus} AllocTRES= CurrentWatts=0 AveWatts=0"
    )
    if node.reason:
        line += f" Reason={node.reason}"
        if reason_by and reason_time:
            line += f" [{reason_by}@{reason_time}]"
    extra = json.dumps({"nodeset": nodeset}, separators=(", ", ": "))
    return f"{line} Extra={extra} InstanceId=computeinstance-{node.name}\n"


def _summary_key(node: SlurmNode, part: str) -> tuple[object, ...]:
    """What sinfo groups nodes by (its default summary's fields): a partition, one state
    with its flags, CPUs, memory, GRES, features and reason."""
    return (part, node.state, tuple(node.flags), node.cpus, node.cpus_allocated,
            node.memory_mb, node.gres, tuple(node.features), node.reason)  # fmt: skip


def sinfo_json(nodes: Iterable[SlurmNode]) -> str:
    """`sinfo -a --json=v0.0.44`: one `sinfo[]` entry per group of alike nodes in a
    partition (as real sinfo groups them), with its keys (the live-lab sample in the tests
    holds the real ones)."""
    major, minor, micro = SLURM_RELEASE.split(".")
    grouped: dict[tuple[object, ...], list[SlurmNode]] = {}
    for node in nodes:
        for part in with_partitions(node):
            grouped.setdefault(_summary_key(node, part), []).append(node)
    groups = [_entry(str(key[0]), members) for key, members in grouped.items()]
    meta = {
        "plugin": {"type": "", "name": "", "data_parser": f"data_parser/{PREFERRED_DATA_PARSER}"},
        "slurm": {
            "version": {"major": major, "minor": minor, "micro": micro},
            "release": SLURM_RELEASE,
            "cluster": "soperator",
        },
    }
    return json.dumps({"sinfo": groups, "meta": meta, "errors": [], "warnings": []})


def _minmax(value: int) -> dict[str, int]:
    return {"minimum": value, "maximum": value}


def _entry(part: str, members: list[SlurmNode]) -> dict[str, object]:
    node = members[0]
    names = [m.name for m in members]
    base = {"drained": "idle", "draining": "mixed"}.get(node.state, node.state).upper()
    cpus, allocated = node.cpus or 0, node.cpus_allocated or 0
    idle = base == "IDLE" and not node.flags
    return {
        "port": 6818,
        "node": {"state": [base, *node.flags]},
        "nodes": {
            "allocated": 0,
            "idle": len(names) if idle else 0,
            "other": 0 if idle else len(names),
            "total": len(names),
            "hostnames": [],
            "addresses": [],
            "nodes": names,
        },
        "cpus": {
            "allocated": allocated * len(names),
            "idle": 0,
            "other": 0,
            "total": cpus * len(names),
            **_minmax(cpus),
        },
        "sockets": _minmax(1),
        "cores": _minmax(cpus),
        "threads": _minmax(1),
        "disk": _minmax(0),
        "memory": {**_minmax(node.memory_mb or 0), "allocated": 0},
        "weight": _minmax(1),
        "features": {"total": ",".join(node.features), "active": ",".join(node.features)},
        "gres": {"total": node.gres or "", "used": ""},
        "cluster": "",
        "comment": "",
        "extra": "",
        "reason": {"description": node.reason or "", "time": 0, "user": ""},
        "reservation": "",
        "resource_spec": {"cpus": "", "memory": 0},
        "partition": {"name": part},
    }
