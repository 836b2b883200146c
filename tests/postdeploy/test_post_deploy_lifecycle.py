"""Deploy with the post-deploy step: the gate on real Slurm through the CLI, exit codes and
the result fields; the sandbox's simulated login node; --skip-fixes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main as cli_main
from npa_sop_tui.home import inventory
from npa_sop_tui.postdeploy.run import run_post_deploy
from npa_sop_tui.sandbox.slurm_login import SimulatedLogin
from npa_sop_tui.spec.model import spec_from_mapping

from .conftest import GpuLab

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
SPEC = f"""apiVersion: npa.soperator/v0.0.1
name: gated
root_login_ssh_public_key: {KEY}
workers:
  - {{name: gpu, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, fabric: fabric-3, size: 2}}
"""


@pytest.mark.slurm
@pytest.mark.terraform
@pytest.mark.slow
def test_cli_deploy_gate_on_real_slurm(
    gpu_lab: GpuLab, sandbox_in_home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The sandbox recipe, but the login node is the GPU lab's (config login.host)."""
    (sandbox_in_home / "config.yaml").write_text(
        "region: eu-north1\ntenant_id: tenant-gate\nproject_id: project-gate\n"
        "subnet_id: vpcsubnet-gate\n"
        f"ssh_private_key_path: {gpu_lab.key}\n"
        f"login: {{host: {gpu_lab.host}, port: {gpu_lab.port}, user: {gpu_lab.user}}}\n"
    )
    spec = tmp_path / "gated.yaml"
    spec.write_text(SPEC)
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    deploy = ["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "-o", "ndjson"]

    gpu_lab.node("gpu-1", fail="p2pBandwidthLatencyTest")
    assert cli_main(deploy) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    final = json.loads(lines[-1])
    result = final["result"]
    assert final["ok"] is False and result["status"] == "degraded-validation"
    assert final["status"] == "degraded-validation"  # npa's shape: the result at the top
    assert result["deployment_status"] == "applied"
    assert result["validation"]["node"] == "gpu-1" and result["validation"]["cleanup_confirmed"]
    (check,) = result["gpu_creation_checks"]
    assert (check["pool"], check["status"], check["gpus_per_node"]) == ("gpu", "FAIL", 8)
    kinds = [json.loads(x)["kind"] for x in lines[:-1]]
    assert "gpu_check" in kinds and "repair" in kinds  # live events in the NDJSON stream
    assert inventory.require("gated").state == "degraded-validation"

    gpu_lab.node("gpu-1")  # healthy again; --skip-fixes still runs the gate
    assert cli_main([*deploy, "--skip-fixes"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    result = json.loads(lines[-1])["result"]
    assert (result["status"], result["post_deploy_fixes"]) == ("ready", "skipped")
    assert result["validation"] == {**result["validation"], "status": "passed"}
    assert result["gpu_creation_checks"][0]["nodes"] == ["gpu-0", "gpu-1"]
    assert "repair" not in [json.loads(x)["kind"] for x in lines[:-1]]
    entry = inventory.require("gated")
    assert entry.state == "deployed" and entry.validation is not None
    assert entry.validation["status"] == "ready"


async def test_sandbox_login_node_runs_the_real_script(tmp_path: Path) -> None:
    spec = spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "sim",
         "workers": [{"name": "big", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
                      "fabric": "fabric-3", "size": 3}, {"name": "cpu", "size": 1}]}
    )  # fmt: skip
    seen: list[Any] = []
    ok = await run_post_deploy(
        spec, shell=SimulatedLogin(spec, tmp_path / "ok"), kubeconfig=None, context="x",
        apply_fixes=False, gpu_timeout=60, on_repair=seen.append,
        on_gpu=lambda **f: seen.append(f),
    )  # fmt: skip
    assert ok.status == "ready" and ok.gpu_creation_checks[0].nodes == ["big-0", "big-1", "big-2"]
    login = SimulatedLogin(spec, tmp_path / "bad", scenario={"gpu-check-fail"})
    bad = await run_post_deploy(
        spec, shell=login, kubeconfig=None, context="x", apply_fixes=True, gpu_timeout=60,
        on_repair=seen.append, on_gpu=lambda **f: seen.append(f),
    )  # fmt: skip
    assert bad.status == "degraded-validation"
    assert (bad.validation.node, bad.gpu_creation_checks[0].failures[0].check) == (
        "big-2", "vectorAdd.result",
    )  # fmt: skip
    assert any(c.startswith("scancel --name=npa-gpu-check-") for c in login.commands)
