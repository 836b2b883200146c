"""The typed decode of `sinfo --json` groups (status/sinfo_groups.py): only the fields status
reads are decoded, whatever else a group carries; missing or null objects read as absent;
Slurm's `{set, infinite, number}` numbers and string reasons still parse; a document that
is JSON but not laid out as sinfo prints it is a clear error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from npa_sop_tui.status.sinfo_groups import DECODER, nodes_of_groups
from npa_sop_tui.status.sinfo_json import parse_sinfo_json
from npa_sop_tui.status.slurm import SinfoParseError


def _doc(*groups: dict[str, object]) -> str:
    meta = {"plugin": {"data_parser": "data_parser/v0.0.44"}, "slurm": {"release": "25.11.3"}}
    return json.dumps({"meta": meta, "errors": [], "sinfo": list(groups)})


def test_unread_fields_are_skipped_and_read_ones_kept() -> None:
    group = {
        "node": {"state": ["MIXED", "DRAIN"]},
        "nodes": {"nodes": ["w-0"], "hostnames": ["h-0"], "addresses": ["10.0.0.1"]},
        "cpus": {"allocated": 3, "total": 8, "maximum": 8, "load": {"minimum": 1}},
        "memory": {"minimum": 900, "maximum": {"set": True, "infinite": False, "number": 1000}},
        "features": {"total": "a,b", "active": "a"},
        "gres": {"total": "gpu:h100:8", "used": "gpu:h100:1"},
        "reason": "plain text reason",
        "partition": {"name": "main", "maximums": {"nodes": {"set": False}}, "tres": {}},
        "sockets": {"minimum": 2},
        "something_newer": [1, {"x": None}],
    }
    doc = DECODER.decode(_doc(group))
    assert not hasattr(doc.sinfo[0], "sockets")  # never built
    (node,), (part,) = nodes_of_groups(doc.sinfo)
    assert (node.name, node.state, node.flags, node.display) == (
        "w-0",
        "draining",
        ["DRAIN"],
        "draining",
    )
    assert (node.cpus, node.cpus_allocated, node.memory_mb) == (8, 3, 1000)
    assert (node.gres, node.features, node.reason) == ("gpu:h100:8", ["a"], "plain text reason")
    assert (node.partitions, part.name) == (["main"], "main")


def test_null_and_missing_objects_read_as_absent() -> None:
    bare = {"nodes": {"hostnames": ["h-1"]}, "cpus": None, "memory": None, "partition": None}
    (node,) = parse_sinfo_json(_doc(bare, {"node": None, "nodes": None})).nodes
    assert (node.name, node.state, node.partitions, node.cpus) == ("h-1", "unknown", [], None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"sinfo": [1]}', "not laid out as Slurm prints it"),
        ('{"sinfo": [{"cpus": []}]}', "not laid out as Slurm prints it"),
        ('{"sinfo": "x", "meta": {}}', "has neither `sinfo` nor `nodes`"),
        ('{"sinfo": [{"cpus": 1}], "x": ', "invalid JSON"),
        ("[]", "did not print an object"),
    ],
)
def test_wrong_layouts_are_named(text: str, message: str) -> None:
    with pytest.raises(SinfoParseError, match=message):
        parse_sinfo_json(text)


def _group(names: list[str], part: str, state: list[str], reason: str = "") -> dict[str, object]:
    return {
        "node": {"state": state},
        "nodes": {"nodes": names},
        "cpus": {"allocated": 0, "total": 8 * len(names), "maximum": 8},
        "reason": {"description": reason, "time": 0, "user": ""},
        "partition": {"name": part},
    }


def test_a_node_set_listed_in_two_partitions_is_built_once_with_both() -> None:
    doc = _doc(
        _group(["w-0", "w-1"], "main", ["IDLE"]),
        _group(["w-2"], "main", ["IDLE", "DRAIN"], "bad gpu"),
        _group(["w-0", "w-1"], "hidden", ["IDLE"]),
        _group(["w-2"], "hidden", ["IDLE", "DRAIN"], "bad gpu"),
    )
    parsed = parse_sinfo_json(doc)
    by_name = {n.name: n for n in parsed.nodes}
    assert [n.name for n in parsed.nodes] == ["w-0", "w-1", "w-2"]
    assert all(n.partitions == ["main", "hidden"] for n in parsed.nodes)
    assert by_name["w-0"].partitions is not by_name["w-1"].partitions  # each owns its list
    assert (by_name["w-2"].state, by_name["w-2"].reason) == ("drained", "bad gpu")
    assert [p.name for p in parsed.partitions] == ["main", "hidden"]


def test_groups_that_differ_keep_the_first_values_and_gain_partitions() -> None:
    # the same names with another reason, and a set that only partly overlaps an earlier one
    doc = _doc(
        _group(["w-0", "w-1"], "main", ["IDLE", "DRAIN"], "first"),
        _group(["w-0", "w-1"], "hidden", ["IDLE", "DRAIN"], "second"),
        _group(["w-1", "w-2"], "gpu", ["MIXED"]),
    )
    by_name = {n.name: n for n in parse_sinfo_json(doc).nodes}
    assert (by_name["w-0"].reason, by_name["w-0"].partitions) == ("first", ["main", "hidden"])
    assert by_name["w-1"].partitions == ["main", "hidden", "gpu"]
    assert (by_name["w-1"].state, by_name["w-2"].state) == ("drained", "mixed")
    assert by_name["w-2"].partitions == ["gpu"]


def test_a_group_without_nodes_or_a_partition_name_is_skipped_not_the_end() -> None:
    # an empty group first (a partition with no nodes), then a partition object without a
    # name: the groups after the empty one are still read, and no partition is invented
    doc = _doc(
        {"nodes": {"nodes": []}, "partition": {"name": "empty"}},
        {**_group(["w-0"], "x", ["IDLE"]), "partition": {"name": None}},
        {**_group(["w-1"], "x", ["IDLE"]), "partition": {}},
    )
    parsed = parse_sinfo_json(doc)
    assert [(n.name, n.partitions) for n in parsed.nodes] == [("w-0", []), ("w-1", [])]
    assert [p.name for p in parsed.partitions] == ["empty"]


def test_a_look_alike_group_without_a_partition_or_listed_twice_adds_none() -> None:
    doc = _doc(
        _group(["w-0"], "main", ["IDLE"]),
        {**_group(["w-0"], "x", ["IDLE"]), "partition": None},
        _group(["w-0"], "main", ["IDLE"]),
    )
    (node,) = parse_sinfo_json(doc).nodes
    assert node.partitions == ["main"]


def test_three_groups_of_the_same_names_that_all_differ_give_every_partition() -> None:
    doc = _doc(
        _group(["w-0", "w-1"], "main", ["IDLE"], "a"),
        _group(["w-0", "w-1"], "hidden", ["IDLE"], "b"),
        _group(["w-0", "w-1"], "gpu", ["IDLE"], "c"),
    )
    nodes = parse_sinfo_json(doc).nodes
    assert [(n.name, n.reason, n.partitions) for n in nodes] == [
        ("w-0", "a", ["main", "hidden", "gpu"]),
        ("w-1", "a", ["main", "hidden", "gpu"]),
    ]


_DIFFERENT = {
    "node": {"state": ["IDLE", "DRAIN"]},
    "cpus": {"allocated": 0, "total": 32, "maximum": 16},
    "memory": {"minimum": 1, "maximum": 2},
    "features": {"total": "x", "active": "x"},
    "gres": {"total": "gpu:8"},
    "reason": {"description": "other", "time": 0, "user": ""},
}


@pytest.mark.parametrize("field", [None, *_DIFFERENT])
def test_a_node_set_listed_in_two_partitions_is_worked_out_once_unless_a_field_differs(
    field: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes a 10,000-node poll cheap: a set listed in `main` and `hidden` with the same
    values is worked out once (one call of the per-group builder); a second group of the
    same names that differs in any one field the node shows is worked out on its own."""
    from npa_sop_tui.status import sinfo_groups

    calls: list[str] = []
    real = sinfo_groups.node_values

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(sinfo_groups, "node_values", counting)
    second = _group(["w-0", "w-1"], "hidden", ["IDLE"])
    if field is not None:
        second[field] = _DIFFERENT[field]
    nodes = parse_sinfo_json(_doc(_group(["w-0", "w-1"], "main", ["IDLE"]), second)).nodes
    assert len(calls) == (1 if field is None else 2)
    assert [(n.name, n.state, n.partitions) for n in nodes] == [
        ("w-0", "idle", ["main", "hidden"]),
        ("w-1", "idle", ["main", "hidden"]),
    ]


@pytest.mark.parametrize(("allocated", "per_node"), [(0, 0), (1, None), (16, None)])
def test_allocated_cpus_of_a_many_node_group_are_per_node_only_when_none(
    allocated: int, per_node: int | None
) -> None:
    # a group's `cpus.allocated` sums its nodes: split between them it says nothing per
    # node, except that none of them has any
    group = _group(["w-0", "w-1"], "main", ["MIXED"])
    group["cpus"] = {"allocated": allocated, "total": 32, "maximum": 16}
    nodes = parse_sinfo_json(_doc(group)).nodes
    assert [(n.cpus, n.cpus_allocated) for n in nodes] == [(16, per_node), (16, per_node)]
