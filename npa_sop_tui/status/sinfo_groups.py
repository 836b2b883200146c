"""The node groups of `sinfo --json` (data_parser v0.0.41–v0.0.45), read for only the fields
status shows, and turned into one `SlurmNode` per node name.

A v0.0.44 group carries ~20 objects status never reads (the whole partition record, sockets,
cores, threads, load, free memory, …): two thirds of a big cluster's document. The typed
decoder below names only what status reads, so everything else is skipped while scanning,
never built as Python objects; on a 10,000-node document that makes the decode several times
faster than `json.loads` alone (bench/bench_sinfo_json.py). Leaf values stay untyped (`Any`):
Slurm prints some numbers as plain ints and others as `{set, infinite, number}` objects
depending on the release, and `slurm._num` reads both.
"""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import BaseModel

from npa_sop_tui.status.model import SlurmNode, SlurmPartition
from npa_sop_tui.status.slurm import _features, _none_if, _num, node_values

_BASE_STATES = frozenset({"IDLE", "MIXED", "ALLOCATED", "DOWN", "ERROR", "FUTURE", "UNKNOWN"})


# gc=False: these hold no cycles, so the collector never needs to walk them.
class _NodeState(msgspec.Struct, gc=False):
    state: Any = None  # ["IDLE", "DRAIN"]


class _Names(msgspec.Struct, gc=False):
    nodes: Any = None
    hostnames: Any = None


class _Cpus(msgspec.Struct, gc=False):
    allocated: Any = None
    total: Any = None
    maximum: Any = None


class _Memory(msgspec.Struct, gc=False):
    minimum: Any = None
    maximum: Any = None


class _Features(msgspec.Struct, gc=False):
    total: Any = None
    active: Any = None


class _Gres(msgspec.Struct, gc=False):
    total: Any = None


class _Partition(msgspec.Struct, gc=False):
    name: Any = None


class Group(msgspec.Struct, gc=False):
    """One `sinfo[]` entry: nodes that look alike in one partition."""

    node: _NodeState | None = None
    nodes: _Names | None = None
    cpus: _Cpus | None = None
    memory: _Memory | None = None
    features: _Features | None = None
    gres: _Gres | None = None
    reason: Any = None  # {description, time, user} (v0.0.41+) or a string
    partition: _Partition | None = None


class Document(msgspec.Struct, gc=False):
    """The top level of `sinfo --json` of any version; v0.0.38's flat `nodes[]` is read
    untyped (Slurm 22.05 clusters are small)."""

    meta: Any = None
    errors: Any = None
    sinfo: list[Group] | None = None
    nodes: Any = None


DECODER = msgspec.json.Decoder(Document)


# Building a node by hand: a fresh pydantic object, its values filled in directly (what
# `model_construct` does, at a tenth of the cost). Every field is set, so every node can
# share one fields-set: adding a name to it (an attribute assignment) changes nothing.
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_ALL_FIELDS = set(SlurmNode.model_fields)


def nodes_of_groups(groups: list[Group]) -> tuple[list[SlurmNode], list[SlurmPartition]]:
    by_name: dict[str, SlurmNode] = {}
    parts: dict[str, SlurmPartition] = {}
    for g in groups:
        pname = str(g.partition.name or "") if g.partition is not None else ""
        if pname and pname not in parts:
            parts[pname] = SlurmPartition(name=pname)
        listed = g.nodes
        names = (listed.nodes or listed.hostnames or []) if listed is not None else []
        fresh = [name for name in names if name not in by_name] if by_name else names
        if len(fresh) < len(names) and pname:
            for name in names:  # seen in an earlier partition's group
                node = by_name.get(name)
                if node is not None and pname not in node.partitions:
                    node.partitions.append(pname)
        if not fresh:
            continue
        values = _group_values(g, pname, single=len(names) == 1)
        copy, flags, features = values.copy, values["flags"], values["features"]
        for name in fresh:
            node = _new(SlurmNode)
            d = copy()
            d["name"] = name if type(name) is str else str(name)
            d["partitions"] = [pname] if pname else []
            d["flags"], d["features"] = [*flags], [*features]  # each node owns its lists
            _set_dict(node, d)
            _set_fields(node, _ALL_FIELDS)
            _set_extra(node, None)
            _set_private(node, None)
            by_name[d["name"]] = node
    return list(by_name.values()), list(parts.values())


def _group_values(g: Group, pname: str, *, single: bool) -> dict[str, Any]:
    """The fields of every node of one group (its name is filled in per node)."""
    states = [str(s).upper() for s in (g.node.state if g.node is not None else None) or []]
    base = next((s for s in states if s in _BASE_STATES), "UNKNOWN")
    cpus, mem, feats = g.cpus or _Cpus(), g.memory or _Memory(), g.features or _Features()
    reason = g.reason
    if isinstance(reason, dict):
        reason = reason.get("description")
    alloc = _num(cpus.allocated)
    return node_values(
        "",
        base,
        [s for s in states if s != base],
        partitions=[pname] if pname else [],
        cpus=_num(cpus.maximum) or _num(cpus.total),
        # a group's total is per node only for one node, or when nothing is allocated
        cpus_allocated=alloc if single or alloc == 0 else None,
        memory_mb=_num(mem.maximum) or _num(mem.minimum),
        gres=_none_if(g.gres.total if g.gres is not None else None, "(null)"),
        features=_features(feats.active or feats.total),
        reason=_none_if(reason, "none"),
    )
