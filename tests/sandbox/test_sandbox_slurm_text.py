"""The sandbox login node prints what Slurm 25.11 prints, and npa's parsers read it back."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from npa_sop_tui.sandbox.slurm_login import SimulatedLogin
from npa_sop_tui.sandbox.slurm_text import show_node_line, sinfo_json, summary_text
from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.scontrol import parse_show_node
from npa_sop_tui.status.sinfo_json import parse_sinfo_json
from npa_sop_tui.status.sinfo_summary import parse_summary, parse_version


def _nodes() -> list[SlurmNode]:
    return [
        SlurmNode(name="gpu-0", state="idle", display="idle", cpus=16, cpus_allocated=0,
                  memory_mb=1000, gres="gpu:8"),
        SlurmNode(name="gpu-1", state="drained", display="drained*",
                  flags=["DRAIN", "NOT_RESPONDING"], cpus=16, memory_mb=1000, gres="gpu:8",
                  reason="xid 79"),
    ]  # fmt: skip


def test_json_is_v0044_and_agrees_with_the_table() -> None:
    text = sinfo_json(_nodes())
    doc = json.loads(text)
    assert doc["meta"]["plugin"] == {"type": "", "name": "", "data_parser": "data_parser/v0.0.44"}
    assert doc["meta"]["slurm"]["release"] == "25.11.3"
    drained = next(g for g in doc["sinfo"] if g["nodes"]["nodes"] == ["gpu-1"])
    assert drained["node"]["state"] == ["IDLE", "DRAIN", "NOT_RESPONDING"]
    assert drained["reason"]["description"] == "xid 79"
    parsed = parse_sinfo_json(text)
    assert (parsed.version, parsed.data_parser) == ("25.11.3", "v0.0.44")
    table, parts, _ = parse_summary(summary_text(_nodes()))
    assert [p.name for p in parts] == ["main", "hidden"]
    assert [n.model_dump() for n in parsed.nodes] == [n.model_dump() for n in table]
    assert table[1].reason == "xid 79" and table[1].display == "drained*"


def test_scontrol_line_reads_back() -> None:
    line = show_node_line(_nodes()[1], reason_by="root", reason_time="2026-12-01T10:00:00",
                          nodeset="gpu")  # fmt: skip
    node = parse_show_node(line)
    assert node.state == "IDLE+DRAIN+NOT_RESPONDING"
    assert (node.reason, node.reason_by, node.reason_time) == (
        "xid 79",
        "root",
        "2026-12-01T10:00:00",
    )
    assert node.partitions == ["main", "hidden"] and node.fields["Version"] == "25.11.3"
    assert node.fields["InstanceId"] == "computeinstance-gpu-1"


async def test_login_node_answers_version_all_partitions_json_and_scontrol(
    tmp_path: Path,
) -> None:
    pool = SimpleNamespace(
        name="gpu", size=2, is_gpu=lambda: True, gpus_per_node=8, platform="gpu-h100-sxm"
    )
    login = SimulatedLogin(SimpleNamespace(workers=[pool]), tmp_path)
    version = await login.run("sinfo -V", timeout=5)
    assert parse_version(version.stdout) == "25.11.3"
    # as root (Soperator's login user) Slurm lists hidden partitions even without -a
    for command in ("sinfo -h -N -o '%N|%T'", "sinfo -h -N -a -o '%N|%T'"):
        listed = await login.run(command, timeout=5)
        assert listed.stdout == "gpu-0|idle\ngpu-0|idle\ngpu-1|idle\ngpu-1|idle\n"
    js = parse_sinfo_json((await login.run("sinfo -a --json=v0.0.44", timeout=5)).stdout)
    assert sorted(n.name for n in js.nodes) == ["gpu-0", "gpu-1"]
    shown = await login.run("scontrol show node gpu-1 -o", timeout=5)
    assert parse_show_node(shown.stdout).fields["Extra"] == '{"nodeset": "gpu"}'
    missing = await login.run("scontrol show node gpu-7 -o", timeout=5)
    assert missing.exit_status == 1 and "not found" in missing.stderr
