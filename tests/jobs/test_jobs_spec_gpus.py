"""The default GPUs of a job from the deployed spec (jobs/spec_gpus.py)."""

from __future__ import annotations

import logging

import pytest

from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.jobs.spec_gpus import fill_default_gpus, spec_pool_gpus

HEAD = "apiVersion: npa.soperator/v0.0.1\nname: demo\nregion: eu-north1\nworkers:\n"
H100 = "  - {name: h100, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, size: 2}\n"
CPU = "  - {name: cpu, platform: cpu-d3, preset: 16vcpu-64gb, size: 2}\n"


@pytest.mark.parametrize(
    ("spec", "found"),
    [
        (HEAD + H100, ("h100", 8)),
        (HEAD + CPU, ("cpu", 0)),
        (HEAD + H100 + CPU, None),  # two pools: the default partition may hold either
        (HEAD, None),
        (None, None),
        ("workers: [", None),  # not YAML
        ("- a\n", None),
        (HEAD + "  - {name: x, platform: gpu-h100-sxm}\n", None),  # no preset
    ],
)
def test_the_spec_decides_only_with_one_complete_pool(spec: str | None, found: object) -> None:
    assert spec_pool_gpus(spec) == found


def test_a_command_gets_all_gpus_of_the_single_pool_and_the_debug_log_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    request = JobRequest(command="true")
    with caplog.at_level(logging.DEBUG, logger="npa_sop_tui.jobs.spec_gpus"):
        assert fill_default_gpus(request, HEAD + H100, pool=None) == "spec pool h100"
    assert request.gpus_per_node == 8 and not request.auto_gpus
    assert "default GPUs per node from spec pool h100: 8" in caplog.text


def test_a_cpu_pool_gets_no_gpu_option() -> None:
    from npa_sop_tui.jobs.script import sbatch_options

    request = JobRequest(command="true")
    fill_default_gpus(request, HEAD + CPU, pool=None)
    assert request.gpus_per_node == 0
    assert not any(o.startswith("--gpus") for o in sbatch_options(request))


@pytest.mark.parametrize(
    ("request_", "pool", "spec"),
    [
        (JobRequest(command="true"), "h100", HEAD + H100),  # a pool: its nodes from Slurm
        (JobRequest(command="true", partition="p"), None, HEAD + H100),
        (JobRequest(command="true", all_nodes=True), None, HEAD + H100),
        (JobRequest(command="true"), None, HEAD + H100 + CPU),
        (JobRequest(command="true"), None, None),
    ],
)
def test_otherwise_slurm_is_asked(
    request_: JobRequest, pool: str | None, spec: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="npa_sop_tui.jobs.spec_gpus"):
        assert fill_default_gpus(request_, spec, pool=pool) == "slurm"
    assert request_.gpus_per_node is None and request_.auto_gpus
    assert "from slurm" in caplog.text


def test_given_gpus_are_kept() -> None:
    request = JobRequest(command="true", gpus_per_node=2)
    assert fill_default_gpus(request, HEAD + H100, pool=None) == "given"
    assert request.gpus_per_node == 2
