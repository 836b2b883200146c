"""Parsers for the operator actions: squeue (JSON and table), scontrol show node -o, sacct,
hostlists. Inputs are shaped like Slurm 22.05's real output (and newer JSON)."""

from __future__ import annotations

import json

import pytest

from npa_sop_tui.status.hostlist import expand
from npa_sop_tui.status.sacct import parse_sacct_delimited, parse_sacct_json
from npa_sop_tui.status.scontrol import parse_show_node
from npa_sop_tui.status.slurm import SinfoParseError
from npa_sop_tui.status.squeue import (
    active_jobs,
    jobs_on,
    parse_squeue_delimited,
    parse_squeue_json,
)

SHOW_NODE_DRAINED = (
    "NodeName=gpu-003 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=128 CPUTot=128 CPULoad=N/A "
    "AvailableFeatures=gpu_h100_sxm,network_ssd ActiveFeatures=gpu_h100_sxm,network_ssd "
    "Gres=gpu:h100:8 NodeAddr=127.0.0.1 NodeHostName=gpu-003 Port=6899  RealMemory=1000000 "
    "AllocMem=0 FreeMem=N/A Sockets=128 Boards=1 State=IDLE+DRAIN+NOT_RESPONDING "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=main  "
    "BootTime=None SlurmdStartTime=None LastBusyTime=2026-12-01T05:03:43 "
    "CfgTRES=cpu=128,mem=1000000M,billing=128 AllocTRES= CapWatts=n/a CurrentWatts=0 "
    "AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=[node_problem] xid 79 A=B on gpu 3 [root@2026-12-01T05:04:15]\n"
)


def test_show_node_reads_state_reason_who_and_when() -> None:
    node = parse_show_node(SHOW_NODE_DRAINED)
    assert node.name == "gpu-003" and node.state == "IDLE+DRAIN+NOT_RESPONDING"
    assert node.reason == "[node_problem] xid 79 A=B on gpu 3"
    assert (node.reason_by, node.reason_time) == ("root", "2026-12-01T05:04:15")
    assert node.cpus == 128 and node.cpus_allocated == 0 and node.memory_mb == 1000000
    assert node.gres == "gpu:h100:8" and node.partitions == ["main"]
    assert node.features == ["gpu_h100_sxm", "network_ssd"]
    assert node.fields["CfgTRES"] == "cpu=128,mem=1000000M,billing=128"
    assert node.fields["AllocTRES"] == ""


def test_show_node_without_reason_and_garbage() -> None:
    node = parse_show_node("NodeName=vm Arch=x86_64 CPUTot=2 State=IDLE Partitions=main,debug\n")
    assert node.reason is None and node.partitions == ["main", "debug"]
    with pytest.raises(SinfoParseError):
        parse_show_node("Node nope not found\n")


def test_squeue_table_keeps_pipes_in_job_names() -> None:
    text = (
        "12|train|a|b|alice|RUNNING|1:02:03|2|gpu-[001-002]|gpu:8|main|UNLIMITED\n"
        "13|eval|bob|PENDING|0:00|1|(Resources)|N/A|main|30:00\n"
    )
    running, pending = parse_squeue_delimited(text)
    assert running.name == "train|a|b" and running.user == "alice"
    assert running.nodelist == "gpu-[001-002]" and running.reason is None
    assert running.nodes == 2 and running.gres == "gpu:8" and running.elapsed == "1:02:03"
    assert pending.reason == "Resources" and pending.nodelist is None and pending.gres is None
    assert [j.id for j in jobs_on([running, pending], "gpu-002")] == ["12"]


def test_squeue_json_old_and_new_shapes() -> None:
    old = {
        "jobs": [
            {
                "job_id": 1,
                "name": "probe",
                "user_name": "slurmops",
                "job_state": "PENDING",
                "partition": "main",
                "nodes": "",
                "node_count": 1,
                "state_reason": "None",
                "time_limit": None,
                "tres_per_node": "",
                "gres_detail": [],
            },
            {
                "job_id": 2,
                "name": "done",
                "user_name": "x",
                "job_state": "COMPLETED",
                "node_count": 1,
            },
        ]
    }
    new = {
        "jobs": [
            {
                "job_id": 7,
                "array_job_id": {"set": True, "number": 5},
                "array_task_id": {"set": True, "number": 2},
                "name": "arr",
                "user_name": "u",
                "job_state": ["RUNNING"],
                "nodes": "n1",
                "node_count": {"set": True, "number": 1},
                "time_limit": {"set": True, "infinite": False, "number": 60},
            },
        ]
    }
    jobs = parse_squeue_json(json.dumps(old))
    assert [j.id for j in active_jobs(jobs)] == ["1"]  # finished jobs are left out
    assert jobs[0].reason is None  # "None" is Slurm for no reason
    (arr,) = parse_squeue_json(json.dumps(new))
    assert arr.id == "5_2" and arr.state == "RUNNING" and arr.nodelist == "n1"
    assert arr.time_limit == "60 min"
    with pytest.raises(SinfoParseError):
        parse_squeue_json("{}")


def test_sacct_history_and_accounting_off() -> None:
    off = parse_sacct_delimited("Slurm accounting storage is disabled\n")
    assert not off.available and "disabled" in (off.note or "")
    text = (
        "41|train|alice|COMPLETED|main|2|gpu-[001-002]|01:00:00|2026-12-01T01:00:00|"
        "2026-12-01T02:00:00|0:0\n"
        "42|eval|bob|CANCELLED by 0|main|1|None assigned|00:00:00|Unknown|"
        "2026-12-01T02:01:00|0:0\n"
    )
    history = parse_sacct_delimited(text)
    assert history.available and [j.state for j in history.jobs] == ["COMPLETED", "CANCELLED"]
    assert history.jobs[1].nodelist is None and history.jobs[0].exit_code == "0:0"
    doc = {
        "jobs": [
            {
                "job_id": 9,
                "name": "x",
                "user": "u",
                "state": {"current": ["FAILED"]},
                "time": {"elapsed": 12},
                "exit_code": {"return_code": {"set": True, "number": 1}},
            }
        ]
    }
    (job,) = parse_sacct_json(json.dumps(doc)).jobs
    assert (job.id, job.state, job.elapsed, job.exit_code) == ("9", "FAILED", "12s", "1")


def test_hostlists() -> None:
    assert expand("gpu-[001-003,007],login-0") == [
        "gpu-001",
        "gpu-002",
        "gpu-003",
        "gpu-007",
        "login-0",
    ]
    assert expand("a[1-2]b") == ["a1b", "a2b"] and expand("") == []


def test_memoised_parse_reuses_unchanged_nodes_and_matches_a_full_parse() -> None:
    from npa_sop_tui.status.sinfo_memo import SinfoMemo
    from npa_sop_tui.status.slurm import diff_nodes, parse_nodes_delimited

    def text(down: set[int]) -> str:
        return "".join(
            f"w-{i}|{part}|{'down*' if i in down else 'idle'}|0/8/0/8|1000|(null)|(null)|"
            f"{'Not responding' if i in down else 'none'}\n"
            for i in range(50)
            for part in ("main*", "hidden")
        )

    memo = SinfoMemo()
    first = memo.parse_nodes(text(set()))
    second = memo.parse_nodes(text({3, 7}))
    assert second == parse_nodes_delimited(text({3, 7}))  # same result as a full parse
    same = [a is b for a, b in zip(first, second, strict=True)]
    assert same.count(False) == 2 and not same[3] and not same[7]
    assert diff_nodes(first, second).changed == ["w-3", "w-7"]
    assert second[0].partitions == ["main", "hidden"]
