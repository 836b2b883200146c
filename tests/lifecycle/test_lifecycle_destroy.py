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

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


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


def _tfstate_ids(install_dir: Path, kind: str) -> list[str]:
    """The IDs of one resource type in an installation's local Terraform state."""
    state = json.loads((install_dir / "terraform.tfstate").read_text())
    return [
        inst["attributes"]["id"]
        for res in state["resources"]
        if res["type"] == kind
        for inst in res["instances"]
    ]


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


async def test_what_nebius_keeps_after_destroy_is_named_from_the_state_and_the_project(
    make_spec: Any, sandbox_in_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the Nebius check after destroy and the recipe destroy runs: the filesystem
    Terraform owned (its ID, read from the local state before destroy: gone from the state
    after the first destroy) and any
    `soperator-<name>` cluster in the project of the caller's identity (else the one it was
    deployed with) are looked up in the caller's cloud; each still there is named and the
    cluster stays destroy-incomplete. Destroy runs the recipe the cluster was deployed with,
    unless the caller names another, and says which and in what folder."""
    from npa_sop_tui.cloud.client import CloudSettings, connect
    from npa_sop_tui.cloud.model import Filesystem, Mk8sCluster
    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.lifecycle.api import LifecycleOptions
    from npa_sop_tui.sandbox.fake_cloud_state import default_state
    from npa_sop_tui.sandbox.fake_nebius import FakeNebius

    from testkit.filesystem_recipe import filesystem_recipe
    from testkit.lifecycle import IDENTITY, Recorder

    recipe = filesystem_recipe(tmp_path / "recipe")
    other_recipe = filesystem_recipe(tmp_path / "other-recipe")

    def options(recipe_dir: Path | None = None, **extra: Any) -> LifecycleOptions:
        flags = {"terraform_dir": str(recipe_dir)} if recipe_dir else {}
        environment = open_environment(sandbox=True, flags=flags, sleep_seconds=0)
        return LifecycleOptions(environment=environment, **extra)

    spec = make_spec("kept", workers=[{"name": "cpu", "size": 1}])
    await lifecycle.deploy(spec, options=options(recipe, identity=IDENTITY, preflight=False))
    install = Path(inventory.require("kept").install_dir or "")
    (owned_id,) = _tfstate_ids(install, "nebius_compute_v1_filesystem")
    cloud = default_state(project_id="project-other")
    cloud.token = "kept-token"
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", "kept-token")
    # found only by the ID Terraform recorded
    cloud.filesystems[owned_id] = Filesystem(owned_id, "jail", "project-elsewhere", "ready")
    # found only by its name, in the project of the identity given for this destroy
    lost = Mk8sCluster("mk8s-lost", "soperator-kept", "project-other", "running")
    cloud.clusters[lost.id] = lost
    # and one of that name in the project it was deployed with
    home = Mk8sCluster("mk8s-home", "soperator-kept", IDENTITY.project_id or "", "running")
    cloud.clusters[home.id] = home
    by_id = f"filesystem jail ({owned_id}, ready)"
    other = Identity(region="eu-north1", tenant_id="tenant-e2e", project_id="project-other")
    with FakeNebius(cloud) as server:
        client = connect(CloudSettings(endpoint=server.endpoint, timeout=10))
        try:
            seen = Recorder()
            with pytest.raises(lifecycle.DestroyIncomplete) as info:
                await lifecycle.destroy(
                    "kept", options=options(cloud=client, identity=other), on_event=seen
                )
            assert info.value.remaining == [
                "mk8s cluster soperator-kept (mk8s-lost, running)",
                by_id,
            ]
            assert info.value.message.startswith(
                "destroy of 'kept' is incomplete (still present in Nebius after destroy); "
            )
            assert inventory.require("kept").state == "destroy-incomplete"
            (resolved,) = seen.kinds("recipe_resolved")
            assert (resolved.path, resolved.install_dir) == (str(recipe), str(install))
            # no identity given: the project it was deployed with is searched; another
            # recipe named by the caller is the one used
            seen = Recorder()
            with pytest.raises(lifecycle.DestroyIncomplete) as again:
                await lifecycle.destroy(
                    "kept", options=options(other_recipe, cloud=client), on_event=seen
                )
            assert again.value.remaining == ["mk8s cluster soperator-kept (mk8s-home, running)"]
            assert [e.path for e in seen.kinds("recipe_resolved")] == [str(other_recipe)]
            cloud.clusters.clear()
            done = await lifecycle.destroy("kept", options=options(cloud=client))
        finally:
            await client.close()
    assert done.status == "destroyed"


async def test_destroy_takes_the_live_sandbox_cluster_down_with_it(
    make_spec: Any, sandbox_in_home: Path
) -> None:
    """Protects what a sandbox user watches during destroy: the simulated cluster follows
    Terraform's deletions, so once destroy is done its SlurmCluster is gone from the live
    Kubernetes API, as a real one would be."""
    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.lifecycle.api import LifecycleOptions
    from npa_sop_tui.sandbox.cluster import SLURM_CLUSTER_CR

    from testkit.lifecycle import IDENTITY

    environment = open_environment(sandbox=True, sleep_seconds=0)
    try:
        await environment.start_live()
        kube = environment.kube  # type: ignore[attr-defined]
        options = LifecycleOptions(environment=environment, identity=IDENTITY, preflight=False)
        await lifecycle.deploy(make_spec("live", workers=[{"name": "cpu", "size": 1}]),
                               options=options)  # fmt: skip
        assert kube.get("slurmclusters", SLURM_CLUSTER_CR) is not None
        done = await lifecycle.destroy("live", options=options)
        assert done.status == "destroyed"
        assert kube.get("slurmclusters", SLURM_CLUSTER_CR) is None
    finally:
        await environment.aclose()
