"""lifecycle/destroy.py with real Terraform on the stand-in recipe."""

from __future__ import annotations

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
