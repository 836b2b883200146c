"""lifecycle/destroy.py with real Terraform on the stand-in recipe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.recipe.installation import recorded_env

from testkit.lifecycle import ROOT_KEY, Recorder
from testkit.npa_home import (
    NPA_IDENTITY,
    NPA_REF,
    SIDECAR,
    checkout,
    hashes,
    installation,
    npa_deploy,
    npa_tfvars,
    sidecar,
)

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


async def test_a_deploy_whose_first_plan_failed_is_destroyed_with_the_recipe_it_recorded(
    make_spec: Any, sandbox_options: Any, npa_home: Path
) -> None:
    """Protects destroy's whole sequence on the cheapest real Terraform run there is: a
    deploy whose first plan failed (Terraform refused its arguments), so nothing is in
    state. Destroy runs in the recorded folder with the recipe the record names (a copy in
    the home, not the environment's own), refuses a `--project` other than the recorded one
    and takes the recorded one, marks the record before Terraform starts, shows an empty
    plan, checks Nebius, and leaves the record destroyed with no outputs and no saved plan."""
    spec = make_spec("early", workers=[{"name": "cpu", "size": 1}])
    default = await sandbox_options().environment.recipe(None)
    mine = npa_home / "recipes" / "mine" / "soperator"
    shutil.copytree(default.root, mine)
    failing = sandbox_options(preflight=False, env={"TF_CLI_ARGS_plan": "-no-such-flag"},
                              flags={"terraform_dir": str(mine)})  # fmt: skip
    with pytest.raises(lifecycle.TerraformFailed):
        await lifecycle.deploy(spec, options=failing)
    entry = inventory.require("early")
    install = Path(entry.install_dir or "")
    assert entry.state == "failed" and entry.recipe is not None
    assert entry.recipe.path == str(mine) != str(default.root)
    (install / ".npa-plan").mkdir(exist_ok=True)
    (install / ".npa-plan" / "k8s.tfplan").write_text("a plan saved by an earlier run")
    project = recorded_env(install)["TF_VAR_iam_project_id"]
    with pytest.raises(UsageError, match="does not match the persisted project_id"):
        await lifecycle.destroy("early", options=sandbox_options(project="project-e00other"))
    assert inventory.require("early").state == "failed"

    states: dict[str, str] = {}
    recorder = Recorder()

    def watch(event: Any) -> None:
        recorder(event)
        if event.kind == "plan_summary":  # Terraform is about to destroy
            states[event.kind] = inventory.require("early").state

    done = await lifecycle.destroy("early", options=sandbox_options(project=project),
                                   on_event=watch)  # fmt: skip
    assert (done.status, done.name, done.destroyed, done.remaining) == ("destroyed", "early", 0, [])
    assert done.operation_id.startswith("destroy-") and done.install_dir == str(install)
    assert done.log is not None and Path(done.log).is_file()
    assert {e.operation_id for e in recorder.events} == {done.operation_id}
    resolved = recorder.kinds("recipe_resolved")
    assert [(r.path, r.install_dir) for r in resolved] == [(str(mine), str(install))]
    assert recorder.phases() == ["init", "destroy", "verify", "done"]
    labels = {e.phase: e.label for e in recorder.kinds("phase_changed")}
    assert labels["destroy"] == "Destroying 0 resources"
    [plan] = recorder.kinds("plan_summary")
    assert (plan.phase, plan.add, plan.change, plan.remove) == ("destroy", 0, 0, 0)
    assert states == {"plan_summary": "destroying"}
    assert len(recorder.kinds("dependency_graph")) == 1
    notes = [e.text for e in recorder.kinds("log_line") if e.stream == "npa"]
    assert any(n.startswith("Nebius confirms") for n in notes), notes
    [finished] = recorder.kinds("operation_finished")
    assert finished.message == "destroyed 'early': 0 resources removed"
    after = inventory.require("early")
    assert (after.state, after.outputs, after.install_dir) == ("destroyed", {}, str(install))
    assert not (install / ".npa-plan").exists()
    [record] = [o for o in after.operations if o.id == done.operation_id]
    assert (record.kind, record.result, record.summary) == ("destroy", "ok", finished.message)


async def test_a_destroy_that_leaves_resources_in_state_is_incomplete(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the "still in state" check: Terraform can exit 0 while resources remain
    (here a real `terraform destroy -target=` of one resource stands for such a run). The
    cluster must be reported destroy-incomplete with what is left, never `destroyed`."""
    spec = make_spec("pfpart", workers=[{"name": "cpu", "size": 1}])
    await lifecycle.deploy(spec, options=sandbox_options(preflight=False), on_event=recorder)
    # --source-preflight-only resolves the recipe it was deployed with and destroys nothing
    checked = await lifecycle.destroy("pfpart", options=sandbox_options(source_preflight_only=True))
    assert (checked.status, checked.destroyed) == ("source-preflight-passed", 0)
    assert checked.install_dir == inventory.require("pfpart").install_dir
    assert inventory.require("pfpart").state == "deployed"
    real_destroy = steps.destroy

    async def destroy_one(ctx: Any, install: Any) -> Any:
        first = (await steps.state_list(ctx, install))[0]
        args = ["destroy", "-input=false", "-json", "-auto-approve", f"-target={first}"]
        return await steps.within(ctx, ctx.runner().run(args, cwd=install.dir), "destroy")

    monkeypatch.setattr(steps, "destroy", destroy_one)
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy("pfpart", options=sandbox_options(preflight=False),
                                on_event=recorder)  # fmt: skip
    assert info.value.remaining, "what is left must be named"
    assert info.value.message.startswith(
        "destroy of 'pfpart' is incomplete (resources are still in state); "
    )
    assert inventory.require("pfpart").state == "destroy-incomplete"
    monkeypatch.setattr(steps, "destroy", real_destroy)
    install = Path(inventory.require("pfpart").install_dir or "")
    shutil.rmtree(install / ".npa-plan", ignore_errors=True)  # no saved plan is fine too
    done = await lifecycle.destroy("pfpart", options=sandbox_options(), on_event=recorder)
    assert done.status == "destroyed"
    assert done.install_dir == str(install)
    assert done.log is not None and Path(done.log).is_file()


@pytest.mark.parametrize("recorded", [True, False])
async def test_a_cluster_without_its_installation_folder_is_refused(
    sandbox_options: Any, tmp_path: Path, recorded: bool
) -> None:
    """Protects destroy's first refusal (local state): with the installation folder gone
    there is nothing to run Terraform in, so it says so and what to do; nothing changes."""
    gone = tmp_path / "gone"
    entry = InventoryEntry(name="nofolder", kube_context="nebius-nofolder-slurm")
    entry.install_dir = str(gone) if recorded else None
    inventory.save(entry)
    with pytest.raises(UsageError) as refused:
        await lifecycle.destroy("nofolder", options=sandbox_options())
    where = str(gone) if recorded else "none recorded"
    assert refused.value.message == f"cluster 'nofolder' has no installation folder ({where})"
    assert refused.value.hint == (
        "it may never have been deployed; remove its inventory folder if it is gone"
    )
    assert inventory.require("nofolder").state == entry.state
    assert inventory.require("nofolder").operations == []


async def test_a_failed_terraform_destroy_reports_terraforms_error_and_what_is_left(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the reason of a failed destroy (local state, so no bucket to blame): the user
    reads Terraform's own error, with everything still in state and the cluster's name,
    never "still in state" as if Terraform had succeeded. An entry without a recorded recipe
    is then destroyed with the environment's own."""
    spec = make_spec("tffail", workers=[{"name": "cpu", "size": 1}])
    deployed = await lifecycle.deploy(spec, options=sandbox_options(preflight=False))

    async def refused(ctx: Any, install: Any) -> Any:  # a real Terraform that exits non-zero
        args = ["destroy", "-input=false", "-no-such-flag"]
        return await steps.within(ctx, ctx.runner().run(args, cwd=install.dir), "destroy")

    real_destroy = steps.destroy
    monkeypatch.setattr(steps, "destroy", refused)
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy("tffail", options=sandbox_options(), on_event=recorder)
    message = info.value.message
    assert message.startswith("destroy of 'tffail' is incomplete (")
    assert "no-such-flag" in message and "still in state" not in message
    assert len(info.value.remaining) == deployed.resources > 0
    assert info.value.hint == "fix the cause and destroy 'tffail' again"
    assert inventory.require("tffail").state == "destroy-incomplete"
    # an entry that recorded no recipe (an older npa) is destroyed with the default one
    monkeypatch.setattr(steps, "destroy", real_destroy)
    entry = inventory.require("tffail")
    entry.recipe = None
    inventory.save(entry)
    done = await lifecycle.destroy("tffail", options=sandbox_options())
    assert (done.status, done.destroyed) == ("destroyed", deployed.resources)


@pytest.mark.usefixtures("fast_standin")
async def test_a_cluster_the_existing_npa_deployed_is_adopted_then_destroyed_in_its_folder(
    sandbox_options: Any, sandbox_in_home: Path
) -> None:
    """Protects destroy's first use of a cluster the existing npa deployed: it is adopted
    with the caller's options (their `--ref` picks between npa's two clones that each have
    an installation of that name, as npa's own `--ref` does) and destroyed where npa left
    it, through the adopted installation: of npa's files only the Terraform state changes."""
    cpu = {"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb", "size": 1}
    install = npa_deploy(sandbox_in_home, "legacy", NPA_IDENTITY, [cpu], root_key=ROOT_KEY)
    other_clone = checkout(sandbox_in_home / "soperator" / "nebius-solutions-library-"
                           f"{'0' * 12}" / "soperator")  # fmt: skip
    other = installation(other_clone, "legacy", npa_tfvars("legacy", [cpu], root_key=ROOT_KEY))
    (other / SIDECAR).write_text(json.dumps(sidecar(NPA_IDENTITY, "legacy")))
    npa_files = [p for p in install.iterdir() if not p.name.startswith((".terraform", ".npa-"))]
    before = hashes(install, npa_files)
    recorder = Recorder()
    options = sandbox_options(flags={"recipe.ref": NPA_REF})
    done = await lifecycle.destroy("legacy", options=options, on_event=recorder)
    assert (done.status, done.install_dir) == ("destroyed", str(install))
    assert done.destroyed > 0
    entry = inventory.require("legacy")
    assert entry.adoption is not None and entry.adoption.origin == "npa"
    assert entry.state == "destroyed"
    after = hashes(install, npa_files)
    changed = {k for k in before if after.get(k) != before[k]}
    assert changed == {"terraform.tfstate"}
    [resolved] = recorder.kinds("recipe_resolved")
    assert resolved.install_dir == str(install)


async def test_destroy_takes_the_live_sandbox_cluster_down_with_it(
    make_spec: Any, sandbox_options: Any
) -> None:
    """Protects what a sandbox user watches during destroy, in a later session than the
    deploy: the simulated cluster is brought back from its state when destroy starts, then
    follows Terraform's deletions, so by the time Terraform is done (the Nebius check starts)
    its SlurmCluster is gone from the live Kubernetes API, as a real one would be."""
    from npa_sop_tui.sandbox.cluster import SLURM_CLUSTER_CR

    deploying = sandbox_options(preflight=False)  # each call opens a session of its own
    try:
        await lifecycle.deploy(make_spec("live", workers=[{"name": "cpu", "size": 1}]),
                               options=deploying)  # fmt: skip
    finally:
        await deploying.environment.aclose()
    options = sandbox_options(preflight=False)
    environment = options.environment
    try:
        await environment.start_live()
        kube = environment.kube  # type: ignore[attr-defined]
        seen: dict[str, object] = {}

        def watch(event: Any) -> None:
            if event.kind == "phase_changed" and event.phase in ("destroy", "verify"):
                found = kube.get("slurmclusters", SLURM_CLUSTER_CR)
                seen[event.phase] = found is not None

        done = await lifecycle.destroy("live", options=options, on_event=watch)
        assert done.status == "destroyed"
        assert seen == {"destroy": True, "verify": False}
        assert kube.get("slurmclusters", SLURM_CLUSTER_CR) is None
    finally:
        await environment.aclose()
