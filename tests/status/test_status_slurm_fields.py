"""sinfo parsing field by field (slurm.py): state names and flags, every JSON field of both
shapes (gres, features, cpus_allocated…), partition counts that add up over split lines,
draining against drained, blank lines, and collecting over a runner that fails in each way.

The runner here stands in for the SSH session only; real sinfo over real SSH is in
test_status_ssh.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from npa_sop_tui.status.model import SlurmPartition
from npa_sop_tui.status.sinfo_json import collect_json, nodes_json_command, parse_sinfo_json
from npa_sop_tui.status.sinfo_summary import VERSION_CMD
from npa_sop_tui.status.slurm import (
    PARTITIONS_CMD,
    PLAIN_CMD,
    SinfoParseError,
    SlurmCommandFailed,
    diff_nodes,
    display_state,
    enrich_partitions,
    long_state,
    parse_nodes_delimited,
    parse_partitions_delimited,
    state_from_text,
)
from npa_sop_tui.status.slurm_poll import collect_slurm


@pytest.mark.parametrize(
    ("base", "flags", "state"),
    [
        ("IDLE", [], "idle"),
        ("idle", ["MAINTENANCE"], "maint"),
        ("mixed", ["MAINTENANCE"], "mixed"),
        ("idle", ["MAINTENANCE", "DRAIN"], "drained"),
        ("idle", ["REBOOT_ISSUED"], "reboot"),
        ("idle", ["REBOOT_REQUESTED"], "reboot"),
        ("allocated", ["REBOOT_REQUESTED"], "allocated"),
        ("idle", ["DRAIN"], "drained"),
        ("down", ["DRAIN"], "drained"),
        ("allocated", ["DRAIN"], "draining"),
        ("mixed", ["DRAIN"], "draining"),
        ("completing", ["DRAIN"], "draining"),
        ("idle", ["FAIL"], "fail"),
        ("allocated", ["FAIL"], "failing"),
        ("mixed", ["FAIL"], "failing"),
        ("completing", ["FAIL"], "failing"),
        ("idle", ["INVALID_REG"], "inval"),
        ("down", ["NOT_RESPONDING"], "down"),
    ],
)
def test_long_state_names(base: str, flags: list[str], state: str) -> None:
    assert long_state(base, flags) == state


@pytest.mark.parametrize(
    ("state", "flags", "shown"),
    [
        ("drained", ["DRAIN", "NOT_RESPONDING"], "drained*"),
        ("idle", ["POWERED_DOWN"], "idle~"),
        ("idle", ["NOT_RESPONDING", "POWERED_DOWN"], "idle*"),
        ("idle", ["POWERING_UP"], "idle#"),
        ("idle", ["POWER_DOWN"], "idle!"),
        ("idle", ["POWERING_DOWN"], "idle%"),
        ("mixed", ["MAINTENANCE"], "mixed$"),
        ("maint", ["MAINTENANCE"], "maint"),
        ("reboot", ["REBOOT_REQUESTED"], "reboot"),
        ("reboot", ["REBOOT_REQUESTED", "REBOOT_ISSUED"], "reboot^"),
        ("mixed", ["REBOOT_REQUESTED"], "mixed@"),
        ("idle", ["PLANNED"], "idle-"),
        ("drained", ["DRAIN"], "drained"),
    ],
)
def test_display_state_suffixes(state: str, flags: list[str], shown: str) -> None:
    assert display_state(state, flags) == shown


@pytest.mark.parametrize(
    ("text", "state", "flags"),
    [
        ("drain", "drained", ["DRAIN"]),
        (" mix ", "mixed", []),
        ("comp", "completing", []),
        ("IDLE*", "idle", ["NOT_RESPONDING"]),
        ("idle~", "idle", ["POWERED_DOWN"]),
        ("fail", "fail", ["FAIL"]),
        ("failing", "failing", ["FAIL"]),
        ("powered_down", "powered_down", ["POWERED_DOWN"]),
        ("planned", "planned", ["PLANNED"]),
        ("reserved", "reserved", ["RESERVED"]),
        ("idle$@", "idle", ["MAINTENANCE", "REBOOT_REQUESTED"]),
        ("future", "future", []),
    ],
)
def test_state_text(text: str, state: str, flags: list[str]) -> None:
    assert state_from_text(text) == (state, flags)


# --- delimited ------------------------------------------------------------------------------


def test_a_blank_line_does_not_stop_the_node_table() -> None:
    text = (
        "a|hpcX*|idle|0/4/0/4|1000|(null)|(null)|none\n"
        "\n"
        "   \n"
        "b|debug|draining|2/0/0/2|2000|gpu:1|f1,,f2|(null)\n"
        "c|main*|mix|1/1/0/2|x|(null)|(null)|none|with|bars\n"
        "d|main|idle|4|500|(null)|(null)|none\n"
    )
    nodes = {n.name: n for n in parse_nodes_delimited(text)}
    assert list(nodes) == ["a", "b", "c", "d"]
    b = nodes["b"]
    assert (b.state, b.flags, b.display, b.partitions) == (
        "draining",
        ["DRAIN"],
        "draining",
        ["debug"],
    )
    assert (b.cpus, b.cpus_allocated, b.memory_mb, b.gres) == (2, 2, 2000, "gpu:1")
    assert (b.features, b.reason) == (["f1", "f2"], None)
    assert nodes["a"].partitions == ["hpcX"] and nodes["a"].reason is None
    assert nodes["c"].memory_mb is None and nodes["c"].reason == "none|with|bars"
    assert (nodes["d"].cpus, nodes["d"].cpus_allocated) == (4, None)  # %C without A/I/O/T


def test_a_node_in_two_partitions_is_listed_once() -> None:
    text = "a|main*|idle|0/4/0/4|1|(null)|(null)|none\na|main|idle|0/4/0/4|1|(null)|(null)|none\n"
    (node,) = parse_nodes_delimited(text)
    assert node.partitions == ["main"]
    text += "a|debug|idle|0/4/0/4|1|(null)|(null)|none\n"
    (node,) = parse_nodes_delimited(text)
    assert node.partitions == ["main", "debug"]


def test_a_foreign_line_is_named_by_its_number() -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_nodes_delimited("\na|main|idle|0/1/0/1|1|(null)|(null)|none\nNODELIST STATE\n")
    assert str(info.value) == "sinfo line 3: expected 8 fields, got 1"


def test_partition_counts_add_up_over_split_lines() -> None:
    text = (
        "main*|up|infinite|4|1/1/2/4\n"
        "\n"
        "main*|up|infinite|3|0/2/1/3\n"
        "debug|down|30:00|4|n/a\n"
        "odd|up|1:00|5|1/x/2/0\n"
        "gpuX|up|1:00|n/a|n/a\n"
    )
    parts = {p.name: p for p in parse_partitions_delimited(text)}
    assert list(parts) == ["main", "debug", "odd", "gpuX"]
    main = parts["main"]
    assert (main.default, main.available, main.timelimit) == (True, "up", "infinite")
    assert (main.nodes_allocated, main.nodes_idle, main.nodes_other, main.nodes_total) == (
        1,
        3,
        3,
        7,
    )
    debug = parts["debug"]
    assert (debug.default, debug.available, debug.timelimit) == (False, "down", "30:00")
    # no A/I/O/T: the node count stands in for the total
    assert (debug.nodes_allocated, debug.nodes_idle, debug.nodes_other, debug.nodes_total) == (
        0,
        0,
        0,
        4,
    )
    odd = parts["odd"]
    assert (odd.nodes_allocated, odd.nodes_idle, odd.nodes_other, odd.nodes_total) == (1, 0, 2, 5)
    assert parts["gpuX"].nodes_total == 0  # no count at all


def test_a_foreign_partition_line_is_named_by_its_number() -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_partitions_delimited("main|up|1|1|0/1/0/1\nPARTITION AVAIL\n")
    assert str(info.value) == "partition line 2: expected 5 fields, got 1"


# --- JSON -----------------------------------------------------------------------------------


def _group(
    states: list[str], names: list[str], partition: str | None = "main", **extra: Any
) -> dict:
    group: dict[str, Any] = {"node": {"state": states}, "nodes": {"nodes": names}, **extra}
    if partition is not None:
        group["partition"] = {"name": partition}
    return group


def test_newer_json_fields_per_node() -> None:
    doc = {
        "meta": {"plugin": {"type": "openapi/data_parser/v0.0.44"}, "slurm": {"release": "25.11"}},
        "sinfo": [
            _group(
                ["DRAIN", "MIXED"],
                ["w-0"],
                cpus={"allocated": 12, "total": 64, "maximum": {"set": True, "number": 64}},
                memory={"maximum": 0, "minimum": 4096},
                gres={"total": "gpu:h100:8(S:0-1)", "used": "gpu:h100:2"},
                features={"active": "ib,nvme", "total": "ib,nvme,spare"},
                reason={"description": "[user_problem] maintenance window"},
            ),
            _group(
                ["IDLE"],
                ["w-1", "w-2"],
                cpus={"allocated": 3, "total": 128},
                memory={"maximum": 2048},
                gres={"total": "(null)"},
                features={"total": "ib"},
                reason={"description": "none"},
            ),
            _group(["ALLOCATED"], [], hostnames=["h-0"], partition=None),
            _group(["IDLE"], ["w-1", "w-0", "w-3"], partition="hidden"),
            _group(["IDLE"], ["w-3"], partition=None),
            _group(["CLOUD"], ["w-4"], partition="main"),
        ],
    }
    doc["sinfo"][2]["nodes"] = {"hostnames": ["h-0"]}
    parsed = parse_sinfo_json(json.dumps(doc))
    assert (parsed.version, parsed.source_format) == ("25.11", "json-v0.0.44")
    nodes = {n.name: n for n in parsed.nodes}
    assert list(nodes) == ["w-0", "w-1", "w-2", "h-0", "w-3", "w-4"]
    w0 = nodes["w-0"]
    assert (w0.state, w0.flags, w0.display) == ("draining", ["DRAIN"], "draining")
    assert (w0.cpus, w0.cpus_allocated, w0.memory_mb) == (64, 12, 4096)
    assert (w0.gres, w0.features, w0.reason) == (
        "gpu:h100:8(S:0-1)",
        ["ib", "nvme"],
        "[user_problem] maintenance window",
    )
    assert w0.partitions == ["main", "hidden"]
    w1 = nodes["w-1"]
    assert (w1.cpus, w1.cpus_allocated, w1.memory_mb) == (128, None, 2048)  # a group total
    assert (w1.gres, w1.features, w1.reason) == (None, ["ib"], None)
    assert w1.partitions == ["main", "hidden"]
    assert nodes["h-0"].partitions == [] and nodes["h-0"].state == "allocated"
    assert nodes["w-3"].partitions == ["hidden"]
    assert (nodes["w-4"].state, nodes["w-4"].flags) == ("unknown", [])
    assert [p.name for p in parsed.partitions] == ["main", "hidden"]


def test_older_json_fields_per_node() -> None:
    doc = {
        "meta": {"Slurm": {"release": "23.02.7"}},
        "nodes": [
            {
                "name": "a",
                "state": ["MIXED", "DRAIN"],
                "partitions": ["main"],
                "cpus": 8,
                "alloc_cpus": 4,
                "real_memory": {"set": True, "infinite": False, "number": 1000},
                "gres": "(null)",
                "features": "x,y,spare",
                "active_features": "x,y",
                "reason": "none",
            },
            {"name": "b", "state": [], "state_flags": ["NOT_RESPONDING"]},
            {"name": 7, "state": "idle", "cpus": {"set": False, "number": 9}},
            {"name": "c", "cpus": {"infinite": True, "number": 9}, "reason": "[x] y"},
            {"name": "d", "state": "IDLE", "cpus": "16", "alloc_cpus": True, "real_memory": 1.5},
        ],
    }
    parsed = parse_sinfo_json(json.dumps(doc))
    assert (parsed.version, parsed.source_format, parsed.partitions) == (
        "23.02.7",
        "json-v0.0.38",
        [],
    )
    a, b, seven, c, d = parsed.nodes
    assert (a.state, a.flags, a.cpus, a.cpus_allocated, a.memory_mb) == (
        "draining",
        ["DRAIN"],
        8,
        4,
        1000,
    )
    assert (a.gres, a.features, a.reason) == (None, ["x", "y"], None)
    assert (b.state, b.flags, b.display, b.partitions) == (
        "unknown",
        ["NOT_RESPONDING"],
        "unknown*",
        [],
    )
    assert (seven.name, seven.state, seven.cpus) == ("7", "idle", None)
    assert (c.state, c.cpus, c.reason) == ("unknown", None, "[x] y")
    assert (d.cpus, d.cpus_allocated, d.memory_mb) == (16, None, None)


def test_json_formats_and_versions() -> None:
    def parsed(doc: dict[str, Any]) -> tuple[str | None, str]:
        result = parse_sinfo_json(json.dumps(doc))
        return result.version, result.source_format

    assert parsed({"sinfo": []}) == (None, "json-v0.0.41+")
    assert parsed({"nodes": []}) == (None, "json-v0.0.38")
    assert parsed({"meta": {"plugin": {"type": "openapi/slurmctld"}}, "nodes": []}) == (
        None,
        "json-slurmctld",
    )
    assert parsed({"meta": {"plugin": {"type": "openapi/data_parser/v0.0.39"}}, "nodes": []}) == (
        None,
        "json-v0.0.39",
    )
    assert parsed({"meta": {"plugin": {"type": "v0.0.42"}}, "sinfo": []}) == (None, "json-v0.0.42")
    assert parsed({"meta": {"slurm": "25.11", "plugin": {}}, "sinfo": []}) == (
        None,
        "json-v0.0.41+",
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1], "sinfo --json did not print an object"),
        ({"meta": {}}, "sinfo --json has neither `sinfo` nor `nodes`"),
        ({"sinfo": {}}, "sinfo --json has neither `sinfo` nor `nodes`"),
        (
            {"errors": [{"description": "no controller"}]},
            "sinfo --json reported an error: no controller",
        ),
        ({"errors": ["plain text"], "sinfo": []}, "sinfo --json reported an error: plain text"),
        (
            {"errors": [{"error": "first", "description": "second"}], "nodes": []},
            "sinfo --json reported an error: first",
        ),
    ],
)
def test_json_refusals(doc: Any, message: str) -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_sinfo_json(json.dumps(doc))
    assert str(info.value) == message


def test_errors_beside_nodes_are_not_fatal() -> None:
    doc = {"errors": [{"error": "partial"}, None], "nodes": [{"name": "a", "state": "idle"}]}
    assert [n.name for n in parse_sinfo_json(json.dumps(doc)).nodes] == ["a"]
    doc = {"errors": ["partial"], "sinfo": [_group(["IDLE"], ["b"])]}
    assert [n.name for n in parse_sinfo_json(json.dumps(doc)).nodes] == ["b"]


# --- partitions and diffs -----------------------------------------------------------------


def test_enrich_counts_per_display_state_and_adds_unknown_partitions() -> None:
    nodes = parse_nodes_delimited(
        "a|main*|idle|0/1/0/1|1|(null)|(null)|none\n"
        "b|main*|drained*|0/1/0/1|1|(null)|(null)|none\n"
        "c|main*|idle|0/1/0/1|1|(null)|(null)|none\n"
        "c|extra|idle|0/1/0/1|1|(null)|(null)|none\n"
    )
    given = [SlurmPartition(name="main", nodes_total=7, nodes=["stale"], state_counts={"x": 1})]
    parts = {p.name: p for p in enrich_partitions(given, nodes)}
    assert list(parts) == ["main", "extra"]
    assert parts["main"].nodes == ["a", "b", "c"]
    assert parts["main"].state_counts == {"idle": 2, "drained*": 1}
    assert parts["main"].nodes_total == 7  # sinfo's own count is kept when larger
    extra = parts["extra"]
    assert (extra.name, extra.nodes, extra.state_counts, extra.nodes_total) == (
        "extra",
        ["c"],
        {"idle": 1},
        1,
    )


def test_diff_names_added_removed_and_changed_nodes() -> None:
    line = "{}|main|{}|0/1/0/1|1|(null)|(null)|{}\n"
    before = parse_nodes_delimited(
        line.format("a", "idle", "none")
        + line.format("b", "idle", "none")
        + line.format("c", "idle", "none")
    )
    after = parse_nodes_delimited(
        line.format("b", "idle", "why")
        + line.format("c", "idle", "none")
        + line.format("d", "idle", "none")
    )
    diff = diff_nodes(before, after)
    assert (diff.added, diff.removed, diff.changed, diff.empty) == (["d"], ["a"], ["b"], False)
    assert diff_nodes(before, before).empty


# --- collecting (the --json format) ----------------------------------------------------


@dataclass
class Result:
    exit_status: int = 0
    stdout: str = ""
    stderr: str = ""


@dataclass
class Runner:
    """Answers each command from a table; records what it was asked and with which timeout."""

    answers: dict[str, Result]
    asked: list[tuple[str, float]] = field(default_factory=list)

    async def run(self, command: str, *, timeout: float = 0) -> Result:
        self.asked.append((command, timeout))
        return self.answers[command]


PARTS_TEXT = "main*|up|infinite|1|0/1/0/1\n"
NODES_JSON = json.dumps(
    {
        "meta": {"slurm": {"release": "24.05"}},
        "sinfo": [_group(["IDLE"], ["w-1"]), _group(["IDLE"], ["w-0"])],
    }
)


NODES_JSON_CMD = nodes_json_command("24.05.4")  # no v0.0.44 in 24.05: plain --json
ALL_CMDS = (VERSION_CMD, NODES_JSON_CMD, PARTITIONS_CMD, PLAIN_CMD)


def runner(**answers: Result) -> Runner:
    table = {
        VERSION_CMD: Result(stdout="slurm 24.05.4\n"),
        NODES_JSON_CMD: Result(stdout=NODES_JSON),
        PARTITIONS_CMD: Result(stdout=PARTS_TEXT),
        PLAIN_CMD: Result(stdout="PARTITION AVAIL\nmain* up\n"),
    }
    names = {"json": NODES_JSON_CMD, "parts": PARTITIONS_CMD, "plain": PLAIN_CMD}
    names["version"] = VERSION_CMD
    for key, value in answers.items():
        table[names[key]] = value
    return Runner(table)


async def test_collect_json_nodes_partitions_and_text() -> None:
    r = runner()
    await collect_json(r, host="login")
    assert sorted(r.asked) == sorted((c, 30.0) for c in ALL_CMDS)
    r = runner()
    state = await collect_json(r, host="login", timeout=7)
    assert (state.host, state.version, state.source_format) == ("login", "24.05", "json-v0.0.41+")
    assert [n.name for n in state.nodes] == ["w-0", "w-1"]  # sorted by name
    assert [(p.name, p.default, p.nodes, p.nodes_total) for p in state.partitions] == [
        ("main", True, ["w-1", "w-0"], 2)
    ]
    assert state.sinfo_text == "PARTITION AVAIL\nmain* up\n"
    assert sorted(r.asked) == sorted((c, 7) for c in ALL_CMDS)


async def test_collect_json_reports_each_failure() -> None:
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_json(runner(json=Result(2, "", "\nno json\nmore")), host="h")
    assert str(info.value) == "`sinfo -a --json` exited 2: no json"
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_json(runner(json=Result(1, "out only", "")), host="h")
    assert str(info.value) == "`sinfo -a --json` exited 1: out only"
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_json(runner(json=Result(3, "", "")), host="h")
    assert str(info.value) == "`sinfo -a --json` exited 3: no output"
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_json(runner(parts=Result(1, "", "slurm_load_partitions: error")), host="h")
    assert str(info.value) == f"`{PARTITIONS_CMD}` exited 1: slurm_load_partitions: error"
    with pytest.raises(SinfoParseError):
        await collect_json(runner(json=Result(stdout="[")), host="h")


async def test_collect_json_keeps_going_without_the_plain_text() -> None:
    state = await collect_json(runner(plain=Result(1, "half", "err")), host="h")
    assert state.sinfo_text == "" and [n.name for n in state.nodes] == ["w-0", "w-1"]


async def test_the_poll_picks_the_json_collector_only_when_asked() -> None:
    r = runner()
    state = await collect_slurm(r, host="h", fmt="json", timeout=5)
    assert state.source_format == "json-v0.0.41+"
    assert sorted(c for c, _ in r.asked) == sorted(ALL_CMDS)


@pytest.mark.parametrize(
    ("release", "asked"),
    [("slurm 25.11.3", "sinfo -a --json=v0.0.44"), ("slurm-wlm 22.05.8", "sinfo -a --json")],
)
async def test_collect_json_asks_the_format_the_release_ships(release: str, asked: str) -> None:
    r = runner(version=Result(stdout=release + "\n"))
    r.answers[asked] = Result(stdout=NODES_JSON)
    state = await collect_json(r, host="h")
    assert [n.name for n in state.nodes] == ["w-0", "w-1"]
    assert sorted(c for c, _ in r.asked) == sorted([VERSION_CMD, asked, PARTITIONS_CMD, PLAIN_CMD])


async def test_collect_json_falls_back_when_the_format_is_not_shipped() -> None:
    # a newer Slurm without v0.0.44 says so and exits 1: ask its own default instead
    r = runner(version=Result(stdout="slurm 28.05.1\n"))
    r.answers["sinfo -a --json=v0.0.44"] = Result(
        1, "", "sinfo: error: load_plugins: unable to find plugin: data_parser/v0.0.44\n"
    )
    state = await collect_json(r, host="h")
    assert [n.name for n in state.nodes] == ["w-0", "w-1"]
    assert [c for c, _ in r.asked][-1] == "sinfo -a --json"


def _newer_slurm(first: Result) -> Runner:
    r = runner(version=Result(stdout="slurm 28.05.1\n"))
    r.answers["sinfo -a --json=v0.0.44"] = first
    r.answers["sinfo -a --json"] = Result(stdout=NODES_JSON)
    return r


async def test_the_fallback_keeps_the_callers_timeout() -> None:
    r = _newer_slurm(Result(1, "", "sinfo: error: unable to find plugin: data_parser/v0.0.44"))
    await collect_json(r, host="h", timeout=7)
    assert ("sinfo -a --json", 7) in r.asked


async def test_a_failure_that_is_not_about_the_format_is_reported_not_retried() -> None:
    r = _newer_slurm(Result(1, "", "slurm_load_node: Unable to contact slurm controller"))
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_json(r, host="h")
    assert str(info.value) == (
        "`sinfo -a --json=v0.0.44` exited 1: slurm_load_node: Unable to contact slurm controller"
    )
    assert "sinfo -a --json" not in [c for c, _ in r.asked]


async def test_a_warning_naming_a_plugin_on_a_good_answer_is_no_reason_to_retry() -> None:
    good = Result(0, NODES_JSON, "sinfo: error: unable to find plugin: auth/jwt")
    r = _newer_slurm(good)
    state = await collect_json(r, host="h")
    assert [n.name for n in state.nodes] == ["w-0", "w-1"]
    assert "sinfo -a --json" not in [c for c, _ in r.asked]


@pytest.mark.parametrize(("pad", "retried"), [(200 - 21, True), (201 - 21, False)])
async def test_only_the_head_of_stdout_is_read_for_the_format_error(
    pad: int, retried: bool
) -> None:
    """A failing sinfo may print a whole document before its error; only its first 200
    characters are searched for Slurm's "no such format" words."""
    marker = "unable to find plugin"
    assert len(marker) == 21
    r = _newer_slurm(Result(1, "x" * pad + marker, ""))
    if retried:
        await collect_json(r, host="h")
    else:
        with pytest.raises(SlurmCommandFailed):
            await collect_json(r, host="h")
    assert ("sinfo -a --json" in [c for c, _ in r.asked]) is retried
