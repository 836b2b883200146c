"""Spec → the variables of one recipe commit, shaped by that commit's contract.

Names and shapes are read from the contract rather than keyed on a version number: which
jail variable exists (`filestore_jail` or `filesystem_jail`), whether its spec has a `type`,
whether NFS is flat or `{enabled, spec}`, which worker attributes exist, whether main.tf reads
the controller spool unconditionally, whether GB300 is hosted. Every object is written whole,
since tfvars replace objects without merging. Where this file picks a value, docs/spec.md
("Recipe fidelity") names the upstream file it follows.
"""

from __future__ import annotations

from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.recipe.contract import Contract
from npa_sop_tui.spec.catalog import Catalog
from npa_sop_tui.spec.model import SoperatorSpec, WorkerPoolSpec

GB300_PLATFORM = "gpu-gb300"
GB300_RACK = 18  # nodes per NVLink rack and per generated nodeset (main.tf)
# The upstream example terraform.tfvars' modprobe lines for GPU workers.
NVIDIA_CONFIG_LINES = [
    "options nvidia NVreg_RestrictProfilingToAdminUsers=0",
    "options nvidia NVreg_EnableStreamMemOPs=1",
    'options nvidia NVreg_RegistryDwords="PeerMappingOverride=1;"',
]
PARTITION_COMMON = "PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP OverSubscribe=YES"
ACTIVE_CHECKS_SCOPE = "essential"  # in every commit's enumeration; no GPU burn-in wait
SPOOL_GIB = 128  # the example terraform.tfvars' controller spool
# Boot disks of the control-plane node groups (GiB; the cloud preflight counts them too).
BOOT_DISK_TYPE = "NETWORK_SSD"
SYSTEM_BOOT_GIB, CONTROLLER_BOOT_GIB, LOGIN_BOOT_GIB, ACCOUNTING_BOOT_GIB = 192, 256, 256, 128
ACCOUNTING_GIB = 512  # the example's accounting filestore / MariaDB PVC
NFS_IN_K8S_FLAT = {  # 4.1.6 main.tf lowercases disk_type/filesystem_type even when disabled
    "enabled": False,
    "version": "1.2.0",
    "use_stable_repo": True,
    "size_gibibytes": 3720,
    "disk_type": "NETWORK_SSD_IO_M3",
    "filesystem_type": "ext4",
    "threads": 8,
}
NFS_FLAT = {
    "enabled": False,
    "size_gibibytes": 3720,
    "mount_path": "/home",
    "resource": {"platform": "cpu-d3", "preset": "32vcpu-128gb"},
    "public_ip": False,
}


def boot_disk(size: int) -> dict[str, Any]:
    return {"type": BOOT_DISK_TYPE, "size_gibibytes": size, "block_size_kibibytes": 4}


def hosts_gb300(contract: Contract) -> bool:
    return contract.has_attr("slurm_nodeset_workers", "nvlink") and contract.has_attr(
        "slurm_nodeset_workers", "local_nvme"
    )


def gb300_refusal(spec: SoperatorSpec, contract: Contract) -> str | None:
    """Why this commit cannot run the spec's GB300 pools, or None."""
    if not any(p.platform == GB300_PLATFORM for p in spec.workers):
        return None
    if not hosts_gb300(contract):
        return (
            f"recipe {contract.commit[:8]} (Soperator {contract.soperator_version}) does not "
            "host GB300: its worker nodesets have no nvlink/local_nvme attributes"
        )
    return None


def rack_names(name: str, size: int) -> list[str]:
    """The Slurm nodesets main.tf generates for a GB300 pool: `<name>-rack<N>`, one per
    started rack of 18 nodes (at least one)."""
    racks = max(1, -(-size // GB300_RACK))
    return [f"{name}-rack{i}" for i in range(racks)]


# --- storage --------------------------------------------------------------------------------


def _filestore(contract: Contract, name: str, size: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"size_gibibytes": size, "block_size_kibibytes": 4}
    if contract.has_attr(name, "spec", "type"):
        spec = {"type": "NETWORK_SSD", **spec}
    if contract.has_attr(name, "spec", "forbid_deletion"):
        spec["forbid_deletion"] = False
    return {"spec": spec}


def _read_unguarded(contract: Contract, path: str, *, accounting: bool) -> bool:
    for deref in contract.null_dereferences:
        if deref["path"] != path:
            continue
        when = deref.get("when")
        if not when:
            return True
        for flags in when:
            if all(f["path"] == "accounting_enabled" and f["equals"] == accounting for f in flags):
                return True
    return False


def storage(spec: SoperatorSpec, contract: Contract) -> dict[str, Any]:
    out: dict[str, Any] = {"controller_state_on_filestore": False}
    jail = "filesystem_jail" if contract.declares("filesystem_jail") else "filestore_jail"
    out[jail] = _filestore(contract, jail, spec.jail_size_gib)
    out[f"{jail}_submounts"] = []
    spool = "filestore_controller_spool"
    needed = contract.variables[spool]["required"] or _read_unguarded(
        contract, spool, accounting=spec.accounting
    )
    out[spool] = _filestore(contract, spool, SPOOL_GIB) if needed else None
    acct = "filestore_accounting"
    if spec.accounting and _read_unguarded(contract, acct, accounting=True):
        out[acct] = _filestore(contract, acct, ACCOUNTING_GIB)
    else:
        out[acct] = None
    if contract.declares("accounting_storage_size_gibibytes"):
        out["accounting_storage_size_gibibytes"] = ACCOUNTING_GIB
    if contract.has_attr("nfs", "spec"):
        out["nfs"] = {"enabled": False}
    else:
        out["nfs"] = dict(NFS_FLAT)
    if contract.has_attr("nfs_in_k8s", "spec"):
        out["nfs_in_k8s"] = {"enabled": False}
    else:
        out["nfs_in_k8s"] = dict(NFS_IN_K8S_FLAT)
    if contract.declares("slurm_nodeset_nfs"):
        out["slurm_nodeset_nfs"] = None
    return out


# --- nodesets -------------------------------------------------------------------------------


def _worker(
    pool: WorkerPoolSpec, cat: Catalog, reservation: str | None, contract: Contract
) -> dict[str, Any]:
    preset = cat.preset(pool.platform, pool.preset)
    clusterable = bool(preset and preset.gpu_cluster_compatible)
    image_disk: dict[str, Any] = {"enabled": False}
    if pool.docker_cache:
        image_disk = {
            "enabled": True,
            "spec": {
                "size_gibibytes": pool.docker_cache_gib,
                "filesystem_type": "ext4",
                "disk_type": pool.docker_cache_disk_type,
            },
        }
    worker: dict[str, Any] = {
        "name": pool.name,
        "size": pool.size,
        # A fixed count: the type's default {enabled=true, min_size=0} could start empty.
        "autoscaling": {"enabled": False},
        "resource": {"platform": pool.platform, "preset": pool.preset},
        "boot_disk": boot_disk(pool.boot_disk_gib),
        # Only gpu_cluster-compatible presets attach a GPU cluster; for the rest a fabric would
        # still create an unused GPU cluster, so it is left out.
        "gpu_cluster": (
            {"infiniband_fabric": pool.fabric} if clusterable and pool.fabric else None
        ),
        "preemptible": {} if pool.preemptible else None,
        "reservation_policy": (
            {"policy": "STRICT", "reservation_ids": [reservation]} if reservation else None
        ),
        "features": None,
        "create_partition": None,
        "ephemeral_nodes": False,
        "initial_number_ephemeral_nodes": 0,
        "persistent_volume_claim_retention_policy": {
            "when_deleted": "Delete",
            "when_scaled": "Delete",
        },
        "max_pods": 32,
        "node_local_jail_submounts": [],
        "node_local_image_disk": image_disk,
    }
    if pool.platform == GB300_PLATFORM:
        # main.tf's NVLink instance group per rack, and local NVMe that is on by default for
        # gpu-gb300 and then needs its device layout.
        worker["nvlink"] = {"enabled": True, "type": "GB300"}
        worker["local_nvme"] = {
            "enabled": True,
            "device_count": pool.local_nvme_device_count,
            "device_capacity_gigabytes": pool.local_nvme_device_gb,
            "mount_path": "/mnt/local-nvme",
        }
    attrs = contract.object_attrs("slurm_nodeset_workers")
    return {k: v for k, v in worker.items() if k in attrs}


def ordered_pools(spec: SoperatorSpec) -> list[WorkerPoolSpec]:
    """GPU pools first: the recipe takes the Slurm CUDA version from workers[0]."""
    return [p for p in spec.workers if p.is_gpu()] + [p for p in spec.workers if not p.is_gpu()]


def partitions() -> list[dict[str, Any]]:
    # `hidden` is used by the active checks and must be kept; flat exists in every layout.
    return [
        {
            "name": name,
            "is_all": True,
            "slurm_nodeset_refs": [],
            "topology": "flat",
            "config": f"{flag} {PARTITION_COMMON}",
        }
        for name, flag in (("main", "Default=YES"), ("hidden", "Hidden=YES"))
    ]


def nodesets(
    spec: SoperatorSpec, cat: Catalog, contract: Contract, reservations: dict[str, str]
) -> dict[str, Any]:
    cp = spec.control_plane
    gb300 = any(p.platform == GB300_PLATFORM for p in spec.workers)
    out: dict[str, Any] = {
        "slurm_nodeset_system": {
            "min_size": cp.system.min_size,
            "max_size": cp.system.effective_max_size,
            "resource": {"platform": "cpu-d3", "preset": cp.system.preset},
            "boot_disk": boot_disk(SYSTEM_BOOT_GIB),
        },
        "slurm_nodeset_controller": {
            "size": 1,
            "resource": {"platform": "cpu-d3", "preset": cp.controller.preset},
            "boot_disk": boot_disk(CONTROLLER_BOOT_GIB),
        },
        "slurm_nodeset_login": {
            "size": 1,
            "resource": {"platform": "cpu-d3", "preset": cp.login.preset},
            "boot_disk": boot_disk(LOGIN_BOOT_GIB),
        },
        "slurm_nodeset_accounting": {
            "resource": {"platform": "cpu-d3", "preset": cp.accounting.preset},
            "boot_disk": boot_disk(ACCOUNTING_BOOT_GIB),
        },
        "slurm_nodeset_workers": [
            _worker(p, cat, reservations.get(p.name), contract) for p in ordered_pools(spec)
        ],
        "slurm_nodesets_partitions": partitions(),
    }
    if gb300 and contract.declares("slurm_login_on_worker_nodes"):
        # 4.1.13: login pods share the GB300 (arm64) workers instead of a login node group,
        # whose default arm64 platform (cpu-g1) no production region offers.
        out["slurm_login_on_worker_nodes"] = True
    return out


def check_hosted(spec: SoperatorSpec, contract: Contract) -> None:
    reason = gb300_refusal(spec, contract)
    if reason:
        raise UsageError(
            reason,
            hint="use Soperator 4.1.13 (or another commit whose workers have nvlink), or an "
            "amd64 GPU platform",
        )
