"""sinfo parsing: delimited text, JSON v0.0.38 (Slurm 22.05) and v0.0.41+ (Slurm 24/25)."""

from __future__ import annotations

import json

import pytest

from npa_sop_tui.status.sinfo_json import parse_sinfo_json
from npa_sop_tui.status.slurm import (
    SinfoParseError,
    diff_nodes,
    enrich_partitions,
    parse_nodes_delimited,
    parse_partitions_delimited,
    state_from_text,
)

# Output captured from the local Slurm substrate, with %C and %f added.
DELIMITED = """\
gpu-001|main*|unknown*|0/128/0/128|1000000|gpu:h100:8|gpu_h100_sxm,network_ssd|none
gpu-002|main*|drained*|0/0/128/128|1000000|gpu:h100:8|gpu_h100_sxm,network_ssd|REASON
gpu-003|main*|down*|0/0/128/128|1000000|gpu:h100:8|gpu_h100_sxm,network_ssd|GPU XID 79
vm|main*|mixed|1/1/0/2|2000|(null)|(null)|none
vm|debug|mixed|1/1/0/2|2000|(null)|(null)|none
""".replace("REASON", "[node_problem] gpu_health_check: xid 79 | nvlink [hc_program]")


def test_delimited_nodes_dedupe_partitions_and_keep_reason_with_separators() -> None:
    nodes = {n.name: n for n in parse_nodes_delimited(DELIMITED)}
    assert list(nodes) == ["gpu-001", "gpu-002", "gpu-003", "vm"]
    assert nodes["vm"].partitions == ["main", "debug"]
    assert nodes["vm"].cpus == 2 and nodes["vm"].cpus_allocated == 1
    assert nodes["vm"].gres is None and nodes["vm"].features == []
    g2 = nodes["gpu-002"]
    assert g2.state == "drained"
    assert g2.flags == ["DRAIN", "NOT_RESPONDING"]
    assert g2.display == "drained*"
    assert g2.reason == "[node_problem] gpu_health_check: xid 79 | nvlink [hc_program]"
    assert g2.memory_mb == 1000000 and g2.gres == "gpu:h100:8"
    assert g2.features == ["gpu_h100_sxm", "network_ssd"]
    assert not g2.usable and not g2.responding
    assert nodes["gpu-001"].reason is None
    assert nodes["vm"].usable


@pytest.mark.parametrize(
    ("text", "state", "flags"),
    [
        ("idle", "idle", []),
        ("idle~", "idle", ["POWERED_DOWN"]),
        ("idle#", "idle", ["POWERING_UP"]),
        ("down*", "down", ["NOT_RESPONDING"]),
        ("draining", "draining", ["DRAIN"]),
        ("drng", "draining", ["DRAIN"]),
        ("inval", "inval", ["INVALID_REG"]),
        ("maint", "maint", ["MAINTENANCE"]),
        ("mixed$", "mixed", ["MAINTENANCE"]),
        ("reboot^", "reboot", ["REBOOT_REQUESTED", "REBOOT_ISSUED"]),
        ("alloc", "allocated", []),
        ("unk*", "unknown", ["NOT_RESPONDING"]),
    ],
)
def test_state_text_to_state_and_flags(text: str, state: str, flags: list[str]) -> None:
    assert state_from_text(text) == (state, flags)


def test_delimited_rejects_a_foreign_format() -> None:
    with pytest.raises(SinfoParseError, match="line 1: expected 8 fields"):
        parse_nodes_delimited("PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n")


JSON_V38 = {
    "meta": {"plugin": {"type": "openapi/v0.0.38"}, "Slurm": {"release": "22.05.8"}},
    "errors": [],
    "nodes": [
        {
            "name": "gpu-002",
            "state": "unknown",
            "state_flags": ["DRAIN", "NOT_RESPONDING"],
            "reason": "[node_problem] gpu_health_check: xid 79 | nvlink [hc_program]",
            "partitions": ["main"],
            "cpus": 128,
            "alloc_cpus": 0,
            "real_memory": 1000000,
            "gres": "gpu:h100:8",
            "features": "gpu_h100_sxm,network_ssd",
            "active_features": "gpu_h100_sxm,network_ssd",
        },
        {
            "name": "vm",
            "state": "mixed",
            "state_flags": [],
            "reason": "",
            "partitions": ["main", "debug"],
            "cpus": 2,
            "alloc_cpus": 1,
            "real_memory": 2000,
            "gres": "",
            "features": "",
            "active_features": "",
        },
        {
            "name": "gpu-003",
            "state": "down",
            "state_flags": ["NOT_RESPONDING"],
            "reason": "GPU XID 79",
            "partitions": ["main"],
            "cpus": 128,
            "alloc_cpus": 0,
            "real_memory": 1000000,
            "gres": "gpu:h100:8",
            "features": "gpu_h100_sxm,network_ssd",
        },
        {
            "name": "gpu-001",
            "state": "unknown",
            "state_flags": ["NOT_RESPONDING"],
            "reason": "",
            "partitions": ["main"],
            "cpus": 128,
            "alloc_cpus": 0,
            "real_memory": 1000000,
            "gres": "gpu:h100:8",
            "features": "gpu_h100_sxm,network_ssd",
        },
    ],
}


def test_json_v0038_agrees_with_delimited() -> None:
    parsed = parse_sinfo_json(json.dumps(JSON_V38))
    assert parsed.version == "22.05.8" and parsed.source_format == "json-v0.0.38"
    by_json = sorted(parsed.nodes, key=lambda n: n.name)
    by_text = sorted(parse_nodes_delimited(DELIMITED), key=lambda n: n.name)
    assert [n.model_dump() for n in by_json] == [n.model_dump() for n in by_text]


# Shape of data_parser v0.0.44 (Slurm 25.11): groups of nodes with the same state/partition.
JSON_V44 = {
    "meta": {
        "plugin": {"type": "openapi/slurmctld", "data_parser": "data_parser/v0.0.44"},
        "slurm": {"release": "25.11.3", "version": {"major": "25"}},
    },
    "errors": [],
    "warnings": [],
    "sinfo": [
        {
            "node": {"state": ["IDLE"]},
            "nodes": {
                "allocated": 0,
                "idle": 2,
                "other": 0,
                "total": 2,
                "nodes": ["worker-0", "worker-1"],
                "hostnames": [],
                "addresses": [],
            },
            "cpus": {
                "allocated": 8,
                "idle": 248,
                "other": 0,
                "total": 256,
                "minimum": 128,
                "maximum": 128,
            },
            "memory": {
                "minimum": 1638400,
                "maximum": 1638400,
                "allocated": 0,
                "free": {"minimum": {"set": True, "number": 1}},
            },
            "gres": {"total": "gpu:nvidia_h100:8", "used": "gpu:nvidia_h100:0"},
            "features": {"total": "gpu_h100_sxm,network_ssd", "active": "gpu_h100_sxm,network_ssd"},
            "reason": {"description": "", "time": {"set": True, "number": 0}, "user": ""},
            "partition": {"name": "main"},
        },
        {
            "node": {"state": ["IDLE", "DRAIN"]},
            "nodes": {"total": 1, "nodes": ["worker-2"]},
            "cpus": {"allocated": 0, "total": 128, "minimum": 128, "maximum": 128},
            "memory": {"minimum": 1638400, "maximum": 1638400},
            "gres": {"total": "gpu:nvidia_h100:8"},
            "features": {"total": "gpu_h100_sxm", "active": "gpu_h100_sxm"},
            "reason": {"description": "[node_problem] dcgmi_diag_r2: failed"},
            "partition": {"name": "main"},
        },
        {
            "node": {"state": ["IDLE", "CLOUD", "POWERED_DOWN"]},
            "nodes": {"total": 1, "nodes": ["worker-3"]},
            "cpus": {"total": 128, "maximum": 128},
            "memory": {"maximum": 1638400},
            "gres": {"total": "gpu:nvidia_h100:8"},
            "features": {"total": ""},
            "reason": {"description": ""},
            "partition": {"name": "main"},
        },
        {
            "node": {"state": ["IDLE"]},
            "nodes": {"total": 2, "nodes": ["worker-0", "worker-1"]},
            "cpus": {"total": 256, "maximum": 128},
            "memory": {"maximum": 1638400},
            "gres": {"total": "gpu:nvidia_h100:8"},
            "features": {"total": ""},
            "reason": {"description": ""},
            "partition": {"name": "hidden"},
        },
    ],
}


def test_json_v0044_groups() -> None:
    parsed = parse_sinfo_json(json.dumps(JSON_V44))
    assert parsed.version == "25.11.3"
    nodes = {n.name: n for n in parsed.nodes}
    assert sorted(nodes) == ["worker-0", "worker-1", "worker-2", "worker-3"]
    assert nodes["worker-0"].partitions == ["main", "hidden"]
    assert nodes["worker-0"].cpus == 128 and nodes["worker-0"].memory_mb == 1638400
    assert nodes["worker-0"].cpus_allocated is None  # a group total is not per node
    assert nodes["worker-2"].cpus_allocated == 0  # one node: its own
    assert nodes["worker-2"].display == "drained" and nodes["worker-2"].flags == ["DRAIN"]
    assert nodes["worker-2"].reason == "[node_problem] dcgmi_diag_r2: failed"
    assert nodes["worker-3"].display == "idle~" and nodes["worker-3"].flags == ["POWERED_DOWN"]
    assert {p.name for p in parsed.partitions} == {"main", "hidden"}


def test_json_with_only_errors_is_reported() -> None:
    doc = {"meta": {}, "errors": [{"error": "Unable to contact slurm controller"}], "nodes": []}
    with pytest.raises(SinfoParseError, match="Unable to contact"):
        parse_sinfo_json(json.dumps(doc))
    with pytest.raises(SinfoParseError, match="invalid JSON"):
        parse_sinfo_json("sinfo: unrecognized option '--json'")


def test_partitions_summary_and_enrichment() -> None:
    parts = parse_partitions_delimited("main*|up|infinite|4|1/1/2/4\ndebug|up|30:00|1|1/0/0/1\n")
    assert parts[0].name == "main" and parts[0].default and parts[0].nodes_other == 2
    assert parts[1].timelimit == "30:00" and not parts[1].default
    enriched = {p.name: p for p in enrich_partitions(parts, parse_nodes_delimited(DELIMITED))}
    assert enriched["main"].nodes == ["gpu-001", "gpu-002", "gpu-003", "vm"]
    assert enriched["main"].state_counts == {"unknown*": 1, "drained*": 1, "down*": 1, "mixed": 1}
    assert enriched["debug"].state_counts == {"mixed": 1}


def test_diff_nodes() -> None:
    before = parse_nodes_delimited(DELIMITED)
    after_text = (
        DELIMITED.replace("gpu-003|main*|down*", "gpu-003|main*|idle").replace(
            "gpu-001|main*|unknown*|0/128/0/128|1000000|gpu:h100:8|gpu_h100_sxm,network_ssd|none\n",
            "",
        )
        + "gpu-004|main*|idle|0/128/0/128|1000000|gpu:h100:8|x|none\n"
    )
    d = diff_nodes(before, parse_nodes_delimited(after_text))
    assert (d.added, d.removed, d.changed) == (["gpu-004"], ["gpu-001"], ["gpu-003"])
    assert diff_nodes(before, parse_nodes_delimited(DELIMITED)).empty


def test_host_lists_compress_like_slurm() -> None:
    from npa_sop_tui.status.sinfo_summary import hostlist

    assert hostlist(["gpu-001", "gpu-002", "gpu-003"]) == "gpu-[001-003]"
    assert hostlist(["gpu-003", "gpu-001", "gpu-007", "login-0"]) == "gpu-[001,003,007],login-0"
    assert hostlist(["vm"]) == "vm" and hostlist(["worker-9", "worker-10"]) == "worker-9,worker-10"


def test_summary_rows_make_nodes_partitions_and_plain_text() -> None:
    from npa_sop_tui.status.sinfo_summary import parse_summary

    text = (
        "w-1|main*|up|infinite|mix|mixed|4/4/0/8|2000|(null)|(null)|none\n"
        "w-2|main*|up|infinite|drain|drained|0/0/8/8|2000|(null)|(null)|hc: a|b\n"
        "w-3|main*|up|infinite|idle|idle|0/8/0/8|2000|(null)|(null)|none\n"
        "w-3|short|up|30:00|idle|idle|0/8/0/8|2000|(null)|(null)|none\n"
    )
    nodes, parts, plain = parse_summary(text)
    assert [n.name for n in nodes] == ["w-1", "w-2", "w-3"]
    assert next(n for n in nodes if n.name == "w-2").reason == "hc: a|b"  # "|" in a reason
    main, short = parts
    assert (main.default, main.timelimit, short.default, short.timelimit) == (
        True,
        "infinite",
        False,
        "30:00",
    )
    assert (main.nodes_allocated, main.nodes_idle, main.nodes_other, main.nodes_total) == (
        1,
        1,
        1,
        3,
    )
    assert plain.splitlines() == [
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "main*        up   infinite      1    mix w-1",
        "main*        up   infinite      1  drain w-2",
        "main*        up   infinite      1   idle w-3",
        "short        up      30:00      1   idle w-3",
    ]
