"""A whole `destroy` of a recipe with a real filesystem resource, its state in the team's
bucket (moto's real S3 API on 127.0.0.1): what the cloud keeps is named by the ID Terraform
recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.state.stores import default_store

from testkit.moto import MotoServer


@pytest.mark.terraform
async def test_s3_destroy_that_leaves_a_filesystem_names_it_end_to_end(
    bucket_env: dict[str, str],
    moto: MotoServer,
    sandbox_in_home: Path,
    fast_standin: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A recipe with a real `nebius_compute_v1_filesystem` (the stand-in nebius/nebius
    provider under real Terraform), state in the bucket: Terraform destroys it, the cloud
    keeps it (`destroy-leftover`), and the destroy is incomplete naming that filesystem by
    the ID Terraform recorded; once the cloud lets go, a second destroy ends `destroyed`."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.lifecycle import api as lifecycle
    from npa_sop_tui.lifecycle.api import LifecycleOptions
    from npa_sop_tui.sandbox.nebius_provider.filesystem import filesystem_id

    from testkit.filesystem_recipe import filesystem_recipe
    from testkit.lifecycle import IDENTITY, Recorder, make_spec
    from testkit.lifecycle import options as sandbox_options

    recipe = filesystem_recipe(tmp_path / "recipe")

    def options() -> LifecycleOptions:
        return sandbox_options(flags={"terraform_dir": str(recipe)})

    name = "s3fs"
    await lifecycle.deploy(make_spec(name, workers=[{"name": "cpu", "size": 1}]), options=options())
    assert not list(sandbox_in_home.glob(f"**/{name}/terraform.tfstate"))  # the state is remote
    store = default_store()
    state = json.loads(
        moto.client()
        .get_object(Bucket=bucket_env["NPA_STATE_BUCKET"], Key=store.tfstate_key(name))["Body"]  # type: ignore[attr-defined]
        .read()
    )
    (fs_state,) = [r for r in state["resources"] if r["type"] == "nebius_compute_v1_filesystem"]
    fs_id = fs_state["instances"][0]["attributes"]["id"]
    assert fs_id == filesystem_id(IDENTITY.project_id or "", f"soperator-{name}-jail")

    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "destroy-leftover")
    seen = Recorder()
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy(name, options=options(), on_event=seen)
    deleted = [e.addr for e in seen.kinds("resource_finished") if e.action == "delete"]
    assert "module.filestore.nebius_compute_v1_filesystem.jail" in deleted  # Terraform did
    assert f"filesystem soperator-{name}-jail ({fs_id}, ready)" in info.value.remaining
    assert "still present in Nebius after destroy" in info.value.message
    assert inventory.require(name).state == "destroy-incomplete"

    monkeypatch.delenv("NPA_SANDBOX_SCENARIO")
    done = await lifecycle.destroy(name, options=options(), on_event=Recorder())
    assert done.status == "destroyed"
    assert inventory.require(name).state == "destroyed"
