"""Every validation rule with the exact findings a user sees (validate.py).

Each case changes one thing in a clean spec and lists every finding it must produce: level,
path, message and hint, word for word. Numeric rules are checked at, below and above their
limit, and every warning has a case where it must stay silent. A rule that fires for the
wrong input, at the wrong place, or with a different text fails here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from npa_sop_tui.spec.catalog import ROLES, load_catalog
from npa_sop_tui.spec.model import SoperatorSpec
from npa_sop_tui.spec.validate import validate_spec
from npa_sop_tui.spec.validate_cluster import slug

# A real ed25519 public key (ssh-keygen output); public keys are not secrets.
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOSbyr48sc2OSnGoHzYfK2Y81o89Abx/PYwOuYuUDoW9 root@vm"
BASE: dict[str, Any] = {
    "name": "demo",
    "region": "eu-north1",
    "workers": [{"name": "cpu", "preset": "16vcpu-64gb", "size": 2}],
}
H100 = {"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb"}
FABRICS_EU_NORTH1 = "fabric-3, fabric-2, fabric-4, fabric-6"
GB300 = {"name": "gb", "platform": "gpu-gb300", "preset": "4gpu-112vcpu-800gb"}
NVME = {"local_nvme_device_count": 4, "local_nvme_device_gb": 3840}

Row = tuple[str, str, str, str | None]


def E(path: str, message: str, hint: str | None = None) -> Row:
    return ("error", path, message, hint)


def W(path: str, message: str, hint: str | None = None) -> Row:
    return ("warning", path, message, hint)


def cpu(**changes: Any) -> dict[str, Any]:
    return {"name": "cpu", "preset": "16vcpu-64gb", "size": 2, **changes}


def gpu(**changes: Any) -> dict[str, Any]:
    return {**H100, "fabric": "fabric-3", "preemptible": True, **changes}


def rows(changes: dict[str, Any], capacity: dict[str, str] | None = None) -> list[Row]:
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    spec = SoperatorSpec.model_validate(data)
    return [(f.level, f.path, f.message, f.hint) for f in validate_spec(spec, capacity=capacity)]


NAME_RULE = (
    "breaks the recipe's company_name rule: 2-32 characters, lowercase letters, digits and "
    "'-', starting with a letter and ending with a letter or digit"
)
POOL_NAME_RULE = (
    "must be lowercase letters, digits and '-', start with a letter, end with a letter or "
    "digit, at most 40 characters (it names Slurm nodes and Kubernetes node groups)"
)
NVME_NEEDED = (
    "gpu-gb300 workers use local NVMe (on by default in the recipe), which needs the number of "
    "devices and each device's size in GB"
)
NVME_HINT = "set local_nvme_device_count and local_nvme_device_gb from the platform's specification"
ON_DEMAND = "GPU pool 'gpu' is on-demand: on-demand GPU quota is often 0"
ON_DEMAND_HINT = "use preemptible: true, or reserved capacity (a capacity block group)"
ID_IN_SPEC = "a capacity block group ID is written in the spec"
ID_IN_SPEC_HINT = (
    "keep IDs out of committed files: give them at run time (POOL=ID in "
    "NPA_CAPACITY_BLOCK_GROUPS, or the capacity option of the call)"
)
SUPPORTED = "4.1.6, 4.1.7, 4.1.12, 4.1.13"
APPARMOR = (
    "the unconfined Enroot/Pyxis override is verified only with Soperator 4.1.6; 4.1.7 needs "
    "the default AppArmor profile"
)
NEW = {"slurm_operator_version": "4.1.13", "use_default_apparmor_profile": True}

CASES: dict[str, tuple[dict[str, Any], dict[str, str] | None, list[Row]]] = {
    "clean": ({}, None, []),
    # --- name: 2..32 characters ----------------------------------------------------------
    "name-1-char": (
        {"name": "a"},
        None,
        [E("name", f"cluster name 'a' {NAME_RULE}", "try 'my-cluster'")],
    ),
    "name-2-chars": ({"name": "ab"}, None, []),
    "name-32-chars": ({"name": "a" * 32}, None, []),
    "name-33-chars": (
        {"name": "a" * 33},
        None,
        [E("name", f"cluster name {'a' * 33!r} {NAME_RULE}", f"try {'a' * 32!r}")],
    ),
    "name-uppercase": (
        {"name": "Demo"},
        None,
        [E("name", f"cluster name 'Demo' {NAME_RULE}", "try 'demo'")],
    ),
    # --- region ----------------------------------------------------------------------------
    "region-typo": (
        {"region": "eu-nort1"},
        None,
        [E("region", "unknown region 'eu-nort1'", "did you mean 'eu-north1'?")],
    ),
    "region-unknown": (
        {"region": "mars1"},
        None,
        [
            E(
                "region",
                "unknown region 'mars1'",
                "expected one of: eu-north1, eu-north2, eu-west1, eu-west2, me-west1, "
                "uk-south1, us-central1, us-north1",
            )
        ],
    ),
    "region-left-for-deploy": ({"region": None}, None, []),
    # --- identity: IDs as Nebius shows them -----------------------------------------------
    "identity-ids": (
        {"tenant_id": "x", "project_id": "project-e00abc", "subnet_id": "subnet-1"},
        None,
        [
            E(
                "tenant_id",
                "tenant_id 'x' must start with 'tenant-'",
                "copy the ID as Nebius shows it (tenant-e00…), or leave tenant_id out and set it "
                "in config.yaml or the environment at deploy time",
            ),
            E(
                "subnet_id",
                "subnet_id 'subnet-1' must start with 'vpcsubnet-'",
                "copy the ID as Nebius shows it (vpcsubnet-e00…), or leave subnet_id out and set "
                "it in config.yaml or the environment at deploy time",
            ),
        ],
    ),
    # --- operator, Kubernetes and node image versions -----------------------------------------
    "version-not-semver": (
        {"slurm_operator_version": "latest"},
        None,
        [
            E(
                "slurm_operator_version",
                "must be an explicit semantic version such as '4.1.6', got 'latest'",
                f"supported: {SUPPORTED}",
            )
        ],
    ),
    "version-leading-zero": (
        {"slurm_operator_version": "0.1.6"},
        None,
        [
            E(
                "slurm_operator_version",
                "must be an explicit semantic version such as '4.1.6', got '0.1.6'",
                f"supported: {SUPPORTED}",
            )
        ],
    ),
    "version-4.1.0": (
        {"slurm_operator_version": "4.1.0"},
        None,
        [
            E(
                "slurm_operator_version",
                "slurm_operator_version 4.1.0 is no longer verified",
                "replace it with 4.1.6",
            )
        ],
    ),
    "version-unsupported": (
        {"slurm_operator_version": "4.1.9"},
        None,
        [
            E(
                "slurm_operator_version",
                "Soperator 4.1.9 is not a recipe version this tool can render",
                f"supported versions: {SUPPORTED}",
            )
        ],
    ),
    "apparmor-off-on-4.1.6": ({"use_default_apparmor_profile": False}, None, []),
    "apparmor-off-on-4.1.7": (
        {"slurm_operator_version": "4.1.7", "use_default_apparmor_profile": False},
        None,
        [E("use_default_apparmor_profile", APPARMOR, "set use_default_apparmor_profile: true")],
    ),
    "apparmor-unset-on-4.1.7": ({"slurm_operator_version": "4.1.7"}, None, []),
    "k8s-not-major-minor": (
        {"k8s_version": "1"},
        None,
        [E("k8s_version", "must be MAJOR.MINOR such as \"1.34\", got '1'")],
    ),
    "k8s-4.1.13-old": (
        {**NEW, "k8s_version": "1.34"},
        None,
        [
            E(
                "k8s_version",
                "recipe 4.1.13 only knows GPU drivers for Kubernetes 1.35 and 1.36 "
                "(driver_presets.tf), not 1.34",
                'set k8s_version: "1.35" (one minor at a time; `npa soperator upgrade` takes '
                "the steps)",
            )
        ],
    ),
    "k8s-4.1.13-two-minors-old": (
        {**NEW, "k8s_version": "1.33"},
        None,
        [
            E(
                "k8s_version",
                "recipe 4.1.13 only knows GPU drivers for Kubernetes 1.35 and 1.36 "
                "(driver_presets.tf), not 1.33",
                "Kubernetes moves one minor at a time: upgrade 1.33 step by step to 1.35 first "
                "(`npa soperator upgrade --k8s-version 1.35`)",
            )
        ],
    ),
    "k8s-4.1.13-too-new": (
        {**NEW, "k8s_version": "1.37"},
        None,
        [
            E(
                "k8s_version",
                "recipe 4.1.13 only knows GPU drivers for Kubernetes 1.35 and 1.36 "
                "(driver_presets.tf), not 1.37",
                'set k8s_version: "1.36"',
            )
        ],
    ),
    "k8s-4.1.13-1.35": ({**NEW, "k8s_version": "1.35"}, None, []),
    "k8s-4.1.13-1.36": ({**NEW, "k8s_version": "1.36"}, None, []),
    "k8s-4.1.13-default": (NEW, None, []),
    "k8s-4.1.6-any": ({"k8s_version": "1.30"}, None, []),
    "node-group-version": (
        {"node_group_version": "7 2"},
        None,
        [E("node_group_version", "must be a node image version such as \"72\", got '7 2'")],
    ),
    "node-group-version-dotted": ({"node_group_version": "72.1"}, None, []),
    # --- root login key ----------------------------------------------------------------------
    "key-and-legacy-alias": (
        {"root_login_ssh_public_key": KEY, "ssh_public_keys": [KEY]},
        None,
        [
            E(
                "ssh_public_keys",
                "set only root_login_ssh_public_key; ssh_public_keys is its legacy alias",
            )
        ],
    ),
    "legacy-alias-one": ({"ssh_public_keys": [KEY]}, None, []),
    "legacy-alias-two": (
        {"ssh_public_keys": [KEY, KEY]},
        None,
        [
            E(
                "ssh_public_keys",
                "ssh_public_keys accepts exactly one root-login public-key record",
                "use root_login_ssh_public_key",
            )
        ],
    ),
    "legacy-alias-bad-record": (
        {"ssh_public_keys": ["ssh-ed25519 !!!"]},
        None,
        [
            E(
                "ssh_public_keys[0]",
                "root login SSH key has an invalid base64 blob",
                "paste the single line of your .pub file",
            )
        ],
    ),
    "root-key-bad-record": (
        {"root_login_ssh_public_key": "ssh-ed25519 !!!"},
        None,
        [
            E(
                "root_login_ssh_public_key",
                "root login SSH key has an invalid base64 blob",
                "paste the single line of your .pub file",
            )
        ],
    ),
    # --- control plane -----------------------------------------------------------------------
    "system-min-2": (
        {"control_plane": {"system": {"min_size": 2}}},
        None,
        [E("control_plane.system.min_size", "must be >= 3 (recipe rule)", "use 3")],
    ),
    "system-min-3": ({"control_plane": {"system": {"min_size": 3}}}, None, []),
    "system-max-below-min": (
        {"control_plane": {"system": {"min_size": 5, "max_size": 4}}},
        None,
        [E("control_plane.system.max_size", "must be >= min_size (5)")],
    ),
    "system-max-equals-min": (
        {"control_plane": {"system": {"min_size": 5, "max_size": 5}}},
        None,
        [],
    ),
    "cp-preset-unknown": (
        {"control_plane": {"controller": {"preset": "16vcpu-64g"}}},
        None,
        [
            E(
                "control_plane.controller.preset",
                "'16vcpu-64g' is not a cpu-d3 preset (control-plane nodes run on cpu-d3)",
                "did you mean '16vcpu-64gb'?",
            )
        ],
    ),
    "cp-preset-far-off": (
        {"control_plane": {"login": {"preset": "huge"}}},
        None,
        [
            E(
                "control_plane.login.preset",
                "'huge' is not a cpu-d3 preset (control-plane nodes run on cpu-d3)",
                "expected one of: 2vcpu-8gb, 4vcpu-16gb, 8vcpu-32gb, 16vcpu-64gb, 32vcpu-128gb, "
                "48vcpu-192gb, 64vcpu-256gb, 96vcpu-384gb, 128vcpu-512gb, 160vcpu-640gb, "
                "192vcpu-768gb, 224vcpu-896gb, …",
            )
        ],
    ),
    # login: recipe minimum 16 vCPU
    "login-below-recipe-minimum": (
        {"control_plane": {"login": {"preset": "8vcpu-32gb"}}},
        None,
        [
            E(
                "control_plane.login.preset",
                "8vcpu-32gb is insufficient for the login node group (recipe rule: at least "
                "16 vCPU)",
                "choose a larger preset or omit it so the sizing tier decides",
            )
        ],
    ),
    "login-at-recipe-minimum": ({"control_plane": {"login": {"preset": "16vcpu-64gb"}}}, None, []),
    # system: recipe minimum 8, npa's XS tier minimum 16
    "system-below-recipe-minimum": (
        {"control_plane": {"system": {"preset": "4vcpu-16gb"}}},
        None,
        [
            E(
                "control_plane.system.preset",
                "4vcpu-16gb is insufficient for the system node group (recipe rule: at least "
                "8 vCPU)",
                "choose a larger preset or omit it so the sizing tier decides",
            )
        ],
    ),
    "system-at-recipe-below-tier": (
        {"control_plane": {"system": {"preset": "8vcpu-32gb"}}},
        None,
        [
            E(
                "control_plane.system.preset",
                "8vcpu-32gb is insufficient for XS sizing (system requires at least 16 vCPU)",
                "omit the preset to use the recipe's sizing tier",
            )
        ],
    ),
    "system-at-tier-minimum": ({"control_plane": {"system": {"preset": "16vcpu-64gb"}}}, None, []),
    # controller: recipe minimum 2, tier minimum 16
    "controller-at-recipe-below-tier": (
        {"control_plane": {"controller": {"preset": "2vcpu-8gb"}}},
        None,
        [
            E(
                "control_plane.controller.preset",
                "2vcpu-8gb is insufficient for XS sizing (controller requires at least 16 vCPU)",
                "omit the preset to use the recipe's sizing tier",
            )
        ],
    ),
    # accounting: only checked with accounting on; recipe minimum 4, tier minimum 8
    "accounting-preset-ignored-when-off": (
        {"control_plane": {"accounting": {"preset": "2vcpu-8gb"}}},
        None,
        [],
    ),
    "accounting-below-recipe-minimum": (
        {"accounting": True, "control_plane": {"accounting": {"preset": "2vcpu-8gb"}}},
        None,
        [
            E(
                "control_plane.accounting.preset",
                "2vcpu-8gb is insufficient for the accounting node group (recipe rule: at "
                "least 4 vCPU)",
                "choose a larger preset or omit it so the sizing tier decides",
            )
        ],
    ),
    "accounting-at-recipe-below-tier": (
        {"accounting": True, "control_plane": {"accounting": {"preset": "4vcpu-16gb"}}},
        None,
        [
            E(
                "control_plane.accounting.preset",
                "4vcpu-16gb is insufficient for XS sizing (accounting requires at least 8 vCPU)",
                "omit the preset to use the recipe's sizing tier",
            )
        ],
    ),
    "accounting-at-tier-minimum": (
        {"accounting": True, "control_plane": {"accounting": {"preset": "8vcpu-32gb"}}},
        None,
        [],
    ),
    # --- accounting and REST -----------------------------------------------------------------
    "rest-without-accounting": (
        {"slurm_rest_enabled": True},
        None,
        [
            E(
                "slurm_rest_enabled",
                "slurm_rest_enabled=true requires accounting=true with Soperator 4.1.6: the "
                "controller skips REST reconciliation without an accounting database",
                "set accounting: true, or remove slurm_rest_enabled (it follows accounting)",
            )
        ],
    ),
    "rest-with-accounting": ({"slurm_rest_enabled": True, "accounting": True}, None, []),
    "rest-off-without-accounting": ({"slurm_rest_enabled": False}, None, []),
    # --- jail: at least 1 GiB ------------------------------------------------------------------
    "jail-0": ({"jail_size_gib": 0}, None, [E("jail_size_gib", "must be at least 1 GiB")]),
    "jail-1": ({"jail_size_gib": 1}, None, []),
    "jail-2": ({"jail_size_gib": 2}, None, []),
    # --- worker pools --------------------------------------------------------------------------
    "no-workers": ({"workers": []}, None, [E("workers", "at least one worker pool is required")]),
    "duplicate-pools": (
        {"workers": [cpu(), cpu(), cpu()]},
        None,
        [
            E("workers[1].name", "duplicate worker pool name 'cpu' (also workers[0])"),
            E("workers[2].name", "duplicate worker pool name 'cpu' (also workers[0])"),
        ],
    ),
    "pool-name-40": ({"workers": [cpu(name="p" * 40)]}, None, []),
    "pool-name-41": (
        {"workers": [cpu(name="p" * 41)]},
        None,
        [
            E(
                "workers[0].name",
                f"worker pool name {'p' * 41!r} {POOL_NAME_RULE}",
                f"try {'p' * 32!r}",
            )
        ],
    ),
    "pool-name-shape": (
        {"workers": [cpu(name="CPU_1")]},
        None,
        [E("workers[0].name", f"worker pool name 'CPU_1' {POOL_NAME_RULE}", "try 'cpu-1'")],
    ),
    "pool-size-0": ({"workers": [cpu(size=0)]}, None, [E("workers[0].size", "must be >= 1")]),
    "pool-size-1": ({"workers": [cpu(size=1)]}, None, []),
    "boot-disk-511": (
        {"workers": [cpu(boot_disk_gib=511)]},
        None,
        [E("workers[0].boot_disk_gib", "must be >= 512 (npa rule), got 511")],
    ),
    "boot-disk-512": ({"workers": [cpu(boot_disk_gib=512)]}, None, []),
    "boot-disk-513": ({"workers": [cpu(boot_disk_gib=513)]}, None, []),
    "platform-unknown": (
        {"workers": [cpu(platform="cpu-d4")]},
        None,
        [E("workers[0].platform", "unknown platform 'cpu-d4'", "did you mean 'cpu-d3'?")],
    ),
    "platform-not-in-region": (
        {"region": "eu-west2", "workers": [gpu(fabric="eu-west2-a")]},
        None,
        [
            E(
                "workers[0].platform",
                "gpu-h100-sxm is not offered in eu-west2",
                "platforms in eu-west2: cpu-d3, gpu-b300-sxm",
            )
        ],
    ),
    "platform-region-unset": ({"region": None, "workers": [gpu()]}, None, []),
    "preset-unknown": (
        {"workers": [cpu(preset="16vcpu-64")]},
        None,
        [
            E(
                "workers[0].preset",
                "'16vcpu-64' is not a preset of cpu-d3",
                "did you mean '16vcpu-64gb'?",
            )
        ],
    ),
    # worker: recipe minimum 4 vCPU, and cpu-e2's two small presets are excluded outright
    "worker-below-minimum": (
        {"workers": [cpu(preset="2vcpu-8gb")]},
        None,
        [
            E(
                "workers[0].preset",
                "2vcpu-8gb is insufficient for a worker node group (recipe rule: at least 4 vCPU)",
            )
        ],
    ),
    "worker-at-minimum": ({"workers": [cpu(preset="4vcpu-16gb")]}, None, []),
    "worker-excluded-preset": (
        {"workers": [cpu(platform="cpu-e2", preset="4vcpu-16gb")]},
        None,
        [
            E(
                "workers[0].preset",
                "4vcpu-16gb is insufficient for a worker node group (recipe rule: at least 4 vCPU)",
            )
        ],
    ),
    "worker-e2-allowed": ({"workers": [cpu(platform="cpu-e2", preset="8vcpu-32gb")]}, None, []),
    "capacity-for-unknown-pool-close": (
        {},
        {"cpuu": "capacityblockgroup-x"},
        [
            E(
                "workers",
                "capacity block group given at run time for unknown worker pool 'cpuu'",
                "did you mean 'cpu'?",
            )
        ],
    ),
    "capacity-for-unknown-pool-far": (
        {"workers": [cpu(), cpu(name="big")]},
        {"zzz": "capacityblockgroup-x"},
        [
            E(
                "workers",
                "capacity block group given at run time for unknown worker pool 'zzz'",
                "pools: cpu, big",
            )
        ],
    ),
    "mixed-architectures": (
        {"workers": [gpu(**GB300, **NVME, size=18), cpu()]},
        None,
        [
            E(
                "workers",
                "worker pools mix CPU architectures (amd64, arm64); all workers share one jail, "
                "so the recipe requires one architecture",
            )
        ],
    ),
    "gpu-after-cpu": (
        {"workers": [cpu(), cpu(name="cpu2"), gpu(), cpu(name="cpu3")]},
        None,
        [
            W(
                "workers[1]",
                "CPU pool 'cpu2' comes before a GPU pool; rendering puts GPU pools first "
                "because the recipe takes the CUDA version from the first pool",
            )
        ],
    ),
    "gpu-first": ({"workers": [gpu(), cpu()]}, None, []),
    # --- docker cache: positive multiples of 93 GiB ------------------------------------------
    "cache-0": (
        {"workers": [cpu(docker_cache=True, docker_cache_gib=0)]},
        None,
        [
            E(
                "workers[0].docker_cache_gib",
                "must be a positive multiple of 93 (the disk's allocation unit), got 0",
                "use 93 or 186",
            )
        ],
    ),
    "cache-92": (
        {"workers": [cpu(docker_cache=True, docker_cache_gib=92)]},
        None,
        [
            E(
                "workers[0].docker_cache_gib",
                "must be a positive multiple of 93 (the disk's allocation unit), got 92",
                "use 93 or 186",
            )
        ],
    ),
    "cache-93": ({"workers": [cpu(docker_cache=True, docker_cache_gib=93)]}, None, []),
    "cache-94": (
        {"workers": [cpu(docker_cache=True, docker_cache_gib=94)]},
        None,
        [
            E(
                "workers[0].docker_cache_gib",
                "must be a positive multiple of 93 (the disk's allocation unit), got 94",
                "use 93 or 186",
            )
        ],
    ),
    "cache-900": (
        {"workers": [cpu(docker_cache=True, docker_cache_gib=900)]},
        None,
        [
            E(
                "workers[0].docker_cache_gib",
                "must be a positive multiple of 93 (the disk's allocation unit), got 900",
                "use 837 or 930",
            )
        ],
    ),
    "cache-off-size-ignored": ({"workers": [cpu(docker_cache_gib=0)]}, None, []),
    "cache-disk-type": (
        {"workers": [cpu(docker_cache=True, docker_cache_disk_type="NETWORK_SSD")]},
        None,
        [
            E(
                "workers[0].docker_cache_disk_type",
                "'NETWORK_SSD' cannot hold the image cache",
                "did you mean 'NETWORK_SSD_IO_M3'?",
            )
        ],
    ),
    "cache-disk-type-far": (
        {"workers": [cpu(docker_cache=True, docker_cache_disk_type="hdd")]},
        None,
        [
            E(
                "workers[0].docker_cache_disk_type",
                "'hdd' cannot hold the image cache",
                "expected one of: NETWORK_SSD_NON_REPLICATED, NETWORK_SSD_IO_M3",
            )
        ],
    ),
    # --- GB300: racks of 18 (a partial rack only below 18) and the local NVMe layout -----------
    "nvme-off-gb300": (
        {"workers": [cpu(local_nvme_device_gb=3840)]},
        None,
        [E("workers[0].local_nvme_device_count", "local NVMe is rendered for gpu-gb300 only")],
    ),
    "gb300-17": ({"workers": [gpu(**GB300, **NVME, size=17)]}, None, []),
    "gb300-18": ({"workers": [gpu(**GB300, **NVME, size=18)]}, None, []),
    "gb300-19": (
        {"workers": [gpu(**GB300, **NVME, size=19)]},
        None,
        [
            E(
                "workers[0].size",
                "GB300 pools come in racks of 18: 19 nodes is not whole racks",
                "use 18 or 36",
            )
        ],
    ),
    "gb300-40": (
        {"workers": [gpu(**GB300, **NVME, size=40)]},
        None,
        [
            E(
                "workers[0].size",
                "GB300 pools come in racks of 18: 40 nodes is not whole racks",
                "use 36 or 54",
            )
        ],
    ),
    "gb300-nvme-missing": (
        {"workers": [gpu(**GB300, size=18)]},
        None,
        [
            E("workers[0].local_nvme_device_count", NVME_NEEDED, NVME_HINT),
            E("workers[0].local_nvme_device_gb", NVME_NEEDED, NVME_HINT),
        ],
    ),
    "gb300-nvme-0": (
        {"workers": [gpu(**GB300, local_nvme_device_count=0, local_nvme_device_gb=1, size=2)]},
        None,
        [E("workers[0].local_nvme_device_count", NVME_NEEDED, NVME_HINT)],
    ),
    # --- fabric -------------------------------------------------------------------------------
    "fabric-on-cpu": (
        {"workers": [cpu(fabric="fabric-3")]},
        None,
        [E("workers[0].fabric", "CPU pools must not set 'fabric'", "remove fabric")],
    ),
    "fabric-missing": (
        {"workers": [gpu(fabric=None)]},
        None,
        [
            E(
                "workers[0].fabric",
                "GPU preset '8gpu-128vcpu-1600gb' needs an InfiniBand 'fabric' so its nodes "
                "join one GPU cluster",
                f"fabrics in eu-north1: {FABRICS_EU_NORTH1}",
            )
        ],
    ),
    "fabric-missing-no-region": (
        {"region": None, "workers": [gpu(fabric=None)]},
        None,
        [
            E(
                "workers[0].fabric",
                "GPU preset '8gpu-128vcpu-1600gb' needs an InfiniBand 'fabric' so its nodes "
                "join one GPU cluster",
                "set fabric",
            )
        ],
    ),
    "fabric-missing-region-without-fabrics": (
        {
            "region": "me-west1",
            "workers": [gpu(platform="gpu-b200-sxm-a", preset="8gpu-160vcpu-1792gb", fabric=None)],
        },
        None,
        [
            E(
                "workers[0].fabric",
                "GPU preset '8gpu-160vcpu-1792gb' needs an InfiniBand 'fabric' so its nodes "
                "join one GPU cluster",
                "set fabric",
            )
        ],
    ),
    "fabric-not-needed-one-gpu": (
        {"workers": [gpu(preset="1gpu-16vcpu-200gb", fabric=None)]},
        None,
        [],
    ),
    "fabric-ignored-one-gpu": (
        {"workers": [gpu(preset="1gpu-16vcpu-200gb")]},
        None,
        [
            W(
                "workers[0].fabric",
                "1gpu-16vcpu-200gb cannot join a GPU cluster; the fabric is ignored",
                "remove fabric, or use an 8-GPU preset",
            )
        ],
    ),
    "fabric-ignored-one-gpu-other-region": (
        {"workers": [gpu(preset="1gpu-16vcpu-200gb", fabric="nonsense!")]},
        None,
        [
            W(
                "workers[0].fabric",
                "1gpu-16vcpu-200gb cannot join a GPU cluster; the fabric is ignored",
                "remove fabric, or use an 8-GPU preset",
            )
        ],
    ),
    "fabric-known": ({"workers": [gpu()]}, None, []),
    "fabric-region-unset": ({"region": None, "workers": [gpu(fabric="nonsense!")]}, None, []),
    "fabric-other-region": (
        {"workers": [gpu(fabric="eu-north2-a")]},
        None,
        [
            E(
                "workers[0].fabric",
                "fabric 'eu-north2-a' belongs to region eu-north2, not eu-north1",
                f"expected one of: {FABRICS_EU_NORTH1}",
            )
        ],
    ),
    "fabric-other-region-close": (
        {"region": "us-central1", "workers": [gpu(platform="gpu-h200-sxm", fabric="fabric-3")]},
        None,
        [
            E(
                "workers[0].fabric",
                "fabric 'fabric-3' belongs to region eu-north1, not us-central1",
                "expected one of: us-central1-a, us-central1-b",
            )
        ],
    ),
    "fabric-unknown-close": (
        {"workers": [gpu(fabric="fabric 3")]},
        None,
        [
            E(
                "workers[0].fabric",
                "'fabric 3' does not look like a Nebius InfiniBand fabric name",
                "did you mean 'fabric-3'?",
            )
        ],
    ),
    "fabric-unknown-far": (
        {"workers": [gpu(fabric="zz")]},
        None,
        [
            E(
                "workers[0].fabric",
                "'zz' does not look like a Nebius InfiniBand fabric name",
                "fabric names look like fabric-3 or us-central1-a",
            )
        ],
    ),
    "fabric-plausible": (
        {"workers": [gpu(fabric="fabric-9")]},
        None,
        [
            W(
                "workers[0].fabric",
                "fabric 'fabric-9' is not in the recipe's catalog for eu-north1; check it "
                "against the capacity you were given",
            )
        ],
    ),
    "fabric-unverified": (
        {"workers": [gpu(fabric="fabric-2")]},
        None,
        [
            W(
                "workers[0].fabric",
                "fabric 'fabric-2' is not in the recipe's catalog for eu-north1; check it "
                "against the capacity you were given",
            )
        ],
    ),
    # --- reserved capacity ---------------------------------------------------------------------
    "capacity-id-and-name": (
        {
            "workers": [
                gpu(
                    preemptible=False,
                    capacity_block_group="capacityblockgroup-a",
                    capacity_block_group_name="blk",
                )
            ]
        },
        None,
        [
            E(
                "workers[0].capacity_block_group_name",
                "set only one of capacity_block_group or capacity_block_group_name",
            ),
            W("workers[0].capacity_block_group", ID_IN_SPEC, ID_IN_SPEC_HINT),
        ],
    ),
    "capacity-name-on-cpu": (
        {"workers": [cpu(capacity_block_group_name="blk")]},
        None,
        [
            E(
                "workers[0].capacity_block_group",
                "reserved capacity selectors are valid only for GPU worker pools",
            )
        ],
    ),
    "capacity-run-time-on-cpu": (
        {},
        {"cpu": "capacityblockgroup-x"},
        [
            E(
                "workers[0]",
                "reserved capacity is valid only for GPU pools (capacity block group given at "
                "run time)",
            )
        ],
    ),
    "capacity-name-preemptible": (
        {"workers": [gpu(capacity_block_group_name="blk")]},
        None,
        [
            E(
                "workers[0].preemptible",
                "reserved capacity is mutually exclusive with preemptible=true",
                "set preemptible: false to use a capacity block",
            )
        ],
    ),
    "capacity-run-time-preemptible": (
        {"workers": [gpu()]},
        {"gpu": "capacityblockgroup-x"},
        [
            E(
                "workers[0].preemptible",
                "reserved capacity is mutually exclusive with preemptible=true (capacity block "
                "group given at run time)",
                "set preemptible: false to use a capacity block",
            )
        ],
    ),
    "capacity-name": (
        {"workers": [gpu(preemptible=False, capacity_block_group_name="blk")]},
        None,
        [],
    ),
    "capacity-run-time": (
        {"workers": [gpu(preemptible=False)]},
        {"gpu": "capacityblockgroup-x"},
        [],
    ),
    "capacity-id-in-spec": (
        {"workers": [gpu(preemptible=False, capacity_block_group="capacityblockgroup-x")]},
        None,
        [W("workers[0].capacity_block_group", ID_IN_SPEC, ID_IN_SPEC_HINT)],
    ),
    "capacity-id-odd-prefix": (
        {"workers": [gpu(preemptible=False, capacity_block_group="cbg-x")]},
        None,
        [
            W(
                "workers[0].capacity_block_group",
                "capacity block group IDs start with 'capacityblockgroup-'",
            ),
            W("workers[0].capacity_block_group", ID_IN_SPEC, ID_IN_SPEC_HINT),
        ],
    ),
    "on-demand-gpu": (
        {"workers": [gpu(preemptible=False)]},
        None,
        [W("workers[0]", ON_DEMAND, ON_DEMAND_HINT)],
    ),
    "on-demand-cpu": ({"workers": [cpu(preemptible=False)]}, None, []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rule_findings_word_for_word(case: str) -> None:
    changes, capacity, expected = CASES[case]
    assert rows(changes, capacity) == expected


def test_findings_keep_rule_order_across_groups() -> None:
    """Several rules at once: every finding, in validate_spec's order (name first)."""
    found = rows(
        {"name": "X", "region": "mars1", "jail_size_gib": 0, "workers": [cpu(size=0)]}, None
    )
    assert [(level, path) for level, path, _, _ in found] == [
        ("error", "name"),
        ("error", "region"),
        ("error", "jail_size_gib"),
        ("error", "workers[0].size"),
    ]


@pytest.mark.parametrize(
    ("raw", "suggestion"),
    [
        ("Big Lab_2!", "big-lab-2"),
        ("9lives", "lives"),
        ("ab!", "ab"),
        ("x", "my-cluster"),
        ("ab", "ab"),
        ("--ab--", "ab"),
        ("Q" * 40, "q" * 32),
        ("a" * 31 + "-b", "a" * 31),
    ],
)
def test_slug_suggestion(raw: str, suggestion: str) -> None:
    assert slug(raw) == suggestion


def test_catalog_names_every_minimum_the_rules_read() -> None:
    """validate.py indexes these tables directly: a gap would fail loudly, so none exists."""
    cat = load_catalog()
    assert set(ROLES) <= set(cat.role_min_vcpu)
    tiers = [t.name for t in cat.sizing_tiers]
    for role in ("system", "controller", "login", "accounting"):
        assert list(cat.control_plane_min_vcpu[role]) == tiers
