"""The typed decode of `sinfo --json` groups (status/sinfo_groups.py): only the fields status
reads are decoded, whatever else a group carries; missing or null objects read as absent;
Slurm's `{set, infinite, number}` numbers and string reasons still parse; a document that
is JSON but not laid out as sinfo prints it is a clear error."""

from __future__ import annotations

import json

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
