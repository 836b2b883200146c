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
    nodes: list[str] | None = None
    hostnames: list[str] | None = None


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
    parts: dict[str, SlurmPartition] = {}
    # A node set is listed once per partition it is in (`main`, `hidden`): groups with the
    # same names and the same values are built once, with all their partitions.
    sets: dict[Any, _NodeSet] = {}
    for g in groups:
        pname = str(g.partition.name or "") if g.partition is not None else ""
        if pname and pname not in parts:
            parts[pname] = SlurmPartition(name=pname)
        listed = g.nodes
        names = (listed.nodes or listed.hostnames or []) if listed is not None else []
        if not names:
            continue
        key: Any = tuple(names)
        same = sets.get(key)
        if same is not None and _alike(same.group, g):
            if pname and pname not in same.partitions:
                same.partitions.append(pname)
            continue
        if same is not None:  # the same names with other values: a node set of its own
            key = (key, len(sets))
        sets[key] = _NodeSet(names, g, [pname] if pname else [])
    by_name: dict[str, SlurmNode] = {}
    for node_set in sets.values():
        _build(node_set, by_name)
    return list(by_name.values()), list(parts.values())


class _NodeSet:
    __slots__ = ("group", "names", "partitions")

    def __init__(self, names: list[str], group: Group, partitions: list[str]) -> None:
        self.names, self.group, self.partitions = names, group, partitions


def _alike(a: Group, b: Group) -> bool:
    """Two groups that say the same of their nodes (their partitions aside)."""
    return (
        a.node == b.node
        and a.cpus == b.cpus
        and a.memory == b.memory
        and a.features == b.features
        and a.gres == b.gres
        and a.reason == b.reason
    )


def _build(node_set: _NodeSet, by_name: dict[str, SlurmNode]) -> None:
    """One node per name not built yet; a name built from an earlier set gains this set's
    partitions (the first set a node is listed in gives its values)."""
    names, partitions = node_set.names, node_set.partitions
    fresh = [name for name in names if name not in by_name] if by_name else names
    if len(fresh) < len(names):
        for name in names:
            node = by_name.get(name)
            if node is not None:
                node.partitions.extend(p for p in partitions if p not in node.partitions)
    values = _group_values(node_set.group, single=len(names) == 1)
    copy, flags, features = values.copy, values["flags"], values["features"]
    for name in fresh:
        node = _new(SlurmNode)
        d = copy()
        d["name"] = name
        d["partitions"] = [*partitions]  # each node owns its lists
        d["flags"] = [*flags]
        d["features"] = [*features]
        _set_dict(node, d)
        _set_fields(node, _ALL_FIELDS)
        _set_extra(node, None)
        _set_private(node, None)
        by_name[name] = node


def _group_values(g: Group, *, single: bool) -> dict[str, Any]:
    """The fields of every node of one group (its name and partitions are filled in per
    node)."""
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
        partitions=[],
        cpus=_num(cpus.maximum) or _num(cpus.total),
        # a group's total is per node only for one node, or when nothing is allocated
        cpus_allocated=alloc if single or alloc == 0 else None,
        memory_mb=_num(mem.maximum) or _num(mem.minimum),
        gres=_none_if(g.gres.total if g.gres is not None else None, "(null)"),
        features=_features(feats.active or feats.total),
        reason=_none_if(reason, "none"),
    )
