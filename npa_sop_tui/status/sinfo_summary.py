"""One `sinfo` per status refresh: nodes, partitions and the plain summary from one call.

A refresh used to run three commands (the node list, the partition list, plain `sinfo`), so
each cost three sinfo round trips to slurmctld. The node-oriented table with the partition's
availability and time limit, and the compact state `sinfo` prints in its summary, carries
everything the three did:

    sinfo -h -N -a -o '%N|%P|%a|%l|%t|%T|%C|%m|%G|%f|%E'

Partitions are the distinct `%P` values (a trailing `*` marks the default) with their
`%a`/`%l`, and their allocated/idle/other counts are sinfo's own `%F` rule applied to the
nodes. The plain text is sinfo's default summary layout (`%9P %.5a %.10l %.6D %.6t %N`, one
line per partition and compact state, host lists compressed) built from the same rows: the
same lines `sinfo` prints, grouped by partition (sinfo also orders the states within one by
Slurm's internal state codes; here they keep the order they first appear in).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from collections.abc import Iterable
from typing import Any

from npa_sop_tui.status.model import SlurmNode, SlurmPartition, SlurmState
from npa_sop_tui.status.slurm import SinfoParseError, parse_nodes_delimited

SUMMARY_FIELDS = "%N|%P|%a|%l|%t|%T|%C|%m|%G|%f|%E"
SUMMARY_CMD = f"sinfo -h -N -a -o '{SUMMARY_FIELDS}'"
VERSION_CMD = "sinfo -V"
INLINE_PARSE_BYTES = 4096  # ~60 node lines: about a millisecond to parse
_FIELDS = SUMMARY_FIELDS.count("|") + 1
# How sinfo's %F (allocated/idle/other/total) counts a node by its compact state: down,
# drained/draining, failed and invalid nodes are "other", allocated/mixed/completing ones
# "allocated", the rest (idle, unknown, reserved, …) "idle".
_ALLOCATED = ("alloc", "mix", "comp")
_OTHER = ("down", "drain", "drng", "fail", "inval")
_SUFFIXES = "*~#!%$@^-+"
HEADER = ("PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST")


def parse_summary(text: str, memo: Any = None) -> tuple[list[SlurmNode], list[SlurmPartition], str]:
    """Nodes, partitions (with node names and state counts) and the plain sinfo text.

    With a `memo` (status/sinfo_memo.py), nodes whose lines did not change since the last
    poll are not parsed again: they are the same objects as then."""
    rows: list[list[str]] = []
    node_lines: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("|", _FIELDS - 1)  # the reason comes last and may hold a "|"
        if len(fields) != _FIELDS:
            raise SinfoParseError(f"sinfo line {lineno}: expected {_FIELDS} fields")
        rows.append(fields)
        name, part, _avail, _limit, _compact, *rest = fields
        node_lines.append("|".join([name, part, *rest]))
    joined = "\n".join(node_lines)
    nodes = memo.parse_nodes(joined) if memo is not None else parse_nodes_delimited(joined)
    partitions = _partitions(rows, nodes)
    return nodes, partitions, render_summary(rows)


def _partitions(rows: list[list[str]], nodes: list[SlurmNode]) -> list[SlurmPartition]:
    display = {n.name: n.display for n in nodes}
    out: dict[str, SlurmPartition] = {}
    for name, part_raw, avail, limit, compact, *_ in rows:
        part_name = part_raw.rstrip("*")
        part = out.get(part_name)
        if part is None:
            part = out[part_name] = SlurmPartition(
                name=part_name, default=part_raw.endswith("*"), available=avail, timelimit=limit
            )
        if name in part.nodes:
            continue
        part.nodes.append(name)
        part.state_counts[display[name]] = part.state_counts.get(display[name], 0) + 1
        base = compact.rstrip(_SUFFIXES)
        part.nodes_total += 1
        if base.startswith(_OTHER):
            part.nodes_other += 1
        elif base in _ALLOCATED:
            part.nodes_allocated += 1
        else:
            part.nodes_idle += 1
    # The default partition first: `sinfo -N` lists a node's partitions in no fixed order
    # (26.05 printed `hidden` before `main` on some calls), the rest as first listed.
    return sorted(out.values(), key=lambda p: not p.default)


def render_summary(rows: list[list[str]]) -> str:
    """Plain `sinfo` (its default format) from summary rows."""
    groups: dict[tuple[str, str], list[str]] = {}
    meta: dict[str, tuple[str, str]] = {}
    for name, part, avail, limit, compact, *_ in rows:
        meta.setdefault(part, (avail, limit))
        names = groups.setdefault((part, compact), [])
        if name not in names:
            names.append(name)
    width = max([len(HEADER[0]), *(len(p) for p, _ in groups)])
    lines = [_line(width, *HEADER)]
    for part in meta:  # partitions in the order sinfo listed them
        for (group_part, compact), names in groups.items():
            if group_part == part:
                avail, limit = meta[part]
                lines.append(
                    _line(width, part, avail, limit, str(len(names)), compact, hostlist(names))
                )
    return "\n".join(lines) + "\n"


def _line(width: int, part: str, avail: str, limit: str, count: str, state: str, nl: str) -> str:
    return f"{part:<{width}} {avail:>5} {limit:>10} {count:>6} {state:>6} {nl}"


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: Iterable[str]) -> str:
    """Slurm's compressed host list: `gpu-[001-003,007],login-0`."""
    by_prefix: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for name in names:
        match = _NUMBERED.match(name)
        if not match:
            order.append(name)
            continue
        key = (match.group(1), len(match.group(2)))
        if key not in by_prefix:
            by_prefix[key] = []
            order.append(key)
        by_prefix[key].append(int(match.group(2)))
    out: list[str] = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        prefix, digits = item
        numbers = sorted(set(by_prefix[item]))
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{digits}d}")
            continue
        ranges: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(
                f"{start:0{digits}d}" if start == prev else f"{start:0{digits}d}-{prev:0{digits}d}"
            )
            if n is not None:
                start = prev = n
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


def parse_version(text: str) -> str | None:
    """`slurm 22.05.8` (Debian: `slurm-wlm 22.05.8`) → `22.05.8`."""
    parts = text.split()
    ok = len(parts) == 2 and parts[0].startswith("slurm") and parts[1][:1].isdigit()
    return parts[1] if ok else None


# `sinfo -V` once per connection, not per refresh (the version does not change under it).
_versions: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()


def _known_release(runner: Any) -> bool:
    try:
        return runner in _versions
    except TypeError:  # not weak-referenceable: ask every time
        return False


async def slurm_release(runner: Any, *, timeout: float) -> str | None:
    """The login node's Slurm release (`sinfo -V`), asked once per connection."""
    if _known_release(runner):
        return _versions[runner]
    probe = await runner.run(VERSION_CMD, timeout=timeout)
    version = parse_version(probe.stdout) if probe.exit_status == 0 else None
    with contextlib.suppress(TypeError):
        _versions[runner] = version
    return version


async def collect_summary(
    runner: Any, *, host: str, timeout: float, memo: Any = None
) -> SlurmState:
    """One status refresh: one sinfo call (plus `sinfo -V` on a connection's first)."""
    from npa_sop_tui.status.slurm import _check

    if _known_release(runner):
        result = await runner.run(SUMMARY_CMD, timeout=timeout)
        version = _versions[runner]
    else:
        result, version = await asyncio.gather(
            runner.run(SUMMARY_CMD, timeout=timeout), slurm_release(runner, timeout=timeout)
        )
    _check(result, SUMMARY_CMD)
    # Parsing 10,000 nodes takes a noticeable fraction of a second: keep it off the loop. A
    # small cluster's table parses faster than a hand-off to a worker thread.
    if len(result.stdout) > INLINE_PARSE_BYTES:
        nodes, partitions, text = await asyncio.to_thread(parse_summary, result.stdout, memo)
    else:
        nodes, partitions, text = parse_summary(result.stdout, memo)
    return SlurmState(
        host=host,
        version=version,
        source_format="delimited",
        partitions=partitions,
        nodes=sorted(nodes, key=lambda n: n.name),
        sinfo_text=text,
    )
