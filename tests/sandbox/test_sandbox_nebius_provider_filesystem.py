"""The stand-in provider's filesystem as the recipe uses it: the computed `status`, the data
source, a filesystem deleted outside Terraform noticed on read, a shrink refused as the API
refuses it, deletion protection, and the provider found through the offline mirror under the
recipe's own source address (and the ones older recipes used)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.sandbox.fake_cloud_state import default_state
from npa_sop_tui.sandbox.fake_nebius import FakeNebius
from npa_sop_tui.sandbox.nebius_provider import filesystem as fs
from npa_sop_tui.sandbox.nebius_provider import values
from npa_sop_tui.sandbox.nebius_provider.mirror import ADDRESS, ADDRESSES, SOURCE, VERSION
from npa_sop_tui.sandbox.nebius_provider.sdk_cloud import ENDPOINT_ENV, TOKEN_ENV, SdkCloud

GIB = 2**30


def config(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {name: None for name in fs.NAMES}
    base.update(parent_id="project-a", name="soperator-x-jail", type="NETWORK_SSD",
                size_bytes=2 * GIB, block_size_bytes=4096)  # fmt: skip
    base.update(changes)
    return base


# --- the rules ---------------------------------------------------------------------------


def test_a_smaller_size_is_refused_at_plan_naming_both_sizes() -> None:
    prior = config(id="computefilesystem-1", status=fs.status("READY", 2 * GIB))
    for smaller in (config(size_bytes=GIB), config(size_bytes=None, size_gibibytes=1)):
        planned, replace, refused = fs.plan(prior, {**smaller, "id": "computefilesystem-1"})
        assert planned is None and replace == []
        assert refused == [
            f"filesystem 'soperator-x-jail' cannot shrink from {2 * GIB} to {GIB} bytes: "
            "Nebius filesystems only grow; a smaller one is a new filesystem (change its name "
            "to replace it)"
        ]
    same, _, refused = fs.plan(prior, {**config(size_bytes=None, size_gibibytes=2),
                                       "id": "computefilesystem-1"})  # fmt: skip
    assert same is not None and refused == [] and same["status"] == prior["status"]
    unknown, _, refused = fs.plan(prior, {**config(size_bytes=values.UNKNOWN),
                                          "id": "computefilesystem-1"})  # fmt: skip
    assert unknown is not None and refused == [] and unknown["status"] is values.UNKNOWN


def test_without_an_api_the_status_is_the_planned_one_and_reads_keep_the_state() -> None:
    cloud = fs.DerivedCloud()
    planned, _, _ = fs.plan(None, config())
    created = fs.apply(None, planned, cloud)
    assert created is not None
    assert created["status"] == {"state": "READY", "size_bytes": 2 * GIB, "reconciling": False}
    assert fs.refresh(created, cloud) == created
    assert fs.read_data({"id": created["id"]}, cloud)[1].endswith("no Nebius API to read it from")


def test_a_protected_filesystem_is_not_deleted() -> None:
    prior = config(id="computefilesystem-1", forbid_deletion=True)
    with pytest.raises(RuntimeError, match="has forbid_deletion set"):
        fs.apply(prior, None, fs.DerivedCloud())


def test_the_data_source_needs_an_id() -> None:
    assert fs.validate_data({"id": None}) == ["id must be set: the ID of an existing filesystem"]
    assert fs.validate_data({"id": "computefilesystem-1"}) == []


# --- through the SDK to the fake Nebius ---------------------------------------------------


def test_reads_report_the_clouds_status_and_notice_a_filesystem_gone() -> None:
    state = default_state(project_id="project-a")
    state.token = "t"
    with FakeNebius(state) as fake:
        cloud = SdkCloud(fake.endpoint, "t")
        planned, _, _ = fs.plan(None, config(labels={"team": "a"}))
        created = fs.apply(None, planned, cloud)
        assert created is not None and created["status"]["size_bytes"] == 2 * GIB
        read, error = fs.read_data({"id": created["id"]}, cloud)
        assert error == "" and read is not None
        assert (read["name"], read["type"], read["size_bytes"], read["labels"]) == (
            "soperator-x-jail", "NETWORK_SSD", 2 * GIB, {"team": "a"}
        )  # fmt: skip
        grown = fs.apply(created, {**created, "size_bytes": 3 * GIB, "status": values.UNKNOWN},
                         cloud)  # fmt: skip
        assert grown is not None and grown["status"]["size_bytes"] == 3 * GIB
        assert state.filesystem_specs[created["id"]]["size_bytes"] == 3 * GIB
        refused = "INVALID_ARGUMENT: filesystem size cannot be decreased"
        with pytest.raises(Exception, match=refused):
            cloud.resize(created["id"], GIB)  # the API refuses a shrink too
        del state.filesystems[created["id"]]  # deleted outside Terraform
        assert fs.refresh(grown, cloud) is None
        assert fs.read_data({"id": created["id"]}, cloud) == (
            None, f"filesystem {created['id']} not found"
        )  # fmt: skip


# --- real Terraform through the mirror ----------------------------------------------------

MAIN_TF = """
terraform {
  required_providers {
    nebius = { source = "%(source)s", version = "%(version)s" }
  }
}
variable "size_gib" { type = number }
resource "nebius_compute_v1_filesystem" "jail" {
  parent_id        = "project-a"
  name             = "soperator-x-jail"
  type             = "NETWORK_SSD"
  size_bytes       = var.size_gib * 1024 * 1024 * 1024
  block_size_bytes = 4096
}
data "nebius_compute_v1_filesystem" "jail" {
  id = nebius_compute_v1_filesystem.jail.id
}
output "status_size" { value = nebius_compute_v1_filesystem.jail.status.size_bytes }
output "read_type" { value = data.nebius_compute_v1_filesystem.jail.type }
output "read_size" { value = data.nebius_compute_v1_filesystem.jail.status.size_bytes }
"""


def _terraform(tmp_path: Path, source: str, extra_env: dict[str, str]) -> Any:
    """A folder whose recipe declares the provider as `source`, and a runner using the
    sandbox's own offline mirror and CLI config."""
    from npa_sop_tui.sandbox.local_terraform import prepare

    local = prepare(tmp_path / "home")
    work = tmp_path / "work"
    work.mkdir()
    (work / "main.tf").write_text(MAIN_TF % {"source": source, "version": VERSION})
    env = {**os.environ, **local.env, "CHECKPOINT_DISABLE": "1", **extra_env}

    def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([local.binary, *args, "-no-color"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=180)  # fmt: skip
        if ok:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    return run, work


@pytest.mark.terraform
@pytest.mark.slow
def test_status_data_source_drift_and_shrink_with_real_terraform(tmp_path: Path) -> None:
    state = default_state(project_id="project-a")
    state.token = "tf-token"
    with FakeNebius(state) as fake:
        run, _ = _terraform(tmp_path, SOURCE, {ENDPOINT_ENV: fake.endpoint,
                                               TOKEN_ENV: "tf-token"})  # fmt: skip
        run("init", "-input=false")
        run("apply", "-auto-approve", "-input=false", "-var", "size_gib=2")
        outputs = json.loads(run("output", "-json").stdout)
        assert outputs["status_size"]["value"] == 2 * GIB  # computed, from the cloud
        assert outputs["read_type"]["value"] == "NETWORK_SSD"  # the data source's read
        assert outputs["read_size"]["value"] == 2 * GIB
        (fs_id,) = state.filesystems

        shrink = run("plan", "-input=false", "-var", "size_gib=1", ok=False)
        assert shrink.returncode == 1
        assert "cannot shrink from 2147483648 to 1073741824 bytes" in shrink.stdout + shrink.stderr

        run("apply", "-auto-approve", "-input=false", "-var", "size_gib=3")  # grows in place
        assert list(state.filesystems) == [fs_id]
        assert state.filesystem_specs[fs_id]["size_bytes"] == 3 * GIB

        with state.lock:
            del state.filesystems[fs_id]  # someone deletes it outside Terraform
        drift = run("plan", "-detailed-exitcode", "-input=false", "-var", "size_gib=3", ok=False)
        assert drift.returncode == 2, drift.stdout + drift.stderr  # 2: changes to make
        assert "1 to add, 0 to change, 0 to destroy" in drift.stdout
        run("apply", "-auto-approve", "-input=false", "-var", "size_gib=3")
        assert fs_id in state.filesystems  # created again


@pytest.mark.terraform
@pytest.mark.slow
@pytest.mark.parametrize("source", [SOURCE, ADDRESSES[1]], ids=["public-registry", "nebius-s3"])
def test_the_mirror_serves_the_provider_under_the_recipes_source_addresses(
    source: str, tmp_path: Path
) -> None:
    """The recipe's terraform.tf declares `nebius/nebius` (the public registry); older
    recipes Nebius's own registry host. Both resolve from the sandbox's mirror, offline."""
    run, work = _terraform(tmp_path, source, {})
    done = run("init", "-input=false")
    assert "- Installed" in done.stdout
    lock = (work / ".terraform.lock.hcl").read_text()
    full = source if source.count("/") == 2 else ADDRESS
    assert f'provider "{full}"' in lock and f'version     = "{VERSION}"' in lock
    run("validate")
