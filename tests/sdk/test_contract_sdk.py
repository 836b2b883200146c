"""The existing npa SDK's contract (`npa.sdk.soperator`, `npa.sdk.fleet`): every name, the
dataclass positional order, its keywords, exception types and result fields, in the sandbox.

Where this SDK does more (typed results, events), npa's form still works: results answer
`result["field"]`, an incomplete destroy is returned, `plan(spec)` makes no provider call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa.sdk import soperator
from npa_sop_tui.sandbox.cluster_api import CRD, SCRIPTS
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

from testkit.fleets import ROOT_KEY, spec_mapping

NPA_SOPERATOR_NAMES = (
    "deploy",
    "destroy",
    "plan",
    "status",
    "apply_post_deploy_fixes",
    "DeploymentValidationFailure",
    "SoperatorDeploymentValidationError",
    "SoperatorStateCaptureError",
    "SoperatorSpec",
    "WorkerPoolSpec",
    "load_spec",
    "spec_from_mapping",
)


def test_every_npa_name_is_exported() -> None:
    assert set(NPA_SOPERATOR_NAMES) <= set(soperator.__all__)
    for name in NPA_SOPERATOR_NAMES:
        assert getattr(soperator, name) is not None
    from npa.sdk import fleet

    for name in ("plan", "deploy", "destroy", "status", "load_spec", "spec_from_mapping"):
        assert callable(getattr(fleet, name)), name


def test_positional_order_is_the_dataclasses() -> None:
    pool = soperator.WorkerPoolSpec("cpu", "cpu-d3", "8vcpu-32gb", 2, 640, "", True, True, 93)
    assert (pool.name, pool.platform, pool.preset, pool.size) == ("cpu", "cpu-d3", "8vcpu-32gb", 2)
    assert (pool.boot_disk_gib, pool.fabric, pool.preemptible) == (640, None, True)
    assert (pool.docker_cache, pool.docker_cache_gib) == (True, 93)

    spec = soperator.SoperatorSpec(
        "demo", "eu-north1", "tenant-e00a", "project-e00a", "", [], 4, None, None, "32vcpu-128gb"
    )
    assert (spec.name, spec.region, spec.tenant_id, spec.project_id) == (
        "demo",
        "eu-north1",
        "tenant-e00a",
        "project-e00a",
    )
    assert spec.subnet_id is None  # "" is npa's "resolve at deploy"
    assert spec.control_plane.system.min_size == 4 and spec.system_min_size == 4
    assert spec.login_preset == "32vcpu-128gb"
    # the 11th positional is the workers, the 19th the root key (npa appended new fields)
    args: list[Any] = ["demo", "", "", "", "", [], 3, None, None, "16vcpu-64gb", [pool]]
    args += [True, False, True, 512, "4.1.6", "1.34", "72", ROOT_KEY, 30, None, True]
    full = soperator.SoperatorSpec(*args)
    assert full.workers == [pool] and full.accounting and full.use_default_apparmor_profile
    assert full.root_login_ssh_public_key == ROOT_KEY
    assert full.system_max_size == 30 and full.slurm_rest_enabled is True
    with pytest.raises(TypeError, match="at most 22 positional"):
        soperator.SoperatorSpec(*args, "extra")


def test_flat_control_plane_keywords() -> None:
    spec = soperator.SoperatorSpec(
        name="demo",
        system_min_size=5,
        system_max_size=9,
        system_preset="16vcpu-64gb",
        controller_preset="16vcpu-64gb",
        login_preset="32vcpu-128gb",
        accounting_preset="8vcpu-32gb",
        workers=[soperator.WorkerPoolSpec("cpu")],
    )
    system = spec.control_plane.system
    assert (system.min_size, system.max_size, system.preset) == (5, 9, "16vcpu-64gb")
    assert spec.control_plane.controller.preset == "16vcpu-64gb"
    assert spec.control_plane.login.preset == "32vcpu-128gb"
    assert spec.control_plane.accounting.preset == "8vcpu-32gb"
    with pytest.raises(TypeError, match=r"login_preset and control_plane\.login\.preset"):
        soperator.SoperatorSpec(
            name="demo", login_preset="x", control_plane={"login": {"preset": "y"}}
        )


def test_npa_dataclass_methods() -> None:
    spec = soperator.SoperatorSpec(
        "demo", workers=[soperator.WorkerPoolSpec("cpu")], ssh_public_keys=[ROOT_KEY]
    )
    spec.validate()
    assert spec.effective_system_max_size() == 24
    assert spec.effective_slurm_rest_enabled() is False
    assert spec.explicit_root_login_ssh_public_key() == ROOT_KEY
    assert spec.workers[0].capacity_mode() == "on-demand"
    assert spec.workers[0].is_gpu() is False  # a method, as npa's
    assert soperator.WorkerPoolSpec("g", "gpu-h200-sxm", "8gpu-128vcpu-1600gb").is_gpu()
    with pytest.raises(ValueError, match="at least one worker pool"):
        soperator.SoperatorSpec("demo").validate()


def test_exception_types() -> None:
    assert issubclass(soperator.SoperatorSpecError, ValueError)
    assert issubclass(soperator.SoperatorStateCaptureError, RuntimeError)
    assert issubclass(soperator.SoperatorDeploymentValidationError, RuntimeError)
    failure = soperator.DeploymentValidationFailure(
        code="gpu_creation_check_failed", message="no GPUs", check="gpu-creation", pool="gpu"
    )
    assert failure.to_dict() == {
        "status": "failed",
        "code": "gpu_creation_check_failed",
        "check": "gpu-creation",
        "message": "no GPUs",
        "pool": "gpu",
    }
    capture = soperator.SoperatorStateCaptureError("demo", "state unreadable")
    assert capture.result["status"] == "deployed-state-capture-failed"
    assert capture.result["deployment_status"] == "applied" and capture.result["recovery"]


def test_load_spec_and_spec_from_mapping(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: demo\n"
        "workers:\n  - {name: cpu, platform: cpu-d3, preset: 8vcpu-32gb, size: 2}\n"
    )
    spec = soperator.load_spec(path)
    assert isinstance(spec, soperator.SoperatorSpec) and spec.workers[0].size == 2
    assert soperator.spec_from_mapping(spec_mapping("demo")).name == "demo"
    path.write_text("apiVersion: npa.soperator/v0.0.1\nname: demo\nworkers: []\n")
    with pytest.raises(ValueError, match="worker"):  # npa's callers catch ValueError
        soperator.load_spec(path)
    with pytest.raises(soperator.SoperatorSpecError, match="apiVersion"):
        soperator.spec_from_mapping({"apiVersion": "npa.soperator/v9", "name": "demo"})


def test_plan_without_identity_makes_no_provider_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from npa_sop_tui.lifecycle import api as lifecycle

    async def no_lifecycle(*_a: Any, **_k: Any) -> None:
        raise AssertionError("plan(spec) must not run Terraform or ask a provider")

    monkeypatch.setattr(lifecycle, "plan", no_lifecycle)
    reserved = spec_mapping("demo")
    reserved["workers"].append(
        {
            "name": "gpu",
            "platform": "gpu-h100-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "fabric": "fabric-2",
            "capacity_block_group_name": "team-block",
        }
    )
    plan = soperator.plan(soperator.spec_from_mapping(reserved))
    assert plan["region"] == "(resolve-at-deploy)" and plan["provider_mutation"] is False
    assert plan["control_plane"] == {"system_min_size": 3, "system_max_size": 24}
    assert plan["reservation_preflight"] == "required"
    gpu = plan["workers"][1]
    assert gpu["capacity_mode"] == "reserved" and gpu["reservation_selector"] == "name"
    assert gpu["reservation_verified"] is False and "team-block" not in str(plan.model_dump())
    assert plan["workers"][0]["reservation_verified"] is None
    located = soperator.plan({**spec_mapping("demo"), "region": "eu-north1"})
    assert located.region == "eu-north1"
    # read like npa's dict: membership, get, keys/items, and json.dumps of dict(plan)
    assert "region" in plan and "nope" not in plan and plan.get("nope", 7) == 7
    assert json.loads(json.dumps(dict(plan))) == plan.model_dump(mode="json")
    assert dict(plan.items())["name"] == "demo" and plan.keys() == list(dict(plan))
    with pytest.raises(ValueError, match="at least one worker"):
        soperator.plan({**spec_mapping("demo"), "workers": []})


def test_status_of_an_unknown_sandbox_cluster_is_a_clear_error() -> None:
    with pytest.raises(soperator.UsageError, match="no sandbox cluster named 'ghost'") as info:
        soperator.status("ghost", sandbox=True)
    assert info.value.exit_code == 2


def test_apply_post_deploy_fixes_returns_warnings(tmp_path: Path) -> None:
    context = "nebius-fix-slurm"
    lines: list[str] = []
    with FakeKubeServer() as server:
        server.add("customresourcedefinitions", CRD)
        server.add("configmaps", SCRIPTS)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", context)
        warnings = soperator.apply_post_deploy_fixes(
            context, "kubectl", on_status=lines.append, kubeconfig=kubeconfig
        )
        assert warnings == [] and len(lines) == 2
        assert server.get("configmaps", "soperator-slurm-scripts") is not None
    broken = soperator.apply_post_deploy_fixes(context, "kubectl", kubeconfig=tmp_path / "none")
    assert len(broken) == 2 and all("failed" in w for w in broken)


@pytest.mark.terraform
@pytest.mark.usefixtures("fast_standin")
def test_deploy_status_destroy_with_npa_keywords_and_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "root.pub"
    key_file.write_text(ROOT_KEY + "\n")
    spec = soperator.spec_from_mapping(
        {
            "name": "contract-demo",
            "workers": [
                {"name": "cpu", "size": 2, "docker_cache": True, "docker_cache_gib": 93},
            ],
        }
    )
    lines: list[str] = []
    result = soperator.deploy(
        spec,
        sandbox=True,
        root_login_ssh_public_key_file=str(key_file),
        stream_terraform_output=True,
        timeout_minutes=30,
        gpu_creation_check_timeout_seconds=600,
        apply_fixes=True,
        on_status=lines.append,
        provider_preflight=True,  # npa's apply-request fields its deploy does not read
        provider_env={"NEBIUS_PROFILE": "x"},
    )
    assert result["status"] == "ready" and result["deployment_status"] == "applied"
    assert result["backend"] == "soperator"
    assert result["region"] and result["project_id"].startswith("project-")
    assert result["worker_pools"] == ["cpu"] and result["docker_cache_pools"] == ["cpu"]
    assert result["control_plane"] == {"system_min_size": 3, "system_max_size": 24}
    assert result["workers"][0]["capacity_mode"] == "on-demand"
    guard = result["replacement_guard"]
    assert guard["status"] == "passed" and guard["replacement_count"] == 0
    assert guard["plans_checked"] >= 1
    assert result["kube_context"] == "nebius-contract-demo-slurm"
    assert any(line.startswith(("Apply complete", "module.")) for line in lines), lines[:20]

    assert "install_dir" in result and json.loads(json.dumps(dict(result)))["name"]
    snap = soperator.status("contract-demo", sandbox=True)
    assert snap["status"] == "running" and snap["backend"] == "soperator"
    assert "backend" in snap and snap.get("status") == "running"
    assert json.loads(json.dumps(dict(snap)))["backend"] == "soperator"
    assert snap["name"] == "contract-demo" and snap["context"] == "nebius-contract-demo-slurm"

    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "destroy-leftover")
    gone = soperator.destroy("contract-demo", sandbox=True)
    assert gone["status"] == "destroy-incomplete" and gone["errors"]
    with pytest.raises(soperator.DestroyIncomplete):
        soperator.destroy("contract-demo", sandbox=True, raise_incomplete=True)
    with pytest.raises(soperator.UsageError, match="provider_env"):  # not a destroy keyword
        soperator.destroy("contract-demo", sandbox=True, provider_env={})
