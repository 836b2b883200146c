"""Destroy verification reads the cluster's Terraform state through its state store: with the
S3 backend (moto's real S3 API on 127.0.0.1) there is no local terraform.tfstate, and a
filesystem Nebius still has after destroy is still named."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npa_sop_tui.cloud.client import CloudSettings, connect
from npa_sop_tui.cloud.destroy_check import leftovers
from npa_sop_tui.cloud.model import CloudResource, Filesystem
from npa_sop_tui.lifecycle.cloud_steps import owned_resources
from npa_sop_tui.sandbox.fake_cloud_state import default_state
from npa_sop_tui.sandbox.fake_nebius import FakeNebius
from npa_sop_tui.state.stores import default_store

from testkit.moto import MotoServer, team_env

PROJECT = "project-gone"
TOKEN = "destroy-check-token"


def tfstate(cluster_id: str, filesystems: dict[str, str]) -> str:
    """A Terraform state document as the recipe leaves it (types and IDs that matter here)."""
    resources = [
        {"mode": "managed", "type": "nebius_mk8s_v1_cluster", "name": "this",
         "module": "module.k8s", "instances": [{"attributes": {"id": cluster_id}}]},
    ]  # fmt: skip
    resources += [
        {"mode": "managed", "type": "nebius_compute_v1_filesystem", "name": role,
         "module": "module.filestore", "instances": [{"attributes": {"id": fs_id}}]}
        for role, fs_id in filesystems.items()
    ]  # fmt: skip
    return json.dumps({"version": 4, "resources": resources})


async def test_s3_state_destroy_that_leaves_a_filesystem_names_it(
    moto: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = moto.make_bucket(f"npa-destroy-{os.getpid()}")
    for key, value in team_env(moto.endpoint, bucket).items():
        monkeypatch.setenv(key, value)
    store = default_store()
    assert store.shared
    name = "gone"
    jail, spool = "computefilesystem-jail0001", "computefilesystem-spool0001"
    moto.client().put_object(
        Bucket=bucket,
        Key=store.tfstate_key(name),  # type: ignore[attr-defined]
        Body=tfstate("mk8scluster-gone0001", {"jail": jail, "spool": spool}).encode(),
    )
    install_dir = tmp_path / "install"  # no terraform.tfstate here: the state is remote
    install_dir.mkdir()

    owned = owned_resources(store, name, install_dir)
    assert owned.cluster_ids == ["mk8scluster-gone0001"]
    assert sorted(owned.filesystem_ids) == [jail, spool]

    cloud = default_state(project_id=PROJECT)
    cloud.token = TOKEN
    cloud.filesystems[jail] = Filesystem(jail, "soperator-gone-jail", PROJECT, "ready")
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    with FakeNebius(cloud) as server:
        client = connect(CloudSettings(endpoint=server.endpoint, timeout=10))
        remaining = await leftovers(
            client, project_id=PROJECT, name=name,
            cluster_ids=owned.cluster_ids, filesystem_ids=owned.filesystem_ids,
        )  # fmt: skip
        await client.close()
    assert remaining == [f"filesystem soperator-gone-jail ({jail}, ready)"]


async def test_allocations_gpu_clusters_and_buckets_left_behind_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the wider check: the login's static address (a VPC allocation), a GPU
    cluster and a bucket the state owned are looked up by ID after destroy; those Nebius
    still has are named, those gone are not (nor a bucket only scheduled for deletion)."""
    store = default_store()
    install_dir = tmp_path / "install"
    install_dir.mkdir()
    state = json.loads(tfstate("mk8scluster-x1", {}))
    for kind, rid in (("nebius_vpc_v1_allocation", "vpcallocation-1"),
                      ("nebius_compute_v1_gpu_cluster", "computegpucluster-1"),
                      ("nebius_compute_v1_gpu_cluster", "computegpucluster-2"),
                      ("nebius_storage_v1_bucket", "storagebucket-1"),
                      ("nebius_storage_v1_bucket", "storagebucket-2")):  # fmt: skip
        state["resources"].append({"mode": "managed", "type": kind, "name": rid,
                                   "instances": [{"attributes": {"id": rid}}]})  # fmt: skip
    (install_dir / "terraform.tfstate").write_text(json.dumps(state))
    owned = owned_resources(store, "wide", install_dir)
    assert owned.allocation_ids == ["vpcallocation-1"]
    assert owned.gpu_cluster_ids == ["computegpucluster-1", "computegpucluster-2"]
    assert owned.bucket_ids == ["storagebucket-1", "storagebucket-2"]

    cloud = default_state(project_id=PROJECT)
    cloud.token = TOKEN
    for item in (
        CloudResource("VPC allocation", "vpcallocation-1", "wide-login", "allocated"),
        CloudResource("GPU cluster", "computegpucluster-2", "wide-fabric-3", ""),
        CloudResource("bucket", "storagebucket-1", "wide-backups", "active"),
        CloudResource("bucket", "storagebucket-2", "wide-old", "scheduled_for_deletion"),
    ):
        cloud.others[item.id] = item
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    with FakeNebius(cloud) as server:
        client = connect(CloudSettings(endpoint=server.endpoint, timeout=10))
        remaining = await leftovers(
            client, project_id=PROJECT, name="wide", cluster_ids=owned.cluster_ids,
            filesystem_ids=owned.filesystem_ids, allocation_ids=owned.allocation_ids,
            gpu_cluster_ids=owned.gpu_cluster_ids, bucket_ids=owned.bucket_ids,
        )  # fmt: skip
        await client.close()
    assert remaining == [
        "VPC allocation wide-login (vpcallocation-1, allocated)",
        "GPU cluster wide-fabric-3 (computegpucluster-2)",
        "bucket wide-backups (storagebucket-1, active)",
    ]


def test_local_state_is_read_through_the_store_too(tmp_path: Path) -> None:
    store = default_store()
    install_dir = tmp_path / "install"
    install_dir.mkdir()
    (install_dir / "terraform.tfstate").write_text(tfstate("mk8scluster-l1", {"jail": "fs-l1"}))
    owned = owned_resources(store, "local", install_dir)
    assert (owned.cluster_ids, owned.filesystem_ids) == (["mk8scluster-l1"], ["fs-l1"])


@pytest.mark.terraform
async def test_full_destroy_with_s3_state_reports_and_verifies_like_local(
    bucket_env: dict[str, str],
    moto: MotoServer,
    sandbox_in_home: Path,
    fast_standin: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A whole `destroy` (not only the ID reading) with the state in the bucket: progress for
    every resource, the Nebius check after Terraform, destroy-incomplete naming what the cloud
    kept, and a clean second destroy once the cloud lets go."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.lifecycle import Recorder, make_spec, options

    name = "s3gone"
    await lifecycle.deploy(make_spec(name, workers=[{"name": "cpu", "size": 1}]), options=options())
    assert not list(sandbox_in_home.glob(f"**/{name}/terraform.tfstate"))  # the state is remote
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "destroy-leftover")
    seen = Recorder()
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy(name, options=options(), on_event=seen)
    assert any(f"mk8s cluster soperator-{name}" in r for r in info.value.remaining)
    assert "still present in Nebius after destroy" in info.value.message
    removed = [e.remove for e in seen.kinds("plan_summary") if e.phase == "destroy"]
    assert removed and removed[0] > 0
    deleted = [e.addr for e in seen.kinds("resource_finished") if e.action == "delete"]
    assert len(deleted) == removed[0], "the destroy itself shows progress per resource"
    phases = seen.phases()
    assert phases.index("destroy") < phases.index("verify")
    assert inventory.require(name).state == "destroy-incomplete"

    monkeypatch.delenv("NPA_SANDBOX_SCENARIO")
    seen = Recorder()
    done = await lifecycle.destroy(name, options=options(), on_event=seen)
    assert done.status == "destroyed"
    assert any("mk8s cluster and everything else it owned are gone" in e.text
               for e in seen.kinds("log_line"))  # fmt: skip


async def test_a_cluster_deployed_elsewhere_without_its_spec_is_refused(
    bucket_env: dict[str, str], sandbox_in_home: Path, tmp_path: Path
) -> None:
    """Protects destroy from another machine (team state): with no installation here it is
    rebuilt from the spec as deployed, kept in the bucket; without that spec it says so and
    where to destroy from instead."""
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.inventory import InventoryEntry
    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.lifecycle import options

    entry = InventoryEntry(name="elsewhere", kube_context="nebius-elsewhere-slurm")
    entry.install_dir = str(tmp_path / "on-their-laptop")
    inventory.save(entry)
    with pytest.raises(UsageError) as refused:
        await lifecycle.destroy("elsewhere", options=options())
    assert refused.value.message == (
        f"cluster 'elsewhere' has no spec as deployed in {default_store().describe()}, so its "
        "installation cannot be rebuilt on this machine"
    )
    assert refused.value.hint == "destroy it from the machine that deployed it"
