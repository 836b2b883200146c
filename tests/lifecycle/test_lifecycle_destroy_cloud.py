"""lifecycle/destroy.py with real Terraform, seen from the cloud: what Nebius keeps after a
destroy is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.lifecycle import api as lifecycle

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


def _tfstate_ids(install_dir: Path, kind: str) -> list[str]:
    """The IDs of one resource type in an installation's local Terraform state."""
    state = json.loads((install_dir / "terraform.tfstate").read_text())
    return [
        inst["attributes"]["id"]
        for res in state["resources"]
        if res["type"] == kind
        for inst in res["instances"]
    ]


async def test_what_nebius_keeps_after_destroy_is_named_from_the_state_and_the_project(
    make_spec: Any, sandbox_in_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the Nebius check after destroy and the recipe destroy runs: the filesystem
    Terraform owned (its ID, read from the local state before destroy: gone from the state
    after the first destroy) and any
    `soperator-<name>` cluster in the project of the caller's identity (else the one it was
    deployed with) are looked up in the caller's cloud; each still there is named and the
    cluster stays destroy-incomplete. Destroy runs the recipe the caller names, and says
    which and in what folder; a recipe outside the npa home is never taken from the record
    alone (a record is data), so with none named the destroy is refused before it starts."""
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
            from npa_sop_tui.home.recorded_paths import UntrustedRecordedPath

            with pytest.raises(UntrustedRecordedPath, match="the recipe folder"):
                await lifecycle.destroy("kept", options=options(cloud=client, identity=other))
            assert inventory.require("kept").state == "deployed"  # nothing started
            seen = Recorder()
            with pytest.raises(lifecycle.DestroyIncomplete) as info:
                await lifecycle.destroy(
                    "kept", options=options(recipe, cloud=client, identity=other), on_event=seen
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
            done = await lifecycle.destroy("kept", options=options(recipe, cloud=client))
        finally:
            await client.close()
    assert done.status == "destroyed"
