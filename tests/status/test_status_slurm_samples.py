"""The parsers on real Slurm 26.05 output (slurm_samples/, captured from the substrate's
26.05 lab by slurm_samples/capture.sh; version.txt names the Slurm that printed them): the
drained node's scontrol line with Extra=/InstanceId= after its reason, the one-call sinfo
table with the hidden partition, and sinfo --json in data_parser v0.0.44 and v0.0.45."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.status.scontrol import parse_show_node
from npa_sop_tui.status.sinfo_json import nodes_json_command, parse_sinfo_json
from npa_sop_tui.status.sinfo_summary import parse_summary, parse_version
from npa_sop_tui.status.slurm_versions import json_option, major

SAMPLES = Path(__file__).parent / "slurm_samples"
REASON = "gpu_health_check: XID 79 | nvlink down"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_the_samples_come_from_slurm_26_05() -> None:
    assert major(parse_version(sample("version.txt"))) == "26.05"


def test_scontrol_reason_keeps_who_and_when_and_the_fields_after_it() -> None:
    node = parse_show_node(sample("scontrol_show_node_drained.txt"))
    assert (node.name, node.state) == ("gpu-1", "IDLE+DRAIN")
    assert node.reason == REASON
    assert node.reason_by == "slurmops"
    assert node.reason_time and node.reason_time.startswith("20")
    assert node.fields["Extra"] == '{"nodeset": "gpu", "pod": "gpu-1"}'
    assert node.fields["InstanceId"] == "i-lab-gpu-1"
    assert node.fields["OS"].startswith("Linux ")
    assert node.fields["Version"] == "26.05.5"
    assert node.partitions == ["main", "hidden"]
    assert (node.cpus, node.memory_mb, node.gres) == (2, 1000, "gpu:h100:8")


def test_scontrol_without_a_reason_still_reads_extra_and_instance_id() -> None:
    node = parse_show_node(sample("scontrol_show_node_idle.txt"))
    assert (node.name, node.state, node.reason, node.reason_by) == ("gpu-0", "IDLE", None, None)
    assert node.fields["InstanceId"] == "i-lab-gpu-0"
    assert node.fields["AveWatts"] == "0"  # not swallowed by what follows


def test_sinfo_table_lists_hidden_and_the_bare_reason() -> None:
    nodes, partitions, text = parse_summary(sample("sinfo_summary.txt"))
    by_name = {n.name: n for n in nodes}
    assert by_name["gpu-1"].reason == REASON  # %E: no [user@time]
    assert (by_name["gpu-1"].state, by_name["gpu-1"].flags) == ("drained", ["DRAIN"])
    assert by_name["gpu-0"].partitions == ["main", "hidden"]
    parts = {p.name: p for p in partitions}
    assert parts["main"].default and not parts["hidden"].default
    assert parts["hidden"].nodes == ["gpu-0", "gpu-1"]
    assert "hidden" in text


@pytest.mark.parametrize("version", ["v0.0.44", "v0.0.45"])
def test_sinfo_json_of_both_data_parsers(version: str) -> None:
    parsed = parse_sinfo_json(sample(f"sinfo_{version}.json"))
    assert parsed.version == "26.05.5"
    assert parsed.data_parser == version
    assert parsed.source_format == f"json-{version}"
    nodes = {n.name: n for n in parsed.nodes}
    assert sorted(nodes) == ["gpu-0", "gpu-1"]
    assert nodes["gpu-1"].reason == REASON and nodes["gpu-1"].display == "drained"
    assert nodes["gpu-0"].partitions == ["main", "hidden"]
    assert {p.name for p in parsed.partitions} == {"main", "hidden"}
    table, _, _ = parse_summary(sample("sinfo_summary.txt"))
    assert sorted((n.model_dump() for n in parsed.nodes), key=str) == sorted(
        (n.model_dump() for n in table), key=str
    )


@pytest.mark.parametrize(
    ("release", "option"),
    [
        ("22.05.8", "--json"),  # its --json takes no argument
        ("24.05.4", "--json"),  # no v0.0.44 yet
        ("25.11.3", "--json=v0.0.44"),  # Soperator 4.1.x
        ("26.05.5", "--json=v0.0.44"),
        ("27.05.0", "--json=v0.0.44"),
        (None, "--json"),
        ("garbage", "--json"),
    ],
)
def test_json_is_asked_as_v0044_where_the_release_ships_it(
    release: str | None, option: str
) -> None:
    assert json_option(release) == option
    assert nodes_json_command(release) == f"sinfo -a {option}"


def test_nodes_built_fast_are_ordinary_models() -> None:
    import gc

    parsed = parse_sinfo_json(sample("sinfo_v0.0.44.json"))
    assert gc.isenabled()  # collection is held only during the parse
    a, b = sorted(parsed.nodes, key=lambda n: n.name)  # gpu-0 idle, gpu-1 drained
    assert (a.reason, b.reason) == (None, REASON)
    assert a != b and a == a.model_copy() and a.model_fields_set == set(type(a).model_fields)
    doc = json.loads(sample("sinfo_v0.0.44.json"))
    group = next(g for g in doc["sinfo"] if g["node"]["state"] == ["IDLE"])
    group["nodes"]["nodes"] = ["gpu-0", "gpu-1"]  # both nodes from one group's prototype
    c, d = parse_sinfo_json(json.dumps({**doc, "sinfo": [group]})).nodes
    for node in (c, a):
        node.partitions.append("extra")  # each node owns its lists
        node.flags.append("X")
        node.features.append("f")
    assert (d.partitions, d.flags, d.features) == (["main"], [], [])
    assert b.partitions == ["main", "hidden"]
    a.reason = "changed"  # assignment stays local to the node
    assert b.reason == REASON
    gc.disable()
    try:
        parse_sinfo_json(sample("sinfo_v0.0.45.json"))
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()
