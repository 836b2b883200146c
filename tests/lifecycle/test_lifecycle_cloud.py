"""The lifecycle's cloud steps on the stand-in recipe with the sandbox's simulated cloud
(a local server speaking Nebius's gRPC protocol): preflight before Terraform, the flags
with the existing npa's meanings, and destroy verification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main as cli_main
from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import inventory
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle.cloud_steps import PreflightBlocked, PreflightUndecided
from npa_sop_tui.lifecycle.flags import TerraformTimeout

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


def named_gpu(make_spec: Any, name: str, **extra: Any) -> Any:
    return make_spec(
        name,
        workers=[
            {"name": "gpu", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
             "fabric": "fabric-3", "size": 1, "capacity_block_group_name": "h200-res"},
        ],
        **extra,
    )  # fmt: skip


async def test_plan_reports_preflight_and_deploy_resolves_names(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    spec = named_gpu(make_spec, "pfok")
    planned = await lifecycle.plan(spec, options=sandbox_options(), on_event=recorder)
    assert planned.preflight is not None and planned.preflight["problems"] == []
    (event,) = recorder.kinds("preflight")
    assert not event.blocked and event.report["reservations"][0]["verdict"] == "ok"
    assert recorder.phases()[0] == "preflight"

    recorder.events.clear()
    result = await lifecycle.deploy(spec, options=sandbox_options(), on_event=recorder)
    tfvars = json.loads((Path(result.install_dir) / "terraform.tfvars.json").read_text())
    (pool,) = tfvars["slurm_nodeset_workers"]
    group_id = pool["reservation_policy"]["reservation_ids"][0]
    assert group_id.startswith("capacityblockgroup-")  # the name was resolved to an ID …
    log = Path(result.log or "").read_text()
    text = json.dumps([e.model_dump(mode="json") for e in recorder.events])
    assert group_id not in log and group_id not in text  # … which no event or log shows


async def test_deploy_refuses_a_missing_group_before_terraform(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "capacity-block-missing")
    with pytest.raises(PreflightBlocked) as info:
        await lifecycle.deploy(
            named_gpu(make_spec, "pfmiss"), options=sandbox_options(), on_event=recorder
        )
    assert info.value.exit_code == 2
    assert "does not exist in tenant" in info.value.message
    assert "--capacity-block-group gpu=<ID>" in info.value.message
    assert "init" not in recorder.phases()  # Terraform never ran
    assert recorder.kinds("preflight")[0].blocked
    entry = inventory.get("pfmiss")
    assert entry is None or entry.state != "deployed"


async def test_a_quota_limit_the_credentials_cannot_see_stops_deploy_unless_allowed(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects against passing what cannot be seen: the instance quota's limit hidden from
    the credentials stops the deploy before Terraform (exit 2, the permission named in the
    warning); `allow_unknown` (--allow-unknown) goes on with the warning."""
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "quota-hidden")
    spec = make_spec("pfhide")
    with pytest.raises(PreflightUndecided) as info:
        await lifecycle.deploy(spec, options=sandbox_options(), on_event=recorder)
    assert info.value.exit_code == 2
    assert "cannot judge 2 quota(s) of 'pfhide'" in info.value.message
    assert "compute.instance.count (limit hidden)" in info.value.message
    assert "--allow-unknown" in (info.value.hint or "")
    assert "init" not in recorder.phases()  # Terraform never ran
    warnings = [e.summary for e in recorder.kinds("diagnostic")]
    assert any("permission to read quota allowance limits" in w for w in warnings), warnings
    recorder.events.clear()
    planned = await lifecycle.plan(
        spec, options=sandbox_options(allow_unknown=True), on_event=recorder
    )
    assert planned.preflight is not None and "init" in recorder.phases()


def test_cli_deploy_refusal_exit_2_and_plan_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sandbox_in_home: Path,
) -> None:  # fmt: skip
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: pfcli\nworkers:\n"
        "  - {name: gpu, platform: gpu-h200-sxm, preset: 8gpu-128vcpu-1600gb, fabric: fabric-3,"
        " size: 1, capacity_block_group_name: h200-res}\n"
    )
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    assert cli_main(["soperator", "plan", "--spec", str(spec), "--sandbox"]) == 0
    out = capsys.readouterr().out
    assert "RESOURCE" in out and "compute.instance.count" in out and "h200-res" in out
    assert "Hourly price estimate" in out
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "capacity-block-missing")
    code = cli_main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert "reserved capacity is not usable" in err and "--capacity-block-group gpu=<ID>" in err


async def test_no_preflight_still_resolves_names(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    spec = named_gpu(make_spec, "pfskip")
    spec.workers.append(spec.workers[0].model_copy(
        update={"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb", "fabric": None,
                "capacity_block_group_name": None}
    ))  # fmt: skip
    planned = await lifecycle.plan(
        spec, options=sandbox_options(preflight=False), on_event=recorder
    )
    assert planned.preflight is None and "preflight" not in recorder.phases()
    assert recorder.kinds("preflight") == []
    assert any("resolving reservation names only" in e.text for e in recorder.kinds("log_line"))


async def test_timeout_stops_terraform_and_says_where(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    spec = make_spec("pftime", workers=[{"name": "cpu", "size": 1}])
    # 12 s per plan or apply: the plan must finish within it (on a loaded 2-core machine a
    # plan took more than 3 s, and the timeout then hit the plan with nothing in flight), and
    # the apply's first Kubernetes resource (sleeping 120 s) must still run when it strikes.
    opts = sandbox_options(sleep=120, timeout_minutes=0.2)
    with pytest.raises(TerraformTimeout) as info:
        await lifecycle.deploy(spec, options=opts, on_event=recorder)
    assert (
        "terraform apply (apply:k8s) did not finish within 0.2 min and was stopped "
        "gracefully; it was working on:\n  - module.k8s." in info.value.message
    )
    assert info.value.where and all(a.startswith("module.k8s.") for a in info.value.where)
    assert any("SIGINT" in e.text for e in recorder.kinds("log_line"))
    assert inventory.require("pftime").state == "failed"


async def test_source_preflight_only_changes_nothing(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    result = await lifecycle.deploy(
        make_spec("pfsrc"), options=sandbox_options(source_preflight_only=True), on_event=recorder
    )
    assert (result.status, result.deployment_status) == ("source-preflight-passed", "not-applied")
    assert recorder.events == [] and inventory.get("pfsrc") is None
    assert not Path(result.install_dir).exists()


async def test_project_flag_must_agree_with_the_spec(make_spec: Any, sandbox_options: Any) -> None:
    spec = make_spec("pfproj", project_id="project-one")
    with pytest.raises(UsageError, match="disagrees with the spec's project_id"):
        await lifecycle.plan(spec, options=sandbox_options(project="project-two", identity=None))


async def test_destroy_reports_what_nebius_still_has(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_spec("pfgone", workers=[{"name": "cpu", "size": 1}])
    await lifecycle.deploy(spec, options=sandbox_options(), on_event=recorder)
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "destroy-leftover")
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy("pfgone", options=sandbox_options(), on_event=recorder)
    assert any("mk8s cluster soperator-pfgone" in r for r in info.value.remaining)
    assert inventory.require("pfgone").state == "destroy-incomplete"
    monkeypatch.delenv("NPA_SANDBOX_SCENARIO")
    recorder.events.clear()
    done = await lifecycle.destroy("pfgone", options=sandbox_options(), on_event=recorder)
    assert done.status == "destroyed"
    assert any("mk8s cluster and everything else it owned are gone" in e.text
               for e in recorder.kinds("log_line"))  # fmt: skip
