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


# -- a record is data: a copied home, a crafted record, a recorded environment -------------

SMALL = """\
apiVersion: npa.soperator/v0.0.1
name: {name}
workers:
  - name: cpu
    size: 1
"""


def _deployed(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Path:
    """A sandbox cluster `name` deployed through the CLI; returns its installation folder."""
    from testkit.sandbox_cli import deploy_in_sandbox

    deploy_in_sandbox(SMALL.format(name=name), tmp_path, monkeypatch, capsys)
    return Path(json.loads(_read_record(tmp_path / "npa-home", name))["install_dir"])


def _read_record(home: Path, name: str) -> str:
    return (home / "sandbox" / "soperator" / name / "inventory.json").read_text()


def test_a_copied_homes_destroy_leaves_the_original_clusters_state_alone(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: a copied home's `destroy` destroyed the original home's Terraform state (the
    copy's inventory still names the original's installation folder)."""
    from npa_sop_tui.cli.entry import main

    install = _deployed("orig", tmp_path, monkeypatch, capsys)
    state = install / "terraform.tfstate"
    before = state.read_bytes()
    copy = tmp_path / "copied-home"
    shutil.copytree(npa_home, copy, symlinks=True)
    monkeypatch.setenv("NPA_HOME", str(copy))
    monkeypatch.delenv("NPA_SANDBOX_HOME")  # entered by the deploy, in this process
    code = main(["soperator", "destroy", "--name", "orig", "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"its record names the installation folder {install}, which npa does not use" in err
    assert "NPA_HOME" in err or "--terraform-dir" in err
    assert "Traceback" not in err
    assert state.read_bytes() == before  # the original cluster's state, untouched
    assert json.loads(_read_record(npa_home, "orig"))["state"] == "deployed"
    assert json.loads(_read_record(copy, "orig"))["state"] == "deployed"


def test_a_crafted_record_cannot_point_terraform_at_another_folder(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: a crafted inventory.json could point Terraform at any folder: here one whose
    Terraform would run a command. Refused before anything runs (exit 2)."""
    from npa_sop_tui.cli.entry import main
    from npa_sop_tui.sandbox.local_terraform import STANDIN_RECIPE

    _deployed("craft", tmp_path, monkeypatch, capsys)
    marker = tmp_path / "crafted-code-ran"
    evil = tmp_path / "evil"
    shutil.copytree(STANDIN_RECIPE / "soperator", evil / "soperator")
    target = evil / "soperator" / "installations" / "craft"
    shutil.copytree(evil / "soperator" / "installations" / "example", target)
    (target / "pwn.tf").write_text(
        'resource "null_resource" "pwn" {\n'
        f'  provisioner "local-exec" {{ command = "touch {marker}" }}\n}}\n'
    )
    record = npa_home / "sandbox" / "soperator" / "craft" / "inventory.json"
    doc = json.loads(record.read_text())
    doc["install_dir"] = str(target)
    doc["recipe"]["path"] = str(evil / "soperator")
    record.write_text(json.dumps(doc))
    for command in (["destroy", "--name", "craft", "--sandbox", "--yes"],):
        code = main(["soperator", *command])
        err = capsys.readouterr().err
        assert code == 2, err
        assert f"names the installation folder {target}" in err and "Traceback" not in err
    assert not marker.exists()


WRAPPER = """#!/bin/sh
env > "{dump}/env-$1"
exec {real} "$@"
"""


def test_a_recorded_environment_sets_nothing_but_the_recipes_variables(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: `.npa-env.json` set any variable for Terraform (`LD_PRELOAD`, `TF_LOG_PATH`
    outside the home): its values were added after the allow-list. A real Terraform destroy
    (through a wrapper that records the environment it was given) sees only the recipe's
    TF_VAR_* names from it, and writes no log where the file said."""
    from npa_sop_tui.cli.entry import main
    from npa_sop_tui.sandbox.local_terraform import terraform_binary

    dump = tmp_path / "env-dumps"
    dump.mkdir()
    wrapper = tmp_path / "terraform"
    wrapper.write_text(WRAPPER.format(dump=dump, real=terraform_binary()))
    wrapper.chmod(0o755)
    install = _deployed("envrec", tmp_path, monkeypatch, capsys)
    outside_log = tmp_path / "outside" / "terraform-trace.log"
    recorded = json.loads((install / ".npa-env.json").read_text())
    recorded.update(
        {
            "TF_LOG": "TRACE",
            "TF_LOG_PATH": str(outside_log),
            "LD_PRELOAD": str(tmp_path / "evil.so"),
            "BASH_ENV": str(tmp_path / "evil.sh"),
            "TF_VAR_undeclared": "x",
        }
    )
    (install / ".npa-env.json").write_text(json.dumps(recorded))
    monkeypatch.setenv("NPA_TERRAFORM_BIN", str(wrapper))
    code = main(["soperator", "destroy", "--name", "envrec", "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 0, err
    seen = (dump / "env-destroy").read_text()
    for name in ("TF_LOG=", "TF_LOG_PATH=", "LD_PRELOAD=", "BASH_ENV=", "TF_VAR_undeclared="):
        assert f"\n{name}" not in f"\n{seen}", name
    assert not outside_log.exists() and not outside_log.parent.exists()
