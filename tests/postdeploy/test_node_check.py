"""Reading a node's check output: markers, the health checker's JSON in both layouts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from npa_sop_tui.postdeploy.node_check import node_script, read_node_output

HEAD = (
    "NPA_GPU_CHECK node=w-0 stage=gpus count=8 name=NVIDIA H100 80GB HBM3\n"
    "NPA_GPU_CHECK node=w-0 stage=health-checker platform=8xH100\n"
)
TAIL = "NPA_GPU_CHECK node=w-0 stage=done rc={rc}\n"
TESTS = ["deviceQuery", "vectorAdd", "simpleMultiGPU", "p2pBandwidthLatencyTest"]


def doc(status: str, failing: str | None = None) -> dict[str, object]:
    tests = []
    for name in TESTS:
        state = {"status": "FAIL", "error": "boom"} if name == failing else {"status": "PASS"}
        tests.append({"name": name, "checks": [{"name": "result", "state": state}]})
    return {"status": status, "tests": tests}


def test_one_line_json_pass() -> None:
    out = HEAD + json.dumps(doc("PASS")) + "\n" + TAIL.format(rc=0)
    outcome = read_node_output("w-0", 8, 0, out, "")
    assert (outcome.status, outcome.gpus, outcome.tests) == ("PASS", 8, TESTS)


def test_pretty_json_with_log_noise_fail() -> None:
    body = "INFO starting\n" + json.dumps(doc("FAIL", "simpleMultiGPU"), indent=2) + "\n"
    outcome = read_node_output("w-0", 8, 0, HEAD + body + TAIL.format(rc=1), "")
    assert (outcome.status, outcome.check, outcome.message) == (
        "FAIL", "simpleMultiGPU.result", "boom",
    )  # fmt: skip


def test_srun_error_and_unsupported_gpu() -> None:
    srun = read_node_output("w-0", 8, 1, "", "srun: error: Unable to allocate resources: x\n")
    assert (srun.check, srun.message) == ("srun", "srun: error: Unable to allocate resources: x")
    odd = read_node_output(
        "w-0", 8, 1,
        "NPA_GPU_CHECK node=w-0 stage=platform status=FAIL message=unsupported GPU 'Tesla T4'\n",
        "",
    )  # fmt: skip
    assert (odd.check, odd.message) == ("platform", "unsupported GPU 'Tesla T4'")


def test_missing_result_is_a_failure() -> None:
    outcome = read_node_output("w-0", 8, 0, HEAD + "garbage\n" + TAIL.format(rc=137), "")
    assert (outcome.status, outcome.check, outcome.message) == (
        "FAIL", "health-checker", "exit 137, no JSON result",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "gpus", "platform"),
    [
        ("NVIDIA B200", 8, "8xB200"),
        ("NVIDIA GB200", 8, None),  # not a B200: no platform of its own here
        ("NVIDIA GB300", 4, "4xGB300"),
        ("NVIDIA B300 SXM6 AC", 8, "8xB300"),
        ("NVIDIA H100 80GB HBM3", 8, "8xH100"),
        ("NVIDIA H100 80GB HBM3", 1, "1xH100"),  # a 1-GPU preset: the preset's count
        ("NVIDIA H200", 1, "1xH200"),
    ],
)
def test_the_node_script_matches_the_gpu_model_exactly(
    tmp_path: Path, name: str, gpus: int, platform: str | None
) -> None:
    """The real node script, run by bash with the fake GPU tools on PATH."""
    from npa_sop_tui.sandbox.slurm_login import install_tools

    bin_dir = install_tools(tmp_path / "tools")
    behaviour = tmp_path / "behaviour"
    behaviour.mkdir()
    (behaviour / "w-0").write_text(f"gpus={gpus}\nname={name}\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SLURMD_NODENAME": "w-0",
           "NPA_FAKE_GPU_DIR": str(behaviour), "HOME": str(tmp_path)}  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", node_script(gpus)], env=env, capture_output=True, text=True, timeout=60
    )
    if platform is None:
        assert f"stage=platform status=FAIL message=unsupported GPU '{name}'" in done.stdout
        assert done.returncode == 1
    else:
        assert f"stage=health-checker platform={platform}\n" in done.stdout
