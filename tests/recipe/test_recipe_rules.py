"""The recipe's plan-time rules on rendered variables, one broken value at a time (rules.py).

A clean render has no problems; each case then breaks one value the way a renderer bug would
and lists the exact problem text. Numeric limits are checked at, below and above the limit.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from npa_sop_tui.recipe.contract import Contract, load_contract
from npa_sop_tui.recipe.render import render
from npa_sop_tui.recipe.rules import recipe_problems
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.model import spec_from_mapping

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOSbyr48sc2OSnGoHzYfK2Y81o89Abx/PYwOuYuUDoW9 root@vm"
V416 = load_table().contract_commit("4.1.6")
V4113 = load_table().contract_commit("4.1.13")

GPU_CPU = {
    "name": "lab",
    "region": "eu-north1",
    "workers": [
        {
            "name": "gpu",
            "platform": "gpu-h100-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "fabric": "fabric-3",
            "preemptible": True,
        },
        {"name": "cpu", "preset": "16vcpu-64gb", "docker_cache": True, "docker_cache_gib": 93},
    ],
}
GB300 = {
    "name": "lab",
    "region": "eu-north1",
    "slurm_operator_version": "4.1.13",
    "use_default_apparmor_profile": True,
    "workers": [
        {
            "name": "gb",
            "platform": "gpu-gb300",
            "preset": "4gpu-112vcpu-800gb",
            "fabric": "fabric-3",
            "preemptible": True,
            "size": 36,
            "local_nvme_device_count": 4,
            "local_nvme_device_gb": 3840,
        }
    ],
}


def rendered(data: dict[str, Any]) -> dict[str, Any]:
    return render(spec_from_mapping(data), root_login_key=KEY).tfvars


BASE = rendered(GPU_CPU)
BASE_GB300 = rendered(GB300)
Edit = Callable[[dict[str, Any]], Any]


def worker(i: int, **changes: Any) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        tv["slurm_nodeset_workers"][i].update(changes)

    return edit


def nested(var: str, **changes: Any) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        tv[var].update(changes)

    return edit


def top(**changes: Any) -> Edit:
    return lambda tv: tv.update(changes)


def drop(*names: str) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        for name in names:
            del tv[name]

    return edit


def partition(i: int, **changes: Any) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        tv["slurm_nodesets_partitions"][i].update(changes)

    return edit


def image_disk(**spec: Any) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        tv["slurm_nodeset_workers"][1]["node_local_image_disk"]["spec"].update(spec)

    return edit


def boot(var: str, size: int) -> Edit:
    def edit(tv: dict[str, Any]) -> None:
        tv[var]["boot_disk"]["size_gibibytes"] = size

    return edit


NAME_RULE = "company_name breaks ^[a-z][a-z\\d-]*[a-z\\d]+$ (2-32 chars)"
KEYS_RULE = "slurm_login_ssh_root_public_keys needs >= 1 non-empty key"
SYSTEM_RULE = "slurm_nodeset_system sizes break min>=3, max>=min"
HIDDEN = "the hidden partition (used by active checks) is missing"

CASES: dict[str, tuple[Edit, list[str]]] = {
    "required-missing": (drop("company_name"), ["company_name is required", NAME_RULE]),
    "required-null": (top(backups_schedule=None), ["backups_schedule is required"]),
    "env-variable-in-file": (
        top(region="eu-north1", vpc_subnet_id="x"),
        [
            "region must come from TF_VAR_region",
            "vpc_subnet_id must come from TF_VAR_vpc_subnet_id",
        ],
    ),
    "name-1": (top(company_name="a"), [NAME_RULE]),
    "name-2": (top(company_name="ab"), []),
    "name-32": (top(company_name="a" * 32), []),
    "name-33": (top(company_name="a" * 33), [NAME_RULE]),
    "name-shape": (top(company_name="Lab"), [NAME_RULE]),
    "version-not-a-string": (
        top(k8s_version=1.3, node_group_version="", slurm_operator_version=None),
        [
            "slurm_operator_version is required",
            "k8s_version must be a non-empty string",
            "node_group_version must be a non-empty string",
            "slurm_operator_version must be a non-empty string",
        ],
    ),
    "no-root-keys": (top(slurm_login_ssh_root_public_keys=[]), [KEYS_RULE]),
    "blank-root-key": (top(slurm_login_ssh_root_public_keys=[KEY, " "]), [KEYS_RULE]),
    "active-checks": (
        top(active_checks_scope="everything"),
        ["active_checks_scope is not valid for this version"],
    ),
    "production-without-url": (
        top(production=True),
        ["production=true needs iam_merge_request_url"],
    ),
    "production-with-url": (top(production=True, iam_merge_request_url="https://mr"), []),
    "system-min-2": (nested("slurm_nodeset_system", min_size=2, max_size=2), [SYSTEM_RULE]),
    "system-min-3": (nested("slurm_nodeset_system", min_size=3, max_size=3), []),
    "system-min-4": (nested("slurm_nodeset_system", min_size=4, max_size=4), []),
    "system-max-below-min": (nested("slurm_nodeset_system", min_size=4, max_size=3), [SYSTEM_RULE]),
    "system-empty": (
        top(slurm_nodeset_system={}),
        [SYSTEM_RULE, "slurm_nodeset_system.boot_disk is required by this recipe"],
    ),
    "system-max-missing": (
        lambda tv: tv["slurm_nodeset_system"].pop("max_size"),
        [SYSTEM_RULE],
    ),
    "controller-two": (
        nested("slurm_nodeset_controller", size=2),
        ["slurm_nodeset_controller.size must be 1"],
    ),
    "system-boot-127": (
        boot("slurm_nodeset_system", 127),
        ["slurm_nodeset_system.boot_disk below 128 GiB"],
    ),
    "system-boot-128": (boot("slurm_nodeset_system", 128), []),
    "controller-boot-127": (
        boot("slurm_nodeset_controller", 127),
        ["slurm_nodeset_controller.boot_disk below 128 GiB"],
    ),
    "login-boot-255": (
        boot("slurm_nodeset_login", 255),
        ["slurm_nodeset_login.boot_disk below 256 GiB"],
    ),
    "login-boot-256": (boot("slurm_nodeset_login", 256), []),
    "accounting-boot-127": (
        boot("slurm_nodeset_accounting", 127),
        ["slurm_nodeset_accounting.boot_disk below 128 GiB"],
    ),
    "boot-disk-size-missing": (
        nested("slurm_nodeset_controller", boot_disk={"type": "NETWORK_SSD"}),
        ["slurm_nodeset_controller.boot_disk below 128 GiB"],
    ),
    "null-nodeset-then-small-disk": (
        lambda tv: (tv.update(slurm_nodeset_login=None), boot("slurm_nodeset_accounting", 127)(tv)),
        ["slurm_nodeset_accounting.boot_disk below 128 GiB"],
    ),
    "boot-disk-missing": (
        nested("slurm_nodeset_login", boot_disk=None),
        ["slurm_nodeset_login.boot_disk is required by this recipe"],
    ),
    "accounting-without-nodeset": (
        top(accounting_enabled=True, slurm_nodeset_accounting=None),
        ["accounting needs slurm_nodeset_accounting"],
    ),
    "accounting-off-without-nodeset": (top(slurm_nodeset_accounting=None), []),
    "both-nfs": (
        lambda tv: (tv["nfs"].update(enabled=True), tv["nfs_in_k8s"].update(enabled=True)),
        ["nfs and nfs_in_k8s cannot both be enabled"],
    ),
    "one-nfs": (lambda tv: tv["nfs"].update(enabled=True), []),
    "empty-submounts-not-allowed": (
        top(allow_empty_jail_submounts=False),
        ["jail submounts are empty without allow_empty_jail_submounts"],
    ),
    "submounts-given": (
        top(allow_empty_jail_submounts=False, filestore_jail_submounts=[{"name": "data"}]),
        [],
    ),
    "backups-on": (
        top(backups_enabled="auto"),
        ["backups must be force-disabled (the password is a placeholder)"],
    ),
    # --- workers -------------------------------------------------------------------------------
    "no-workers": (top(slurm_nodeset_workers=[]), ["no worker nodesets"]),
    "duplicate-workers": (worker(1, name="gpu"), ["worker names are not unique"]),
    "gpu-not-first": (
        lambda tv: tv["slurm_nodeset_workers"].reverse(),
        ["a GPU nodeset exists but slurm_nodeset_workers[0] is not GPU (CUDA lookup)"],
    ),
    "unknown-preset": (
        worker(1, resource={"platform": "cpu-d3", "preset": "3vcpu"}),
        ["worker cpu: unknown platform/preset"],
    ),
    "size-0": (worker(1, size=0), ["worker cpu: size < 1"]),
    "size-missing": (
        lambda tv: tv["slurm_nodeset_workers"][1].pop("size"),
        ["worker cpu: size < 1"],
    ),
    "unknown-preset-then-more": (
        lambda tv: (
            worker(0, resource={"platform": "gpu-h100-sxm", "preset": "9gpu"})(tv),
            worker(1, size=0)(tv),
        ),
        ["worker gpu: unknown platform/preset", "worker cpu: size < 1"],
    ),
    "size-1": (worker(1, size=1), []),
    "cluster-on-cpu": (
        worker(1, gpu_cluster={"infiniband_fabric": "fabric-3"}),
        ["worker cpu: gpu_cluster on a preset that cannot cluster"],
    ),
    "cluster-without-fabric": (
        worker(0, gpu_cluster={"infiniband_fabric": " "}),
        ["worker gpu: gpu_cluster without a fabric"],
    ),
    "cluster-fabric-null": (
        worker(0, gpu_cluster={"infiniband_fabric": None}),
        ["worker gpu: gpu_cluster without a fabric"],
    ),
    "preemptible-reserved": (
        worker(0, reservation_policy={"policy": "STRICT", "reservation_ids": ["r"]}),
        ["worker gpu: preemptible groups cannot use reservations"],
    ),
    "cpu-reserved": (
        worker(1, reservation_policy={"policy": "STRICT", "reservation_ids": ["r"]}),
        ["worker cpu: CPU groups cannot use reservations"],
    ),
    "image-disk-missing": (
        worker(1, node_local_image_disk=None),
        ["worker cpu: node_local_image_disk.enabled is required"],
    ),
    "image-disk-no-enabled": (
        worker(1, node_local_image_disk={}),
        ["worker cpu: node_local_image_disk.enabled is required"],
    ),
    "image-disk-off": (worker(1, node_local_image_disk={"enabled": False}), []),
    "image-disk-type": (
        image_disk(disk_type="NETWORK_HDD"),
        ["worker cpu: image disk type must be NRD or IO_M3"],
    ),
    "image-disk-92": (
        image_disk(size_gibibytes=92),
        ["worker cpu: image disk size is not a multiple of 93"],
    ),
    "image-disk-186": (image_disk(size_gibibytes=186), []),
    "image-disk-filesystem": (
        image_disk(filesystem_type="ntfs"),
        ["worker cpu: image disk filesystem must be ext4 or xfs"],
    ),
    "image-disk-without-spec": (
        worker(1, node_local_image_disk={"enabled": True}),
        [
            "worker cpu: image disk type must be NRD or IO_M3",
            "worker cpu: image disk filesystem must be ext4 or xfs",
        ],
    ),
    "worker-boot-missing": (
        worker(1, boot_disk=None),
        ["worker cpu: boot_disk is required by this recipe"],
    ),
    "worker-submounts-missing": (
        worker(0, node_local_jail_submounts=None),
        ["worker gpu: node_local_jail_submounts is required by this recipe"],
    ),
    "nvlink-off-gb300": (
        worker(1, nvlink={"enabled": True, "type": "GB300"}),
        ["worker cpu: NVLink is only for gpu-gb300"],
    ),
    "worker-boot-127": (
        worker(
            1, boot_disk={"type": "NETWORK_SSD", "size_gibibytes": 127, "block_size_kibibytes": 4}
        ),
        ["worker cpu: boot disk below 128 GiB"],
    ),
    "worker-boot-128": (
        worker(
            1, boot_disk={"type": "NETWORK_SSD", "size_gibibytes": 128, "block_size_kibibytes": 4}
        ),
        [],
    ),
    # --- partitions ------------------------------------------------------------------------
    "partition-is-all-and-refs": (
        partition(0, slurm_nodeset_refs=["cpu"]),
        ["partition main: needs is_all or refs, not both"],
    ),
    "partition-neither": (
        partition(0, is_all=False),
        ["partition main: needs is_all or refs, not both"],
    ),
    "partition-refs": (partition(0, is_all=False, slurm_nodeset_refs=["cpu", "gpu"]), []),
    "partition-unknown-ref": (
        partition(0, is_all=False, slurm_nodeset_refs=["cpu", "gpu-rack0"]),
        ["partition main: refs must name generated nodesets (gpu, cpu)"],
    ),
    "partition-tree-ib": (partition(0, topology="tree-ib"), []),
    "partition-block-nvl72": (
        partition(0, topology="block-nvl72"),
        ["partition main: topology 'block-nvl72' not available"],
    ),
    "partition-no-topology": (
        lambda tv: tv["slurm_nodesets_partitions"][0].pop("topology"),
        ["partition main: topology None not available"],
    ),
    "hidden-missing": (lambda tv: tv["slurm_nodesets_partitions"].pop(), [HIDDEN]),
    "no-partitions": (top(slurm_nodesets_partitions=[]), [HIDDEN]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_broken_value_is_named(case: str) -> None:
    edit, expected = CASES[case]
    tv = copy.deepcopy(BASE)
    edit(tv)
    assert recipe_problems(tv, "4.1.6") == expected


def test_clean_renders_have_no_problems() -> None:
    assert recipe_problems(BASE, "4.1.6") == []
    assert recipe_problems(BASE_GB300, "4.1.13", contract=load_contract(V4113)) == []
    assert recipe_problems(BASE, "9.9.9") == ["unsupported recipe version 9.9.9"]


def test_a_cpu_only_cluster_has_no_gpu_topology() -> None:
    tv = rendered({**GPU_CPU, "workers": GPU_CPU["workers"][1:]})
    tv["slurm_nodesets_partitions"][0]["topology"] = "tree-ib"
    assert recipe_problems(tv, "4.1.6") == ["partition main: topology 'tree-ib' not available"]


GB300_CASES: dict[str, tuple[Edit, list[str]]] = {
    "nvlink-missing": (worker(0, nvlink=None), ["worker gb: GB300 needs nvlink.enabled = true"]),
    "nvlink-off": (
        worker(0, nvlink={"enabled": False, "type": "GB300"}),
        ["worker gb: GB300 needs nvlink.enabled = true"],
    ),
    "production-partial-rack": (
        lambda tv: (tv.update(production=True, iam_merge_request_url="u"), worker(0, size=35)(tv)),
        ["worker gb: GB300 size must be a multiple of 18 in production"],
    ),
    "production-whole-racks": (
        lambda tv: (tv.update(production=True, iam_merge_request_url="u"), worker(0, size=54)(tv)),
        [],
    ),
    "partial-rack-not-production": (worker(0, size=35), []),
    "production-size-missing": (
        lambda tv: (
            tv.update(production=True, iam_merge_request_url="u"),
            tv["slurm_nodeset_workers"][0].pop("size"),
        ),
        ["worker gb: size < 1"],
    ),
    "submounts-given-4.1.13": (
        top(allow_empty_jail_submounts=False, filesystem_jail_submounts=[{"name": "d"}]),
        [],
    ),
    "submounts-missing-4.1.13": (
        top(allow_empty_jail_submounts=False),
        ["jail submounts are empty without allow_empty_jail_submounts"],
    ),
    "racks-by-name": (partition(0, is_all=False, slurm_nodeset_refs=["gb-rack0", "gb-rack1"]), []),
    "rack-beyond-size": (
        partition(0, is_all=False, slurm_nodeset_refs=["gb-rack2"]),
        ["partition main: refs must name generated nodesets (gb-rack0, gb-rack1)"],
    ),
    "one-more-node-one-more-rack": (
        lambda tv: (
            worker(0, size=37)(tv),
            partition(0, is_all=False, slurm_nodeset_refs=["gb-rack2"])(tv),
        ),
        [],
    ),
    "small-pool-one-rack": (
        lambda tv: (
            worker(0, size=1)(tv),
            partition(0, is_all=False, slurm_nodeset_refs=["gb-rack0"])(tv),
        ),
        [],
    ),
    "block-nvl72-of-gb300": (partition(0, topology="block-nvl72"), []),
    "tree-ib-of-gb300": (partition(0, topology="tree-ib"), []),
}


@pytest.mark.parametrize("case", list(GB300_CASES))
def test_gb300_racks_and_topologies(case: str) -> None:
    edit, expected = GB300_CASES[case]
    tv = copy.deepcopy(BASE_GB300)
    edit(tv)
    assert recipe_problems(tv, "4.1.13", contract=load_contract(V4113)) == expected


def test_4_1_13_narrows_what_each_topology_may_hold() -> None:
    contract = load_contract(V4113)
    tv = rendered(
        {
            **GPU_CPU,
            "slurm_operator_version": "4.1.13",
            "use_default_apparmor_profile": True,
            "k8s_version": "1.36",
        }
    )
    tv["slurm_nodesets_partitions"][0]["topology"] = "tree-ib"
    assert recipe_problems(tv, "4.1.13", contract=contract) == [
        "partition main: tree-ib partitions may hold GPU nodesets only"
    ]
    tv["slurm_nodesets_partitions"][0].update(is_all=False, slurm_nodeset_refs=["gpu"])
    assert recipe_problems(tv, "4.1.13", contract=contract) == []
    mixed = copy.deepcopy(BASE_GB300)
    mixed["slurm_nodeset_workers"].append(copy.deepcopy(tv["slurm_nodeset_workers"][0]))
    mixed["slurm_nodesets_partitions"][0]["topology"] = "block-nvl72"
    assert recipe_problems(mixed, "4.1.13", contract=contract) == [
        "partition main: block-nvl72 partitions may hold GB300 nodesets only"
    ]
    # before 4.1.13 a topology only has to exist in the cluster
    old = copy.deepcopy(BASE)
    old["slurm_nodesets_partitions"][0]["topology"] = "tree-ib"
    assert recipe_problems(old, "4.1.6") == []


def _contract_with(base: Contract, variable: str, attr: str, **spec: Any) -> Contract:
    variables = copy.deepcopy(base.variables)
    tree = variables[variable]["type"]
    while "object" not in tree:
        tree = next(iter(tree.values()))
    tree["object"][attr].update(spec)
    return Contract(base.commit, base.soperator_version, base.required_version, variables)


def test_optional_attributes_may_be_left_out() -> None:
    contract = load_contract(V416)
    tv = copy.deepcopy(BASE)
    tv["slurm_nodeset_login"]["boot_disk"] = None
    tv["slurm_nodeset_workers"][1]["boot_disk"] = None
    del tv["slurm_nodesets_partitions"][0]["topology"]
    relaxed = _contract_with(contract, "slurm_nodeset_login", "boot_disk", optional=True)
    relaxed = _contract_with(relaxed, "slurm_nodeset_workers", "boot_disk", optional=True)
    relaxed = _contract_with(relaxed, "slurm_nodesets_partitions", "topology", optional=True)
    assert recipe_problems(tv, "4.1.6", contract=relaxed) == []
    assert recipe_problems(tv, "4.1.6", contract=contract) == [
        "slurm_nodeset_login.boot_disk is required by this recipe",
        "worker cpu: boot_disk is required by this recipe",
        "partition main: topology None not available",
    ]
