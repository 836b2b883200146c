"""recipe/adopted.py: variables read back into a spec; the deployed variables kept under the
spec's own fields."""

from __future__ import annotations

import copy
from typing import Any

from npa_sop_tui.recipe.adopted import merge, mismatches, spec_from_variables
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.spec.validate import validate_spec

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ test"


def worker(name: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "size": 2,
        "autoscaling": {"enabled": False},
        "resource": {"platform": "cpu-d3", "preset": "8vcpu-32gb"},
        "boot_disk": {"type": "NETWORK_SSD", "size_gibibytes": 512, "block_size_kibibytes": 4},
        "preemptible": None,
        "reservation_policy": None,
        "max_pods": 32,
        "node_local_image_disk": {"enabled": False},
    }
    base.update(over)
    return base


def deployed() -> dict[str, Any]:
    return {
        "company_name": "legacy1",
        "slurm_operator_version": "4.1.6",
        "k8s_version": "1.34",
        "node_group_version": "72",
        "accounting_enabled": False,
        "slurm_rest_enabled": False,
        "telemetry_enabled": False,
        "use_default_apparmor_profile": False,
        "slurm_login_ssh_root_public_keys": [KEY],
        "filestore_jail": {"spec": {"size_gibibytes": 512, "block_size_kibibytes": 4}},
        "slurm_nodeset_system": {
            "min_size": 3,
            "max_size": 24,
            "resource": {"platform": "cpu-d3", "preset": None},
            "boot_disk": {"size_gibibytes": 128},
        },
        "slurm_nodeset_controller": {"size": 1, "resource": {"preset": None}},
        "slurm_nodeset_login": {"size": 1, "resource": {"preset": "16vcpu-64gb"}},
        "slurm_shared_memory_size_gibibytes": 16,
        "nfs_in_k8s": {"enabled": True, "size_gibibytes": 186},
        "slurm_nodeset_workers": [
            worker(
                "gpu",
                resource={"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"},
                gpu_cluster={"infiniband_fabric": "fabric-3"},
                size=1,
            ),
            worker("cpu"),
        ],
    }


def test_the_variables_read_back_as_a_valid_spec_naming_what_was_defaulted() -> None:
    identity = {"region": "eu-north1", "tenant_id": "tenant-e00a", "project_id": "project-e00a"}
    mapping, defaulted = spec_from_variables(deployed(), identity)
    spec = spec_from_mapping(mapping)
    assert not [f for f in validate_spec(spec) if f.is_error]
    assert spec.name == "legacy1" and spec.region == "eu-north1"
    assert spec.root_login_ssh_public_key == KEY
    assert spec.control_plane.system.max_size == 24 and spec.control_plane.system.preset is None
    gpu, cpu = spec.workers
    assert (gpu.name, gpu.platform, gpu.fabric, gpu.size) == ("gpu", "gpu-h200-sxm", "fabric-3", 1)
    assert (cpu.boot_disk_gib, cpu.preemptible, cpu.docker_cache) == (512, False, False)
    assert spec.use_default_apparmor_profile is False and spec.slurm_rest_enabled is None
    # a null preset means "the tier decides" as ours does; an absent role is defaulted
    assert defaulted == ["control_plane.accounting.preset"]


def test_merge_keeps_what_the_spec_does_not_say_and_takes_what_it_does() -> None:
    old = deployed()
    rendered = copy.deepcopy(old)
    rendered["slurm_shared_memory_size_gibibytes"] = 64  # ours would differ: not governed
    rendered["nfs_in_k8s"] = {"enabled": False}
    rendered["slurm_nodeset_system"]["min_size"] = 5  # governed
    rendered["slurm_nodeset_workers"] = [
        worker("cpu", size=4, max_pods=64),  # governed size; max_pods is not the spec's
        worker("new", size=1),  # a new pool
    ]  # the gpu pool was dropped from the spec
    final = merge(old, rendered, kept=set())
    assert final["slurm_shared_memory_size_gibibytes"] == 16
    assert final["nfs_in_k8s"] == {"enabled": True, "size_gibibytes": 186}
    assert final["slurm_nodeset_system"]["min_size"] == 5
    assert final["slurm_nodeset_system"]["boot_disk"] == {"size_gibibytes": 128}
    names = [w["name"] for w in final["slurm_nodeset_workers"]]
    assert names == ["cpu", "new"]
    cpu = final["slurm_nodeset_workers"][0]
    assert cpu["size"] == 4 and cpu["max_pods"] == 32
    assert old["slurm_nodeset_workers"][1]["size"] == 2  # the deployed document is not changed


def test_merge_of_its_own_render_is_the_deployed_variables() -> None:
    old = deployed()
    assert merge(old, old, kept=set()) == old


def test_null_and_absent_are_the_same_and_a_mismatch_is_kept() -> None:
    old = deployed()
    rendered = copy.deepcopy(old)
    del rendered["slurm_nodeset_workers"][1]["preemptible"]  # absent = null
    rendered["slurm_nodeset_workers"][1]["gpu_cluster"] = None  # not in the deployed one
    assert mismatches(old, rendered) == []
    assert merge(old, rendered, kept=set()) == old  # written exactly as it was

    two_keys = copy.deepcopy(old)
    two_keys["slurm_login_ssh_root_public_keys"] = [KEY, "ssh-ed25519 AAAAother second"]
    found = mismatches(two_keys, old)
    assert found == [("slurm_login_ssh_root_public_keys", two_keys[
        "slurm_login_ssh_root_public_keys"], [KEY])]  # fmt: skip
    kept = {where for where, _, _ in found}
    assert merge(two_keys, old, kept=kept)["slurm_login_ssh_root_public_keys"][1].endswith("second")


def test_a_reservation_is_the_specs_only_with_run_time_capacity() -> None:
    old = deployed()
    old["slurm_nodeset_workers"][0]["reservation_policy"] = {
        "policy": "STRICT",
        "reservation_ids": ["capacityblockgroup-e00old"],
    }
    rendered = copy.deepcopy(old)
    rendered["slurm_nodeset_workers"][0]["reservation_policy"] = None  # no capacity given
    assert merge(old, rendered, kept=set())["slurm_nodeset_workers"][0]["reservation_policy"]
    rendered["slurm_nodeset_workers"][0]["reservation_policy"] = {
        "policy": "STRICT",
        "reservation_ids": ["capacityblockgroup-e00new"],
    }
    final = merge(old, rendered, kept=set(), reserved={"gpu"})
    assert final["slurm_nodeset_workers"][0]["reservation_policy"]["reservation_ids"] == [
        "capacityblockgroup-e00new"
    ]
