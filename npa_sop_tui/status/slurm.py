"""Parse `sinfo` output into `SlurmNode`/`SlurmPartition`, and diff two node lists.

Three input shapes, normalised to one model so they can be compared: `sinfo --json` of
every version (parsed in status/sinfo_json.py, with these state rules), and the delimited
node table `sinfo -h -N -a -o '%N|%P|%T|%C|%m|%G|%f|%E'`, where `%T` carries flags as a long
state name (drained, inval, maint) and a one-char suffix, and `%E` is the reason text alone
(sinfo prints no `[user@time]` there; `scontrol show node` does).

A node's `state` is sinfo's long state name (what `%T` prints without the suffix) and
`flags` is the set of Slurm flag names we know how to see in every shape; `display` is the
compact text a person expects (`drained*`, `idle~`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from npa_sop_tui.status.model import SlurmNode, SlurmPartition

DELIM_FIELDS = "%N|%P|%T|%C|%m|%G|%f|%E"
NODES_DELIMITED_CMD = f"sinfo -h -N -a -o '{DELIM_FIELDS}'"
PARTITIONS_CMD = "sinfo -h -a -o '%P|%a|%l|%D|%F'"
PLAIN_CMD = "sinfo"

# Flags visible in both JSON and text output; others (CLOUD, DYNAMIC_*) are dropped so that
# the two parsers agree.
KNOWN_FLAGS = (
    "DRAIN",
    "NOT_RESPONDING",
    "INVALID_REG",
    "FAIL",
    "MAINTENANCE",
    "REBOOT_REQUESTED",
    "REBOOT_ISSUED",
    "POWERED_DOWN",
    "POWERING_UP",
    "POWER_DOWN",
    "POWERING_DOWN",
    "PLANNED",
    "RESERVED",
)

# sinfo's one-char suffixes, in the precedence Slurm prints them (only one is shown).
SUFFIX_FLAGS: tuple[tuple[str, str], ...] = (
    ("*", "NOT_RESPONDING"),
    ("~", "POWERED_DOWN"),
    ("#", "POWERING_UP"),
    ("!", "POWER_DOWN"),
    ("%", "POWERING_DOWN"),
    ("$", "MAINTENANCE"),
    ("@", "REBOOT_REQUESTED"),
    ("^", "REBOOT_ISSUED"),
    ("-", "PLANNED"),
)
_SUFFIX_TO_FLAG = dict(SUFFIX_FLAGS)
_SUFFIX_RE = re.compile(r"[*~#!%$@^-]+$")

# Long state names that are really flags on top of a base state.
_LONG_NAME_FLAGS: dict[str, tuple[str, ...]] = {
    "drained": ("DRAIN",),
    "draining": ("DRAIN",),
    "drain": ("DRAIN",),
    "drng": ("DRAIN",),
    "inval": ("INVALID_REG",),
    "maint": ("MAINTENANCE",),
    "fail": ("FAIL",),
    "failing": ("FAIL",),
    "reboot": ("REBOOT_REQUESTED",),
    "powered_down": ("POWERED_DOWN",),
    "powering_up": ("POWERING_UP",),
    "power_down": ("POWER_DOWN",),
    "powering_down": ("POWERING_DOWN",),
    "planned": ("PLANNED",),
    "reserved": ("RESERVED",),
}
_COMPACT_TO_LONG = {
    "alloc": "allocated",
    "mix": "mixed",
    "unk": "unknown",
    "drain": "drained",
    "drng": "draining",
    "comp": "completing",
    "pow_up": "powering_up",
    "npc": "perfctrs",
}


class SinfoParseError(ValueError):
    """The output is not in the shape we asked for."""


# --- state normalisation ----------------------------------------------------------------


def long_state(base: str, flags: Iterable[str]) -> str:
    """sinfo's `%T` long name for a base state plus flags (mirrors node_state_string)."""
    base = base.lower()
    fl = set(flags)
    busy = base in ("allocated", "mixed", "completing")
    if "MAINTENANCE" in fl and not busy and "DRAIN" not in fl:
        return "maint"
    if fl & {"REBOOT_ISSUED", "REBOOT_REQUESTED"} and not busy:
        return "reboot"  # the `^` suffix tells "issued" apart
    if "DRAIN" in fl:
        return "draining" if busy else "drained"
    if "FAIL" in fl:
        return "failing" if busy else "fail"
    if "INVALID_REG" in fl:
        return "inval"
    return base


def display_state(state: str, flags: Iterable[str]) -> str:
    fl = set(flags)
    for suffix, flag in SUFFIX_FLAGS:
        if flag in fl and _LONG_NAME_FLAGS.get(state) != (flag,):
            return state + suffix
    return state


def _known(flags: Iterable[str]) -> list[str]:
    fl = {f.upper() for f in flags}
    return [f for f in KNOWN_FLAGS if f in fl]


def state_from_text(text: str) -> tuple[str, list[str]]:
    """`drained*` → ("drained", ["DRAIN", "NOT_RESPONDING"])."""
    raw = text.strip().lower()
    match = _SUFFIX_RE.search(raw)
    suffix = match.group(0) if match else ""
    name = raw[: len(raw) - len(suffix)]
    name = _COMPACT_TO_LONG.get(name, name)
    flags = set(_LONG_NAME_FLAGS.get(name, ()))
    for ch in suffix:
        if ch in _SUFFIX_TO_FLAG:
            flags.add(_SUFFIX_TO_FLAG[ch])
    return name, _known(flags)


def node_from(name: str, base: str, flags: Iterable[str], **fields: Any) -> SlurmNode:
    """A `SlurmNode` of `node_values(...)`' fields (the same keyword arguments)."""
    # model_construct: every value is already typed by this parser, and validating 10,000
    # nodes per poll costs more than the parse itself (bench/bench_status.py).
    return SlurmNode.model_construct(**node_values(name, base, flags, **fields))


def node_values(
    name: str,
    base: str,
    flags: Iterable[str],
    *,
    partitions: list[str],
    cpus: int | None,
    cpus_allocated: int | None,
    memory_mb: int | None,
    gres: str | None,
    features: list[str],
    reason: str | None,
) -> dict[str, Any]:
    """A `SlurmNode`'s fields, every one set, its state and display worked out from Slurm's
    base state and flags."""
    known = _known(flags)
    state = long_state(base, known)
    return {
        "name": name,
        "state": state,
        "flags": known,
        "display": display_state(state, known),
        "partitions": partitions,
        "cpus": cpus,
        "cpus_allocated": cpus_allocated,
        "memory_mb": memory_mb,
        "gres": gres,
        "features": features,
        "reason": reason,
    }


def _none_if(value: Any, *nulls: str) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return None if text == "" or text in nulls else text


def _features(value: Any) -> list[str]:
    text = _none_if(value, "(null)")
    return [f for f in text.split(",") if f] if text else []


def _num(value: Any) -> int | None:
    """Slurm JSON numbers are plain ints or `{set, infinite, number}` objects (v0.0.40+)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping):
        if value.get("set") is False or value.get("infinite"):
            return None
        return _num(value.get("number"))
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


# --- delimited --------------------------------------------------------------------------


def parse_nodes_delimited(text: str) -> list[SlurmNode]:
    """Parse `sinfo -h -N -a -o '%N|%P|%T|%C|%m|%G|%f|%E'` (one line per node × partition)."""
    by_name: dict[str, SlurmNode] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        # The reason is free text and comes last, so it may contain the separator.
        parts = line.split("|", 7)
        if len(parts) != 8:
            raise SinfoParseError(f"sinfo line {lineno}: expected 8 fields, got {len(parts)}")
        name, part, state_text, cpus_aiot, mem, gres, feats, reason = parts
        partition = part.rstrip("*")
        known = by_name.get(name)
        if known is not None:
            if partition not in known.partitions:
                known.partitions.append(partition)
            continue
        state, flags = state_from_text(state_text)
        alloc, total = _cpus_aiot(cpus_aiot)
        by_name[name] = SlurmNode.model_construct(
            name=name,
            state=state,
            flags=flags,
            display=display_state(state, flags),
            partitions=[partition],
            cpus=total,
            cpus_allocated=alloc,
            memory_mb=_num(mem.strip()),
            gres=_none_if(gres, "(null)"),
            features=_features(feats),
            reason=_none_if(reason, "none", "(null)"),
        )
    return list(by_name.values())


def _cpus_aiot(text: str) -> tuple[int | None, int | None]:
    parts = text.strip().split("/")
    if len(parts) != 4:
        return None, _num(text.strip())
    return _num(parts[0]), _num(parts[3])


def parse_partitions_delimited(text: str) -> list[SlurmPartition]:
    """Parse `sinfo -h -a -o '%P|%a|%l|%D|%F'` (one line per partition)."""
    out: dict[str, SlurmPartition] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != 5:
            raise SinfoParseError(f"partition line {lineno}: expected 5 fields, got {len(parts)}")
        name_raw, avail, limit, count, aiot = parts
        name = name_raw.rstrip("*")
        counts = [_num(x) or 0 for x in aiot.split("/")] if aiot.count("/") == 3 else [0, 0, 0, 0]
        part = out.get(name)
        if part is None:
            part = out[name] = SlurmPartition(
                name=name, default=name_raw.endswith("*"), available=avail, timelimit=limit
            )
        # sinfo may split a partition over several lines; the counts add up.
        part.nodes_allocated += counts[0]
        part.nodes_idle += counts[1]
        part.nodes_other += counts[2]
        part.nodes_total += counts[3] or (_num(count) or 0)
    return list(out.values())


# --- assembling ------------------------------------------------------------------------


def enrich_partitions(
    partitions: list[SlurmPartition], nodes: list[SlurmNode]
) -> list[SlurmPartition]:
    """Fill node names and per-state counts from the node list; add missing partitions."""
    by_name = {p.name: p for p in partitions}
    for p in by_name.values():
        p.nodes = []
        p.state_counts = {}
    for node in nodes:
        for pname in node.partitions:
            part = by_name.get(pname)
            if part is None:
                part = by_name[pname] = SlurmPartition(name=pname)
            part.nodes.append(node.name)
            part.state_counts[node.display] = part.state_counts.get(node.display, 0) + 1
    for part in by_name.values():
        part.nodes_total = max(part.nodes_total, len(part.nodes))
    return list(by_name.values())


# --- diff ------------------------------------------------------------------------------


@dataclass
class NodeDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff_nodes(old: Iterable[SlurmNode], new: Iterable[SlurmNode]) -> NodeDiff:
    """Which nodes appeared, went away or changed anything (state, reason, resources)."""
    before = {n.name: n for n in old}
    after = {n.name: n for n in new}
    out = NodeDiff()
    for name, node in after.items():
        prev = before.get(name)
        if prev is None:
            out.added.append(name)
        elif prev is not node and prev != node:  # memoised parses reuse unchanged nodes
            out.changed.append(name)
    out.removed = [name for name in before if name not in after]
    return out


# --- collecting over SSH ------------------------------------------------------------------


class SlurmCommandFailed(RuntimeError):
    """sinfo ran but failed (controller down, munge broken, …)."""


def _check(result: Any, command: str) -> None:
    if result.exit_status != 0:
        err = (result.stderr or result.stdout or "").strip().splitlines()
        raise SlurmCommandFailed(
            f"`{command}` exited {result.exit_status}: {err[0] if err else 'no output'}"
        )
