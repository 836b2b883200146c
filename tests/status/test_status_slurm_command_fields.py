"""squeue, scontrol, host lists and the one-call sinfo table, field by field: every field of
each output shape, the null spellings Slurm uses, blank lines, the line a parse error names,
and one refresh over a runner that answers like sinfo (sinfo_summary.py, squeue.py,
scontrol.py, hostlist.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from npa_sop_tui.status.hostlist import MAX_HOSTS, expand
from npa_sop_tui.status.scontrol import parse_show_node, show_node_command
from npa_sop_tui.status.sinfo_memo import SinfoMemo
from npa_sop_tui.status.sinfo_summary import (
    INLINE_PARSE_BYTES,
    SUMMARY_CMD,
    VERSION_CMD,
    collect_summary,
    hostlist,
    parse_summary,
    parse_version,
)
from npa_sop_tui.status.slurm import SinfoParseError, SlurmCommandFailed
from npa_sop_tui.status.squeue import parse_squeue_delimited, parse_squeue_json

# --- scontrol show node -o -----------------------------------------------------------------


def test_show_node_every_field() -> None:
    line = (
        "NodeName=gpu-1 CPUAlloc=8 CPUTot=16 RealMemory=64000 AllocMem=32000 "
        "Gres=gpu:h100:8 GresUsed=gpu:h100:2 State=MIXED+DRAIN Partitions=main,debug "
        "ActiveFeatures=ib,nvme AvailableFeatures=ib,nvme,spare "
        "Reason=kernel Reason=again [alice@2026-12-01T10:00:00]"
    )
    node = parse_show_node("\n  \n" + line + "\nNodeName=ignored\n")
    assert node.model_dump(exclude={"fields"}) == {
        "name": "gpu-1",
        "state": "MIXED+DRAIN",
        "reason": "kernel Reason=again",  # only the first ` Reason=` starts the reason
        "reason_by": "alice",
        "reason_time": "2026-12-01T10:00:00",
        "cpus": 16,
        "cpus_allocated": 8,
        "memory_mb": 64000,
        "memory_allocated_mb": 32000,
        "gres": "gpu:h100:8",
        "gres_used": "gpu:h100:2",
        "partitions": ["main", "debug"],
        "features": ["ib", "nvme"],
        "jobs": [],
        "k8s_pod": None,
        "k8s_node": None,
        "node_group": None,
    }
    assert node.fields == {
        "NodeName": "gpu-1",
        "CPUAlloc": "8",
        "CPUTot": "16",
        "RealMemory": "64000",
        "AllocMem": "32000",
        "Gres": "gpu:h100:8",
        "GresUsed": "gpu:h100:2",
        "State": "MIXED+DRAIN",
        "Partitions": "main,debug",
        "ActiveFeatures": "ib,nvme",
        "AvailableFeatures": "ib,nvme,spare",
        "Reason": "kernel Reason=again [alice@2026-12-01T10:00:00]",
    }


def test_show_node_fields_after_the_reason_are_their_own() -> None:
    # Slurm 25.11/26.05 with Soperator's slurmd: Comment/Extra/InstanceId follow the reason
    line = (
        "NodeName=w-0 OS=Linux 6.1.0 #1 SMP State=IDLE+DRAIN CurrentWatts=0 AveWatts=0 "
        "Reason=hc failed: State=bad (GPU 3) [root@2026-12-01T19:59:46] "
        'Comment=rack 4 Extra={"a": "b c"} InstanceId=computeinstance-e00x '
        "InstanceType=gpu-h100 Topology=block1 FutureKey=1 Other=x y"
    )
    node = parse_show_node(line)
    assert (node.reason, node.reason_by, node.reason_time) == (
        "hc failed: State=bad (GPU 3)",
        "root",
        "2026-12-01T19:59:46",
    )
    assert node.state == "IDLE+DRAIN"  # the reason's `State=` is text, not the node's state
    assert node.fields["OS"] == "Linux 6.1.0 #1 SMP"
    assert node.fields["Comment"] == "rack 4"
    assert node.fields["Extra"] == '{"a": "b c"}'
    assert node.fields["InstanceId"] == "computeinstance-e00x"
    assert node.fields["InstanceType"] == "gpu-h100"
    assert node.fields["Topology"] == "block1"
    assert node.fields["FutureKey"] == "1"  # a key of a newer Slurm is still found
    assert node.fields["Other"] == "x y"


def test_show_node_reason_of_several_lines() -> None:
    # Slurm prints further reason lines after the first one's [who@when], indented
    node = parse_show_node(
        "NodeName=w-1 State=DOWN Reason=first line [slurm@2026-12-01T10:00:00]        second"
    )
    assert (node.reason, node.reason_by) == ("first line second", "slurm")
    mail = parse_show_node("NodeName=w-2 Reason=ask [ops@team] first [root@2026-12-01T10:00:00]")
    assert (mail.reason, mail.reason_by) == ("ask [ops@team] first", "root")


def test_show_node_nulls_and_absent_fields() -> None:
    node = parse_show_node(
        "NodeName=vm CPUTot=N/A Gres=(null) GresUsed= AllocMem= RealMemory=x Reason=left by hand"
    )
    assert node.model_dump(exclude={"fields"}) == {
        "name": "vm",
        "state": "UNKNOWN",
        "reason": "left by hand",
        "reason_by": None,
        "reason_time": None,
        "cpus": None,
        "cpus_allocated": None,
        "memory_mb": None,
        "memory_allocated_mb": None,
        "gres": None,
        "gres_used": None,
        "partitions": [],
        "features": [],
        "jobs": [],
        "k8s_pod": None,
        "k8s_node": None,
        "node_group": None,
    }
    plain = parse_show_node("NodeName=vm State=IDLE Gres=N/A GresUsed=n/a\n")
    assert (plain.reason, plain.reason_by, plain.reason_time) == (None, None, None)
    assert (plain.gres, plain.gres_used) == (None, None)
    assert "Reason" not in plain.fields
    assert show_node_command("gpu-1") == "scontrol show node gpu-1 -o"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "scontrol printed no node: ''"),
        ("\n \nNode gpu-9 not found\n", "scontrol printed no node: 'Node gpu-9 not found'"),
        ("x" * 130, f"scontrol printed no node: {'x' * 120!r}"),
    ],
)
def test_show_node_refusals(text: str, message: str) -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_show_node(text)
    assert str(info.value) == message


# --- squeue ---------------------------------------------------------------------------------


def test_squeue_table_every_field() -> None:
    text = (
        "7|a|b|alice|COMPLETING|0:05|1|gpu-1|N/A| |  \n"
        "\n"
        "8|wait|bob|PENDING|0:00|2|(Resources)|gpu:8|main|1:00:00\n"
    )
    done, waiting = parse_squeue_delimited(text)
    assert done.model_dump(exclude_none=True) == {
        "id": "7",
        "name": "a|b",
        "user": "alice",
        "state": "COMPLETING",
        "nodes": 1,
        "nodelist": "gpu-1",
        "elapsed": "0:05",
    }
    assert waiting.model_dump(exclude_none=True) == {
        "id": "8",
        "name": "wait",
        "user": "bob",
        "state": "PENDING",
        "partition": "main",
        "nodes": 2,
        "reason": "Resources",
        "elapsed": "0:00",
        "time_limit": "1:00:00",
        "gres": "gpu:8",
    }
    odd, blank = parse_squeue_delimited(
        "9|x|u|PENDING||1|((nested))|(null)|p|\n10|y|u|PENDING|0:00|1|(Priority)| |p|1:00\n"
    )
    assert (odd.reason, odd.elapsed, odd.gres, odd.time_limit) == ("(nested)", None, None, None)
    assert (blank.reason, blank.gres) == ("Priority", None)


def test_squeue_table_names_the_foreign_line() -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_squeue_delimited("1|a|u|RUNNING|0|1|n|N/A|p|1\nJOBID NAME\n")
    assert str(info.value) == "squeue line 2: expected 10 fields, got 1"


def test_squeue_json_every_field() -> None:
    doc = {
        "jobs": [
            {
                "job_id": {"set": True, "number": 12},
                "name": "train",
                "user_name": "alice",
                "job_state": ["COMPLETING", "END_JOB"],
                "partition": "main",
                "nodes": "gpu-[1-2]",
                "node_count": 2,
                "state_reason": "None",
                "time_limit": {"set": True, "infinite": False, "number": 90},
                "tres_per_node": "gres/gpu:8",
            },
            {
                "job_id": "13",
                "user_id": 1001,
                "job_state": [],
                "state_reason": "Priority",
                "gres_detail": ["gpu:h100:2", "gpu:h100:1"],
                "array_job_id": {"set": False, "number": 0},
                "array_task_id": 4,
            },
            {"job_id": "abc", "job_state": "PENDING", "gres_detail": [], "nodes": "n9"},
            {"job_id": 15, "tres_per_node": "None"},
            "not a job",
            {"job_id": 14, "job_state": "RUNNING", "array_job_id": 10, "array_task_id": 0},
        ]
    }
    jobs = parse_squeue_json(json.dumps(doc))
    assert [j.model_dump(exclude_none=True) for j in jobs] == [
        {
            "id": "12",
            "name": "train",
            "user": "alice",
            "state": "COMPLETING",
            "partition": "main",
            "nodes": 2,
            "nodelist": "gpu-[1-2]",
            "time_limit": "90 min",
            "gres": "gres/gpu:8",
        },
        {
            "id": "13",
            "name": "",
            "user": "1001",
            "state": "UNKNOWN",
            "reason": "Priority",
            "gres": "gpu:h100:2,gpu:h100:1",
        },
        {"id": "abc", "name": "", "user": "", "state": "PENDING"},  # no nodes while waiting
        {"id": "15", "name": "", "user": "", "state": "UNKNOWN"},
        {"id": "10_0", "name": "", "user": "", "state": "RUNNING"},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("squeue: error", "squeue --json printed invalid JSON: Expecting value: line 1 column 1"),
        ("[]", "squeue --json has no `jobs` list"),
        ('{"jobs": {}}', "squeue --json has no `jobs` list"),
    ],
)
def test_squeue_json_refusals(text: str, message: str) -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_squeue_json(text)
    assert str(info.value).startswith(message)


# --- host lists ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hostlist_text", "hosts"),
    [
        ("login-0,gpu-[1-2]", ["login-0", "gpu-1", "gpu-2"]),
        ("gpu-[1,3-4],cpu", ["gpu-1", "gpu-3", "gpu-4", "cpu"]),
        ("n[a-b,1]x", ["n[a-b]x", "n1x"]),
        ("n[01-a,2]", ["n[01-a]", "n2"]),
        ("n[x-2]", ["n[x-2]"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        (" , a ,,b", ["a", "b"]),
    ],
)
def test_host_lists_expand(hostlist_text: str, hosts: list[str]) -> None:
    assert expand(hostlist_text) == hosts


def test_host_list_ranges_are_capped() -> None:
    assert len(expand(f"n[0-{MAX_HOSTS}]")) == MAX_HOSTS + 1
    assert expand(f"n[0-{MAX_HOSTS + 1}]") == [f"n[0-{MAX_HOSTS + 1}]"]
    offset = expand(f"n[5-{MAX_HOSTS + 5}],m")
    assert (len(offset), offset[0], offset[-1]) == (MAX_HOSTS + 2, "n5", "m")


@pytest.mark.parametrize(
    ("names", "compressed"),
    [
        (["vm", "gpu-1", "gpu-2", "login"], "vm,gpu-[1-2],login"),
        (["gpu-2", "gpu-2", "gpu-1"], "gpu-[1-2]"),
        (["n1", "n2", "n4", "n5", "n7"], "n[1-2,4-5,7]"),
        (["n01", "n1"], "n01,n1"),
    ],
)
def test_host_lists_compress(names: list[str], compressed: str) -> None:
    assert hostlist(names) == compressed


# --- the one-call sinfo table ---------------------------------------------------------------


def row(
    name: str, part: str, compact: str, long: str, avail: str = "up", limit: str = "1:00"
) -> str:
    return f"{name}|{part}|{avail}|{limit}|{compact}|{long}|0/8/0/8|100|(null)|(null)|none\n"


def test_summary_counts_each_node_once_per_partition() -> None:
    text = (
        row("a-1", "main*", "idle~", "idle~")
        + "\n"
        + row("a-2", "main*", "idle", "idle")
        + row("a-2", "main*", "idle", "idle")
        + row("a-7", "main*", "idle", "idle")
        + row("a-9", "main*", "idle", "idle")
        + row("a-3", "main*", "mix", "mixed")
        + row("a-4", "main*", "alloc*", "allocated*")
        + row("a-8", "main*", "comp", "completing")
        + row("a-5", "main*", "drain*", "drained*")
        + row("a-6", "main*", "down", "down")
        + row("a-6", "gpuX", "down", "down", "inact", "2:00")
    )
    nodes, parts, plain = parse_summary(text)
    assert [n.name for n in nodes] == [
        "a-1",
        "a-2",
        "a-7",
        "a-9",
        "a-3",
        "a-4",
        "a-8",
        "a-5",
        "a-6",
    ]
    main, gpu = parts
    assert main.model_dump() == {
        "name": "main",
        "default": True,
        "available": "up",
        "timelimit": "1:00",
        "nodes_total": 9,
        "nodes_allocated": 3,
        "nodes_idle": 4,
        "nodes_other": 2,
        "nodes": ["a-1", "a-2", "a-7", "a-9", "a-3", "a-4", "a-8", "a-5", "a-6"],
        "state_counts": {
            "idle~": 1,
            "idle": 3,
            "mixed": 1,
            "allocated*": 1,
            "completing": 1,
            "drained*": 1,
            "down": 1,
        },
    }
    assert (gpu.name, gpu.default, gpu.available, gpu.timelimit) == ("gpuX", False, "inact", "2:00")
    assert plain.splitlines()[0] == "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"
    assert plain.splitlines()[-1] == "gpuX      inact       2:00      1   down a-6"


def test_summary_names_the_foreign_line() -> None:
    with pytest.raises(SinfoParseError) as info:
        parse_summary(row("a", "main", "idle", "idle") + "PARTITION AVAIL\n")
    assert str(info.value) == "sinfo line 2: expected 11 fields"


def test_summary_with_a_memo_reuses_unchanged_nodes() -> None:
    memo = SinfoMemo()
    text = row("a-1", "main", "idle", "idle") + row("a-2", "main", "idle", "idle")
    first, _, _ = parse_summary(text, memo)
    again, _, _ = parse_summary(
        text.replace("a-2|main|up|1:00|idle|idle", "a-2|main|up|1:00|mix|mixed"), memo
    )
    assert again[0] is first[0] and again[1].state == "mixed"


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("slurm 22.05.8\n", "22.05.8"),
        ("slurm-wlm 23.11.1", "23.11.1"),
        ("slurm 9.1", "9.1"),
        ("slurm", None),
        ("slurm x.1", None),
        ("other 1.0", None),
        ("slurm 22.05 extra", None),
        ("", None),
    ],
)
def test_sinfo_version(text: str, version: str | None) -> None:
    assert parse_version(text) == version


@dataclass
class Result:
    exit_status: int = 0
    stdout: str = ""
    stderr: str = ""


@dataclass(eq=False)  # hashable: the version is remembered per runner
class Runner:
    answers: dict[str, Result]
    asked: list[tuple[str, float]] = field(default_factory=list)

    async def run(self, command: str, *, timeout: float = 0) -> Result:
        self.asked.append((command, timeout))
        return self.answers[command]


class SlottedRunner:
    """A runner that cannot be weakly referenced: its version is asked every time."""

    __slots__ = ("answers", "asked")

    def __init__(self, answers: dict[str, Result]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def run(self, command: str, *, timeout: float = 0) -> Result:
        self.asked.append(command)
        return self.answers[command]

    def __hash__(self) -> int:
        raise TypeError("unhashable")


TABLE = row("b-2", "main*", "idle", "idle") + row("b-1", "main*", "mix", "mixed")


def answers(table: str = TABLE, version: Result | None = None) -> dict[str, Any]:
    return {
        SUMMARY_CMD: Result(stdout=table),
        VERSION_CMD: version or Result(stdout="slurm 22.05.8\n"),
    }


async def test_one_refresh_is_one_sinfo_plus_the_version_once() -> None:
    r = Runner(answers())
    state = await collect_summary(r, host="login", timeout=9)
    assert (state.host, state.version, state.source_format) == ("login", "22.05.8", "delimited")
    assert [n.name for n in state.nodes] == ["b-1", "b-2"]
    assert [(p.name, p.nodes) for p in state.partitions] == [("main", ["b-2", "b-1"])]
    assert state.sinfo_text.splitlines()[1] == "main*        up       1:00      1   idle b-2"
    assert sorted(r.asked) == sorted([(SUMMARY_CMD, 9), (VERSION_CMD, 9)])
    again = await collect_summary(r, host="login", timeout=9)
    assert again.version == "22.05.8"
    assert r.asked[2:] == [(SUMMARY_CMD, 9)]  # the version is asked once per connection


async def test_a_failed_version_probe_is_no_version() -> None:
    r = Runner(answers(version=Result(1, "slurm 22.05.8", "no")))
    assert (await collect_summary(r, host="h", timeout=1)).version is None
    assert (await collect_summary(r, host="h", timeout=1)).version is None


async def test_a_runner_without_weak_references_asks_every_time() -> None:
    r = SlottedRunner(answers())
    for _ in range(2):
        assert (await collect_summary(r, host="h", timeout=1)).version == "22.05.8"
    assert sorted(r.asked) == sorted([SUMMARY_CMD, VERSION_CMD] * 2)


@pytest.mark.parametrize("count", [2, 80])
async def test_a_memo_reuses_nodes_inline_and_off_the_loop(count: int) -> None:
    table = "".join(row(f"c-{i:04}", "main", "idle", "idle") for i in range(count))
    assert (len(table) > INLINE_PARSE_BYTES) is (count == 80)  # the big one parses in a thread
    memo = SinfoMemo()
    r = Runner(answers(table))
    first = await collect_summary(r, host="h", timeout=1, memo=memo)
    again = await collect_summary(r, host="h", timeout=1, memo=memo)
    assert len(again.nodes) == count and again.partitions[0].nodes_total == count
    assert all(a is b for a, b in zip(first.nodes, again.nodes, strict=True))


async def test_an_unhashable_runner_asks_for_the_version_every_time() -> None:
    @dataclass  # eq=True: weakly referenceable but not hashable
    class Unhashable:
        answers: dict[str, Result]
        asked: list[str] = field(default_factory=list)

        async def run(self, command: str, *, timeout: float = 0) -> Result:
            self.asked.append(command)
            return self.answers[command]

    r = Unhashable(answers())
    for _ in range(2):
        assert (await collect_summary(r, host="h", timeout=1)).version == "22.05.8"
    assert sorted(r.asked) == sorted([SUMMARY_CMD, VERSION_CMD] * 2)


async def test_a_failing_sinfo_is_reported() -> None:
    r = Runner({**answers(), SUMMARY_CMD: Result(1, "", "slurm_load_node: error")})
    with pytest.raises(SlurmCommandFailed) as info:
        await collect_summary(r, host="h", timeout=1)
    assert str(info.value) == f"`{SUMMARY_CMD}` exited 1: slurm_load_node: error"
