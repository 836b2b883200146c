"""Adopting clusters this product did not deploy, end to end in the sandbox.

The npa home holds what the existing npa leaves (testkit/npa_home.py): its config.yaml, two
clusters it deployed (real `terraform apply` of the stand-in recipe, npa's files around the
state) and a fleet-state file. And a cluster applied by hand with the recipe: a checkout,
`installations/prod`, a hand-written terraform.tfvars, `terraform apply`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from npa_sop_tui.cli.entry import main
from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.model import load_spec

from testkit.lifecycle import ROOT_KEY
from testkit.npa_home import (
    NPA_CONFIG,
    NPA_IDENTITY,
    apply,
    checkout,
    hashes,
    installation,
    npa_deploy,
    terraform_env,
    write_fleet,
)

pytestmark = [pytest.mark.terraform, pytest.mark.slow, pytest.mark.usefixtures("fast_standin")]

IDENTITY = NPA_IDENTITY
CPU = {"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb", "size": 2}
GPU = {
    "name": "gpu",
    "platform": "gpu-h200-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "size": 1,
    "fabric": "fabric-3",
}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["soperator", *args, "--sandbox", "-o", "json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


@pytest.fixture
def npa_files(sandbox_in_home: Path) -> Path:
    """The existing npa's home: config, legacy1 (cpu) and legacy2 (gpu + cpu), a fleet."""
    home = sandbox_in_home
    (home / "config.yaml").write_text(NPA_CONFIG)
    npa_deploy(home, "legacy1", IDENTITY, [CPU], root_key=ROOT_KEY)
    npa_deploy(home, "legacy2", IDENTITY, [GPU, {**CPU, "size": 1}], root_key=ROOT_KEY)
    write_fleet(
        home,
        "team",
        [
            {
                "name": "train",
                "status": "ready",
                "backend": "soperator",
                "project_key": "alpha",
                "cluster_name": "train",
                "project_id": "project-e00alpha",
                "region": "eu-north1",
                "backend_state_root": str(home / "fleet/team/alpha/train/soperator"),
            }
        ],
    )
    return home


def npa_paths(home: Path) -> list[Path]:
    return [home / "config.yaml", home / "soperator" / next(
        p.name for p in (home / "soperator").glob("nebius-solutions-library-*")
    ), home / "fleet"]  # fmt: skip


def only_every_apply_steps(changes: dict[str, Any]) -> None:
    """A plan with no change but what the recipe re-runs on every apply: its kube context
    step (`terraform_data.kubectl_cluster_context`, `triggers_replace = [timestamp()]`) is
    replaced, nothing else is added, changed or destroyed."""
    assert (changes["add"], changes["change"], changes["remove"]) == (1, 0, 1), changes
    assert changes["by_module"] == {"module.k8s": {"replace": 1}}, changes
    assert changes["destructive"] == []


def test_list_status_and_destroy_work_on_npa_clusters_and_leave_npa_files_alone(
    npa_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = npa_files
    before = hashes(home, npa_paths(home))
    assert any(k.endswith("legacy2/terraform.tfstate") for k in before)

    code, listed = cli(capsys, "list")
    assert code == 0 and listed["clusters"] == []
    found = {e["name"]: e for e in listed["found"]}
    assert set(found) == {"legacy1", "legacy2"}
    assert found["legacy1"]["state"] == "deployed" and found["legacy1"]["region"] == "eu-north1"

    code, status = cli(capsys, "status", "--name", "legacy1")
    assert code == 0, status
    assert status["verdict"]["state"] == "ready"
    assert {g["name"] for g in status["kube"]["node_groups"]} >= {"cpu", "system", "login"}
    assert hashes(home, npa_paths(home)) == before  # list and status changed nothing of npa's

    code, destroyed = cli(capsys, "destroy", "--name", "legacy2", "--yes")
    assert code == 0, destroyed
    assert destroyed["status"] == "destroyed" and destroyed["destroyed"] > 0
    after = hashes(home, npa_paths(home))
    # Of npa's files only the destroyed cluster's Terraform state changed (and Terraform's
    # own working folder there, which `terraform init` may rewrite): its tfvars and sidecar,
    # the config, the fleet and everything of legacy1 did not. What was added is Terraform's
    # backup of that state and this product's run folder, beside them.
    legacy2 = "installations/legacy2/"
    changed = {k.split(legacy2)[-1] for k in before if after.get(k) != before[k]}
    assert all(legacy2 in k for k in before if after.get(k) != before[k])
    assert {k for k in changed if not k.startswith(".terraform/")} == {"terraform.tfstate"}
    added = {k.split(legacy2)[-1] for k in set(after) - set(before)}
    assert all(k == "terraform.tfstate.backup" or k.startswith(".npa-run/") for k in added)

    code, listed = cli(capsys, "list")
    states = {e["name"]: e["state"] for e in listed["clusters"]}
    assert states == {"legacy1": "deployed", "legacy2": "destroyed"}
    assert listed["found"] == []
    legacy1 = next(e for e in listed["clusters"] if e["name"] == "legacy1")
    assert legacy1["adoption"]["origin"] == "npa"
    assert legacy1["adoption"]["identity"] == IDENTITY


def test_plan_on_an_adopted_npa_cluster_shows_no_changes_and_deploy_converges_in_place(
    npa_files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = npa_files
    spec_out = tmp_path / "legacy1.yaml"
    code, adopted = cli(capsys, "adopt", "--name", "legacy1", "--spec-out", str(spec_out))
    assert code == 0, adopted
    text = spec_out.read_text()
    assert "Kept as deployed" in text and "nfs_in_k8s" in text
    spec = load_spec(spec_out).spec  # validates
    assert (spec.name, spec.region, spec.project_id) == (
        "legacy1",
        "eu-north1",
        IDENTITY["project_id"],
    )

    code, plan = cli(capsys, "plan", "--spec", str(spec_out))
    assert code == 0, plan
    only_every_apply_steps(plan["changes"])

    install = Path(adopted["install_dir"])
    npa_owned = hashes(home, [install / "terraform.tfvars", install / ".npa-soperator-env.json"])
    grown = yaml.safe_load(spec_out.read_text())
    grown["workers"][0]["size"] = 3
    bigger = tmp_path / "bigger.yaml"
    bigger.write_text(yaml.safe_dump(grown))
    code, deployed = cli(capsys, "deploy", "--spec", str(bigger), "--yes")
    assert code == 0, deployed
    assert deployed["install_dir"] == str(install)  # converged where it is
    assert hashes(home, [install / "terraform.tfvars", install / ".npa-soperator-env.json"]) == (
        npa_owned
    )
    state = json.loads((install / "terraform.tfstate").read_text())
    groups = [r for r in state["resources"]
              if r["name"] == "nebius_mk8s_v1_node_group__worker_v2__update"]  # fmt: skip
    sizes = [i["attributes"]["triggers"]["size"] for r in groups for i in r["instances"]]
    assert sizes == ["3"]
    # the variables it was deployed with stay under the spec's: npa's NFS and shared memory
    applied = json.loads((home / "soperator/legacy1/adopted/terraform.tfvars.json").read_text())
    assert applied["slurm_shared_memory_size_gibibytes"] == 16
    assert applied["nfs_in_k8s"]["enabled"] is True


def test_a_spec_or_project_that_would_move_an_npa_cluster_is_refused(
    npa_files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec_out = tmp_path / "legacy1.yaml"
    assert cli(capsys, "adopt", "--name", "legacy1", "--spec-out", str(spec_out))[0] == 0
    moved = yaml.safe_load(spec_out.read_text())
    moved["project_id"] = "project-e00elsewhere"
    other = tmp_path / "moved.yaml"
    other.write_text(yaml.safe_dump(moved))
    code, error = cli(capsys, "plan", "--spec", str(other))
    assert code == 2
    assert "pinned to its persisted project_id; refusing a provider-replacement" in error["message"]
    config = yaml.safe_load(NPA_CONFIG)
    config["projects"]["prod"] = {**IDENTITY, "project_id": "project-e00prod"}
    (npa_files / "config.yaml").write_text(yaml.safe_dump(config))
    code, error = cli(capsys, "deploy", "--spec", str(spec_out), "--project", "prod", "--yes")
    assert code == 2
    assert "project 'prod' does not match the persisted project_id" in error["message"]


def test_concurrent_first_uses_adopt_once(npa_files: Path) -> None:
    """The app asks for a status twice while the first adoption runs; Terraform locks the
    state while it reads the variables, so the second waits for the first."""
    import asyncio

    from npa_sop_tui.lifecycle.adopt import arequire_cluster

    async def both() -> list[Any]:
        return list(await asyncio.gather(arequire_cluster("legacy1"), arequire_cluster("legacy1")))

    first, second = asyncio.run(both())
    assert first.name == second.name == "legacy1" and first.adoption is not None
    assert first.adoption.adopted == second.adoption.adopted  # one adoption, read twice


def test_a_damaged_sidecar_is_refused_as_npa_refuses_it(
    npa_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sidecar = next(
        npa_files.glob("soperator/*/soperator/installations/legacy2/.npa-soperator-env.json")
    )
    sidecar.write_text("{broken")
    code, listed = cli(capsys, "list")
    assert [e["name"] for e in listed["found"]] == ["legacy1"]
    assert "legacy2" in listed["unusable"][0] and "is not JSON" in listed["unusable"][0]
    code, error = cli(capsys, "destroy", "--name", "legacy2", "--yes")
    assert code == 2 and "is not JSON" in error["message"]


HAND_TFVARS = """\
# Written by hand from the recipe's example.
company_name = "prod"
production = false
filestore_controller_spool = { spec = { size_gibibytes = 128, block_size_kibibytes = 4 } }
filestore_jail = { spec = { size_gibibytes = 2048, block_size_kibibytes = 4 } }
filestore_jail_submounts = [{
  name = "data", mount_path = "/data",
  spec = { size_gibibytes = 2048, block_size_kibibytes = 4 }
}]
nfs_in_k8s = { enabled = false, disk_type = "NETWORK_SSD_IO_M3", filesystem_type = "ext4" }
slurm_operator_version = "4.1.6"
k8s_version = "1.34"
node_group_version = "72"
slurm_nodeset_system = {
  min_size = 3, max_size = 9
  resource = { platform = "cpu-d3", preset = "16vcpu-64gb" }
  boot_disk = { type = "NETWORK_SSD", size_gibibytes = 192, block_size_kibibytes = 4 }
}
slurm_nodeset_controller = {
  size = 1, resource = { platform = "cpu-d3", preset = "16vcpu-64gb" }
  boot_disk = { type = "NETWORK_SSD", size_gibibytes = 256, block_size_kibibytes = 4 }
}
slurm_nodeset_login = {
  size = 1, resource = { platform = "cpu-d3", preset = "16vcpu-64gb" }
  boot_disk = { type = "NETWORK_SSD", size_gibibytes = 256, block_size_kibibytes = 4 }
}
slurm_nodeset_workers = [{
  name = "gpu", size = 2, autoscaling = { enabled = false }
  resource = { platform = "gpu-h200-sxm", preset = "8gpu-128vcpu-1600gb" }
  boot_disk = { type = "NETWORK_SSD", size_gibibytes = 1024, block_size_kibibytes = 4 }
  gpu_cluster = { infiniband_fabric = "fabric-3" }
  preemptible = null, reservation_policy = null, node_local_jail_submounts = []
  node_local_image_disk = {
    enabled = true
    spec = { size_gibibytes = 930, filesystem_type = "ext4", disk_type = "NETWORK_SSD_IO_M3" }
  }
}]
slurm_nodesets_partitions = [
  { name = "main", is_all = true, slurm_nodeset_refs = [], topology = "flat",
    config = "Default=YES" },
  { name = "hidden", is_all = true, slurm_nodeset_refs = [], topology = "flat",
    config = "Hidden=YES" },
]
slurm_login_ssh_root_public_keys = ["@KEY@"]
accounting_enabled = true
filestore_accounting = { spec = { size_gibibytes = 512, block_size_kibibytes = 4 } }
slurm_rest_enabled = true
active_checks_scope = "prod_quick"
slurm_shared_memory_size_gibibytes = 256
backups_password = "s3cret-backups-pw"
backups_schedule = "@daily-random"
backups_prune_schedule = "@daily-random"
backups_retention = { keepDaily = 3 }
cleanup_bucket_on_destroy = false
"""
TEAM = {
    "TF_VAR_region": "eu-north1",
    "TF_VAR_iam_tenant_id": "tenant-e00team",
    "TF_VAR_iam_project_id": "project-e00team",
    "TF_VAR_vpc_subnet_id": "vpcsubnet-e00team",
    "TF_VAR_o11y_iam_tenant_id": "tenant-e00o11y",
    "TF_VAR_o11y_profile": "team-o11y",
}


def test_a_cluster_applied_with_the_recipe_directly_is_adopted_and_plans_no_changes(
    sandbox_in_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = checkout(tmp_path / "checkout" / "soperator")
    install = installation(recipe, "prod", HAND_TFVARS.replace("@KEY@", ROOT_KEY))
    apply(install, {**terraform_env(sandbox_in_home), **TEAM})
    theirs = hashes(tmp_path, [recipe])

    spec_out = tmp_path / "prod.yaml"
    code, adopted = cli(
        capsys, "adopt", "--install-dir", str(install), "--spec-out", str(spec_out),
        "--tenant-id", "tenant-e00team", "--project-id", "project-e00team",
    )  # fmt: skip
    assert code == 0, adopted
    assert adopted["origin"] == "recipe" and adopted["entry"]["state"] == "deployed"
    spec = load_spec(spec_out).spec  # the generated cluster.yaml validates
    assert (spec.region, spec.subnet_id) == ("eu-north1", "vpcsubnet-e00team")  # from the state
    assert (
        spec.jail_size_gib == 2048 and spec.accounting and spec.control_plane.system.max_size == 9
    )
    assert spec.workers[0].docker_cache_gib == 930 and spec.workers[0].boot_disk_gib == 1024
    text = spec_out.read_text()
    assert "# Not in the installation's variables, so defaulted:" in text
    assert (
        "control_plane.accounting.preset" in text and "slurm_shared_memory_size_gibibytes" in text
    )
    assert "s3cret-backups-pw" not in text  # kept by name only, never written in the spec
    variables = sandbox_in_home / "soperator" / "prod" / "adopted-variables.json"
    assert (variables.stat().st_mode & 0o777) == 0o600

    code, plan = cli(capsys, "plan", "--spec", str(spec_out))
    assert code == 0, plan
    only_every_apply_steps(plan["changes"])
    assert "s3cret-backups-pw" not in json.dumps(plan)
    log = Path(plan["log"]).read_text()
    assert "s3cret-backups-pw" not in log
    assert (
        hashes(tmp_path, [recipe]).items()
        >= {k: v for k, v in theirs.items() if ".terraform/" not in k}.items()
    )  # their files are as they were (Terraform's cache aside)


def test_adopting_a_folder_that_is_not_an_applied_installation_is_refused(
    sandbox_in_home: Path, tmp_path: Path
) -> None:
    import asyncio

    from npa_sop_tui.lifecycle.adopt import adopt

    with pytest.raises(UsageError, match="not a folder"):
        asyncio.run(adopt(tmp_path / "nope"))
    (tmp_path / "somewhere").mkdir()
    with pytest.raises(UsageError, match="not an installation of the soperator recipe"):
        asyncio.run(adopt(tmp_path / "somewhere"))


def test_a_recipe_cluster_whose_state_is_in_s3_is_adopted_with_its_own_backend(
    sandbox_in_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the recipe's .envrc sets it up: `terraform_backend_override.tf` with an S3 backend
    (here moto's real S3 API), the keys in AWS_*; nothing is written locally."""
    from testkit.moto import ACCESS_KEY, REGION, SECRET_KEY, MotoServer

    server = MotoServer().start()
    try:
        bucket = server.make_bucket("tfstate-slurm-k8s-team")
        recipe = checkout(tmp_path / "checkout" / "soperator")
        install = installation(recipe, "prod", HAND_TFVARS.replace("@KEY@", ROOT_KEY))
        (install / "terraform_backend_override.tf").write_text(
            'terraform {\n  backend "s3" {\n'
            f'    bucket = "{bucket}"\n    key = "slurm-k8s.tfstate"\n'
            f'    region = "{REGION}"\n    endpoint = "{server.endpoint}"\n'
            "    force_path_style = true\n    skip_credentials_validation = true\n"
            "    skip_region_validation = true\n    skip_metadata_api_check = true\n  }\n}\n"
        )
        keys = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        apply(install, {**terraform_env(sandbox_in_home), **TEAM, **keys})
        assert not (install / "terraform.tfstate").exists()  # the state is in the bucket
        for name, value in {**keys, **TEAM}.items():
            monkeypatch.setenv(name, value)  # the shell the team runs the recipe from

        spec_out = tmp_path / "prod.yaml"
        code, adopted = cli(
            capsys, "adopt", "--install-dir", str(install), "--spec-out", str(spec_out)
        )
        assert code == 0, adopted
        assert adopted["entry"]["state"] == "deployed"  # its resources, read from the bucket
        assert adopted["entry"]["adoption"]["identity"]["tenant_id"] == "tenant-e00team"
        code, plan = cli(capsys, "plan", "--spec", str(spec_out))
        assert code == 0, plan
        only_every_apply_steps(plan["changes"])
        assert not (install / "terraform.tfstate").exists()  # still only in the bucket
        objects = server.client().list_objects_v2(Bucket=bucket)["Contents"]
        assert [o["Key"] for o in objects] == ["slurm-k8s.tfstate"]
    finally:
        server.stop()


def test_state_migrate_moves_an_adopted_npa_clusters_state_when_asked(
    sandbox_in_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Adoption leaves the state where npa keeps it; `state migrate` moves it (asked)."""
    from testkit.moto import MotoServer, team_env

    install = npa_deploy(sandbox_in_home, "mover", IDENTITY, [CPU], root_key=ROOT_KEY)
    spec_out = tmp_path / "mover.yaml"
    assert cli(capsys, "adopt", "--name", "mover", "--spec-out", str(spec_out))[0] == 0
    assert (install / "terraform.tfstate").is_file()  # adopting moved nothing
    server = MotoServer().start()
    try:
        bucket = server.make_bucket("team-state")
        for key, value in team_env(server.endpoint, bucket).items():
            monkeypatch.setenv(key, value)
        code, moved = cli(capsys, "state", "migrate", "--name", "mover", "--to", "s3")
        assert code == 0, moved
        assert not (install / "terraform.tfstate").exists()  # now in the bucket
        objects = server.client().list_objects_v2(Bucket=bucket, Prefix="npa/mover/")
        assert "npa/mover/terraform.tfstate" in [o["Key"] for o in objects["Contents"]]
        code, plan = cli(capsys, "plan", "--spec", str(spec_out))
        assert code == 0, plan
        only_every_apply_steps(plan["changes"])
    finally:
        server.stop()


def test_an_adopted_folder_outside_the_home_is_used_where_it_was_adopted_only(
    sandbox_in_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record says where an adopted installation is, but a record is data (a teammate's
    in the bucket, a copied home): outside the home its folder is used where `adopt` was
    pointed at it on this machine, or where the user names the checkout this time."""
    recipe = checkout(tmp_path / "checkout" / "soperator")
    install = installation(recipe, "prod", HAND_TFVARS.replace("@KEY@", ROOT_KEY))
    apply(install, {**terraform_env(sandbox_in_home), **TEAM})
    spec_out = tmp_path / "prod.yaml"
    code, adopted = cli(
        capsys, "adopt", "--install-dir", str(install), "--spec-out", str(spec_out),
        "--tenant-id", "tenant-e00team", "--project-id", "project-e00team",
    )  # fmt: skip
    assert code == 0, adopted
    here = sandbox_in_home / "soperator" / "prod" / "adopted-here.json"
    assert (here.stat().st_mode & 0o777) == 0o600
    here.unlink()  # as on a machine that only has the record (the team's bucket, a copy)
    code, refused = cli(capsys, "plan", "--spec", str(spec_out))
    assert (code, refused["error"]) == (2, "UntrustedRecordedPath"), refused
    assert "--terraform-dir" in refused["hint"] and "adopt" in refused["hint"]
    assert not (install / ".npa-plan").exists()  # nothing ran there
    code, plan = cli(capsys, "plan", "--spec", str(spec_out), "--terraform-dir", str(recipe))
    assert code == 0, plan
    only_every_apply_steps(plan["changes"])
