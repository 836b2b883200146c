"""Parse `sinfo --json` into `SlurmNode`s, fast enough for 10,000 nodes on a first poll.

Two shapes (status/slurm_versions.py says which Slurm prints which):
- v0.0.38 (Slurm 22.05): top-level `nodes[]`, one entry per node, a base `state` string
  plus `state_flags[]`, `reason` a string;
- data_parser v0.0.41–v0.0.45 (Slurm 24.x–26.x): top-level `sinfo[]`, one entry per group
  of nodes that look alike in one partition: `node.state[]` (base state and flags in one
  list), `nodes.nodes[]` the names, `reason` an object `{description, time, user}`,
  `cpus`/`memory` group totals and per-node `minimum`/`maximum`. `meta.plugin.type` is
  empty there; `meta.plugin.data_parser` names the format, `meta.slurm` the release.

Speed: a 10,000-node cluster is a handful of groups with long name lists. The groups are
decoded for only the fields status reads (status/sinfo_groups.py: the rest of the document
is skipped while scanning), and each node is a copy of its group's prototype with its own
name and lists (no per-node validation: every value is already typed here).
bench/bench_sinfo_json.py holds the target (`python -m bench sinfo_json`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from npa_sop_tui.status.model import SlurmNode, SlurmPartition, SlurmState
from npa_sop_tui.status.sinfo_groups import DECODER, nodes_of_groups
from npa_sop_tui.status.slurm import (
    PARTITIONS_CMD,
    PLAIN_CMD,
    SinfoParseError,
    _check,
    _features,
    _none_if,
    _num,
    enrich_partitions,
    node_from,
    parse_partitions_delimited,
)
from npa_sop_tui.status.slurm_versions import json_option

# what Slurm says when it has no such data_parser: 22.05 ("option '--json' doesn't allow an
# argument"), and a release that ships other versions ("unable to find plugin:
# data_parser/v0.0.40", Slurm 26.05)
_NO_ARGUMENT = ("doesn't allow an argument", "unrecognized option", "unable to find plugin")


def nodes_json_command(release: str | None) -> str:
    """`sinfo -a --json=v0.0.44` where the release ships that format, else `--json`."""
    return f"sinfo -a {json_option(release)}"


@dataclass
class JsonSinfo:
    nodes: list[SlurmNode]
    version: str | None
    source_format: str
    partitions: list[SlurmPartition] = field(default_factory=list)
    data_parser: str | None = None  # `v0.0.44`; None for v0.0.38's openapi plugin


def parse_sinfo_json(text: str) -> JsonSinfo:
    """Parse `sinfo --json` of either the v0.0.38 (`nodes[]`) or v0.0.41+ (`sinfo[]`) shape."""
    # 10,000 new nodes set off dozens of garbage collections, each walking every object of
    # the process (the parsed document included): most of a first poll's time. Nothing
    # built here forms a cycle, so collection waits until the parse is done.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse(text)
    finally:
        if collecting:
            gc.enable()


def _parse(text: str) -> JsonSinfo:
    try:
        doc = DECODER.decode(text)
    except msgspec.DecodeError as exc:  # not JSON at all (ValidationError is a subclass)
        if not isinstance(exc, msgspec.ValidationError):
            raise SinfoParseError(f"sinfo --json printed invalid JSON: {exc}") from exc
        raise _unexpected_layout(text, exc) from exc
    version, parser = _meta(doc.meta)
    errors = [e for e in doc.errors or [] if e] if isinstance(doc.errors, list) else []
    if errors and not doc.nodes and not doc.sinfo:
        first = errors[0]
        message = (
            first.get("error") or first.get("description") if isinstance(first, dict) else first
        )
        raise SinfoParseError(f"sinfo --json reported an error: {message}")
    if doc.sinfo is not None:
        nodes, parts = nodes_of_groups(doc.sinfo)
        fmt = f"json-{parser}" if parser else "json-v0.0.41+"
        return JsonSinfo(nodes, version, fmt, parts, parser if parser != "v0.0.38" else None)
    if isinstance(doc.nodes, list):
        fmt = f"json-{parser}" if parser else "json-v0.0.38"
        return JsonSinfo([_parse_flat_node(n) for n in doc.nodes], version, fmt)
    raise SinfoParseError("sinfo --json has neither `sinfo` nor `nodes`")


def _unexpected_layout(text: str, exc: msgspec.ValidationError) -> SinfoParseError:
    """JSON that is not laid out as sinfo prints it, worded by what is wrong (the typed
    decoder may stop at a wrong type before it reaches a syntax error further on)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as bad:
        return SinfoParseError(f"sinfo --json printed invalid JSON: {bad}")
    if not isinstance(doc, dict):
        return SinfoParseError("sinfo --json did not print an object")
    if not isinstance(doc.get("sinfo"), list) and not isinstance(doc.get("nodes"), list):
        return SinfoParseError("sinfo --json has neither `sinfo` nor `nodes`")
    return SinfoParseError(f"sinfo --json is not laid out as Slurm prints it: {exc}")


def _meta(meta: Any) -> tuple[str | None, str | None]:
    """(Slurm release, format version) from `meta` of any version."""
    if not isinstance(meta, Mapping):
        return None, None
    slurm = meta.get("slurm") or meta.get("Slurm") or {}
    release = slurm.get("release") if isinstance(slurm, Mapping) else None
    if not release and isinstance(slurm, Mapping) and isinstance(slurm.get("version"), Mapping):
        v = slurm["version"]
        if all(v.get(k) not in (None, "") for k in ("major", "minor", "micro")):
            release = f"{int(v['major']):02d}.{int(v['minor']):02d}.{v['micro']}"
    plugin = meta.get("plugin") or {}
    # `data_parser/v0.0.44` (24.x+), or `openapi/v0.0.38` in `type` (22.05)
    named = plugin.get("data_parser") or plugin.get("type") or ""
    parser = str(named).split("/")[-1] or None
    return (str(release) if release else None), parser


def _parse_flat_node(n: Mapping[str, Any]) -> SlurmNode:
    state = n.get("state")
    flags = list(n.get("state_flags") or [])
    if isinstance(state, list):  # v0.0.39/40 already use a list here
        base, flags = (state[0] if state else "unknown"), [*state[1:], *flags]
    else:
        base = str(state or "unknown")
    reason = n.get("reason")
    if isinstance(reason, Mapping):
        reason = reason.get("description")
    return node_from(
        str(n["name"]),
        base,
        flags,
        partitions=[str(p) for p in n.get("partitions") or []],
        cpus=_num(n.get("cpus")),
        cpus_allocated=_num(n.get("alloc_cpus")),
        memory_mb=_num(n.get("real_memory")),
        gres=_none_if(n.get("gres"), "(null)"),
        features=_features(n.get("active_features") or n.get("features")),
        reason=_none_if(reason, "none"),
    )


# --- collecting over SSH ------------------------------------------------------------------


async def collect_json(runner: Any, *, host: str, timeout: float = 30.0) -> SlurmState:
    """Nodes from `sinfo --json` (as v0.0.44 where the Slurm ships it), plus the partition
    table and plain sinfo (JSON carries no partition availability or time limit). A Slurm
    without a usable `--json` is an error here; the default format (status/sinfo_summary.py)
    needs none."""
    import asyncio

    from npa_sop_tui.status.sinfo_summary import slurm_release

    release = await slurm_release(runner, timeout=timeout)
    command = nodes_json_command(release)
    nodes_res, parts_res, plain_res = await asyncio.gather(
        runner.run(command, timeout=timeout),
        runner.run(PARTITIONS_CMD, timeout=timeout),
        runner.run(PLAIN_CMD, timeout=timeout),
    )
    said = f"{nodes_res.stderr}{nodes_res.stdout[:200]}".lower()
    if nodes_res.exit_status != 0 and "=" in command and any(m in said for m in _NO_ARGUMENT):
        command = nodes_json_command(None)  # a Slurm that knows no data_parser versions
        nodes_res = await runner.run(command, timeout=timeout)
    _check(parts_res, PARTITIONS_CMD)
    _check(nodes_res, command)
    plain = plain_res.stdout if plain_res.exit_status == 0 else ""  # shown only, never parsed
    # Parsing 10,000 nodes takes a noticeable fraction of a second: keep it off the loop.
    return await asyncio.to_thread(_assemble, nodes_res.stdout, parts_res.stdout, plain, host)


def _assemble(nodes_json: str, parts_text: str, plain_text: str, host: str) -> SlurmState:
    parsed = parse_sinfo_json(nodes_json)
    return SlurmState(
        host=host,
        version=parsed.version,
        source_format=parsed.source_format,
        partitions=enrich_partitions(parse_partitions_delimited(parts_text), parsed.nodes),
        nodes=sorted(parsed.nodes, key=lambda n: n.name),
        sinfo_text=plain_text,
    )
