"""End to end with the real Terraform (PyPI 1.0.3) on the stand-in recipe."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main as cli_main
from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import parse_event
from npa_sop_tui.home import inventory
from npa_sop_tui.home.config import Identity
from npa_sop_tui.home.locks import ClusterBusy, ClusterLock, is_locked
from npa_sop_tui.lifecycle import api as lifecycle

SECRET_ID = "capacityblockgroup-e2esecret42"


@pytest.mark.terraform
@pytest.mark.slow
async def test_lifecycle_plan_deploy_list_destroy(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    spec = make_spec("flow")
    opts = sandbox_options(capacity={"gpu": SECRET_ID})

    planned = await lifecycle.plan(spec, options=opts, on_event=recorder)
    assert planned.changes.add == 25 and planned.changes.remove == 0
    assert set(planned.changes.by_module) == {"module.k8s", "module.slurm", "module.login_script"}
    assert inventory.get("flow") is None  # a plan alone does not create a cluster record
    assert recorder.kinds("operation_finished")[-1].result == "ok"

    recorder.events.clear()
    result = await lifecycle.deploy(spec, options=opts, on_event=recorder)
    phases = recorder.phases()
    assert phases.index("apply:k8s") < phases.index("plan:full") < phases.index("apply:full")
    assert result.phases[:6] == [
        "preflight",
        "init",
        "plan:k8s",
        "apply:k8s",
        "plan:full",
        "apply:full",
    ]
    k8s_summary, full_summary = recorder.kinds("plan_summary")
    assert set(k8s_summary.by_module) == {"module.k8s"}  # phase 1 is targeted
    assert {p.pool for p in k8s_summary.pools} == {"cpu", "gpu"}
    finished = recorder.kinds("resource_finished")
    assert len(finished) == k8s_summary.total + full_summary.total == result.resources == 25
    assert result.outputs == {}  # like the real root module (soperator/ at 9a187732)
    assert result.kube_context == "nebius-flow-slurm"
    assert recorder.kinds("recipe_resolved")[0].origin == "sandbox"
    assert recorder.events[-1].kind == "operation_finished"
    assert recorder.events[-1].result == "ok"
    assert not is_locked("flow")

    # inventory and files
    (entry,) = lifecycle.list_clusters()
    assert entry.name == "flow" and entry.state == "deployed" and entry.region == "eu-north1"
    assert entry.kube_context == "nebius-flow-slurm"
    assert entry.last_operation is not None and entry.last_operation.result == "ok"
    home = Path(os.environ["NPA_HOME"]) / "soperator" / "flow"
    for private in [
        home / "inventory.json",
        home / "spec.yaml",
        Path(result.install_dir) / "terraform.tfvars.json",
        Path(str(result.log)),
    ]:
        assert stat.S_IMODE(private.stat().st_mode) == 0o600, private
    tfvars = json.loads((Path(result.install_dir) / "terraform.tfvars.json").read_text())
    assert tfvars["slurm_nodeset_workers"][0]["reservation_policy"]["reservation_ids"] == [
        SECRET_ID
    ]
    # the secret is used, but never logged or echoed
    log_text = Path(str(result.log)).read_text()
    assert SECRET_ID not in log_text
    assert SECRET_ID not in (home / "spec.yaml").read_text()
    assert SECRET_ID not in json.dumps([e.model_dump(mode="json") for e in recorder.events])
    logged = [parse_event(line) for line in log_text.splitlines()]
    assert logged[0].kind == "operation_started"
    assert logged[-1].kind == "operation_finished"

    # re-running converges without changing anything
    recorder.events.clear()
    again = await lifecycle.deploy(spec, options=opts, on_event=recorder)
    assert again.resources == 25
    assert all(s.total == 0 for s in recorder.kinds("plan_summary"))
    assert "apply:full" not in again.phases

    recorder.events.clear()
    gone = await lifecycle.destroy("flow", options=sandbox_options(), on_event=recorder)
    assert gone.destroyed == 25 and gone.remaining == []
    assert await lifecycle.cluster_resources("flow", sandbox_options()) == []
    entry = inventory.require("flow")
    assert entry.state == "destroyed"
    assert [o.kind for o in entry.operations] == ["deploy", "deploy", "destroy"]


@pytest.mark.terraform
async def test_lifecycle_terraform_validation_failure_is_a_diagnostic(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    # Our own checks pass; the recipe's variable validation (vpcsubnet- prefix) fails.
    bad = Identity(
        region="eu-north1", tenant_id="tenant-a", project_id="project-a", subnet_id="subnet-wrong"
    )
    opts = sandbox_options(identity=bad)
    with pytest.raises(OperationError) as info:
        await lifecycle.deploy(make_spec("badvars"), options=opts, on_event=recorder)
    assert info.value.exit_code == 1
    errors = [d for d in recorder.kinds("diagnostic") if d.severity == "error"]
    assert errors and errors[0].summary == "Invalid value for variable"
    assert "vpcsubnet-" in errors[0].detail
    assert "vpcsubnet-" in info.value.message
    assert recorder.events[-1].result == "failed"
    entry = inventory.require("badvars")
    assert entry.state == "failed" and entry.last_operation.result == "failed"
    assert not is_locked("badvars")


async def test_lifecycle_lock_contention_refuses_at_once(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    with ClusterLock("held", operation="deploy"), pytest.raises(ClusterBusy, match="is busy"):
        await lifecycle.deploy(make_spec("held"), options=sandbox_options(), on_event=recorder)
    assert recorder.events == []  # refused before anything started


@pytest.mark.terraform
@pytest.mark.slow
async def test_lifecycle_destructive_plan_refused_then_allowed(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    opts = sandbox_options()
    await lifecycle.deploy(make_spec("guard"), options=opts)

    # A resize is not destructive: it goes through, and the plan names it as a resize.
    bigger = make_spec(
        "guard",
        workers=[
            {"name": "cpu", "size": 3},
            {
                "name": "gpu",
                "platform": "gpu-h200-sxm",
                "preset": "8gpu-128vcpu-1600gb",
                "fabric": "fabric-3",
                "size": 1,
            },
        ],
    )
    plan = await lifecycle.plan(bigger, options=opts)
    (cpu,) = [p for p in plan.changes.pools if p.pool == "cpu"]
    assert (cpu.change, cpu.size_before, cpu.size_after) == ("resize", 2, 3)
    assert plan.changes.destructive == []
    await lifecycle.deploy(bigger, options=opts)

    # A new preset replaces the node group: refused, naming it.
    replaced = make_spec(
        "guard",
        workers=[
            {"name": "cpu", "size": 3, "preset": "16vcpu-64gb"},
            {
                "name": "gpu",
                "platform": "gpu-h200-sxm",
                "preset": "8gpu-128vcpu-1600gb",
                "fabric": "fabric-3",
                "size": 1,
            },
        ],
    )
    before = await lifecycle.cluster_resources("guard", opts)
    with pytest.raises(lifecycle.DestructivePlanError) as info:
        await lifecycle.deploy(replaced, options=opts, on_event=recorder)
    assert 'module.k8s.null_resource.worker_v2["cpu-0"]' in info.value.addresses
    assert 'worker_v2["cpu-0"]' in info.value.message
    assert info.value.exit_code == 1
    assert await lifecycle.cluster_resources("guard", opts) == before
    assert "apply:k8s" not in recorder.phases()
    assert inventory.require("guard").state == "deployed"  # refusal changed nothing

    result = await lifecycle.deploy(replaced, options=opts, allow_destructive=True)
    assert result.resources == len(before)


def _spec_file(tmp_path: Path, name: str, key: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        "apiVersion: npa.soperator/v0.0.1\n"
        f"name: {name}\n"
        f"root_login_ssh_public_key: {key}\n"
        "workers:\n"
        "  - name: cpu\n"
        "    size: 1\n"
    )
    return path


@pytest.mark.terraform
def test_lifecycle_cli_deploy_json_list_destroy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.sandbox.local_terraform import prepare

    monkeypatch.setenv("NPA_TERRAFORM_BIN", prepare().binary)
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
    spec = _spec_file(tmp_path, "clijson", key)
    code = cli_main(["soperator", "deploy", "--sandbox", "--spec", str(spec), "--output", "ndjson"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    *events, final = (json.loads(line) for line in out)
    kinds = [parse_event(e).kind for e in events]
    assert kinds[0] == "operation_started" and kinds[-1] == "operation_finished"
    assert "resource_finished" in kinds
    assert final["ok"] is True and final["result"]["name"] == "clijson"

    assert cli_main(["soperator", "list", "--output", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in listed["clusters"]] == ["clijson"]
    assert cli_main(["soperator", "list"]) == 0
    text = capsys.readouterr().out
    assert "clijson" in text and "deployed" in text and "nebius-clijson-slurm" in text

    # not a terminal, no --yes and no answer on stdin: not confirmed (exit 1, as npa's
    # declined prompt), nothing destroyed
    assert cli_main(["soperator", "destroy", "--name", "clijson", "--sandbox"]) == 1
    assert "--yes" in capsys.readouterr().err
    assert inventory.require("clijson").state == "deployed"

    assert cli_main(["soperator", "destroy", "--name", "clijson", "--sandbox", "--yes"]) == 0
    assert "Destroyed 'clijson'" in capsys.readouterr().out
    assert cli_main(["soperator", "destroy", "--name", "nosuch", "--yes"]) == 2


def test_lifecycle_cli_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
    spec = _spec_file(tmp_path, "badinput", key)
    code = cli_main(
        ["soperator", "plan", "--spec", str(spec), "--terraform-dir", str(tmp_path / "nowhere")]
    )
    assert code == 2
    assert "not a folder" in capsys.readouterr().err

    monkeypatch.setenv("NPA_TERRAFORM_BIN", str(tmp_path / "no-terraform"))
    code = cli_main(["soperator", "plan", "--sandbox", "--spec", str(spec), "-o", "json"])
    captured = capsys.readouterr()
    assert code == 2
    doc = json.loads(captured.out.splitlines()[-1])
    assert doc["ok"] is False and "not found or not executable" in doc["message"]
    assert "Traceback" not in captured.err
