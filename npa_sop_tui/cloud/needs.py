"""How much of each Nebius quota a spec needs, and what to price.

Quota names are Nebius's (`nebius quotas quota-allowance list`): instance count, non-GPU
vCPU, GPUs per GPU model (`compute.instance.gpu.h100`), disk count and size per disk type,
filesystem count and size, GPU clusters, mk8s clusters, and VPC allocations (every address
a node is given is one, and the recipe reserves one more, `nebius_vpc_v1_allocation`, for the
login entry's static address, public as npa renders the recipe). Sizes are in bytes, as the
service counts them. GPUs of reserved pools come from their capacity block group, not from the
ordinary GPU quota, so they are left out of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npa_sop_tui.cloud.model import PriceRequest
from npa_sop_tui.recipe import footprint
from npa_sop_tui.recipe.shape import BOOT_DISK_TYPE

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec

GIB = 1024**3
ALLOCATIONS = "vpc.allocation.count"


def gpu_quota_name(platform: str) -> str:
    """`gpu-h200-sxm` → `compute.instance.gpu.h200`; `gpu-b200-sxm-a` → `…gpu.b200`."""
    model = re.sub(r"^gpu-", "", platform).split("-")[0]
    return f"compute.instance.gpu.{model}"


def disk_quota_name(disk_type: str) -> str:
    """`NETWORK_SSD_IO_M3` → `compute.disk.size.network-ssd-io-m3`."""
    return "compute.disk.size." + disk_type.lower().replace("_", "-")


def filesystem_quota_name(fs_type: str) -> str:
    return "compute.filesystem.size." + fs_type.lower().replace("_", "-")


@dataclass(frozen=True)
class Need:
    resource: str  # the quota name
    amount: int
    unit: str  # count, vcpu, gpu, bytes
    why: str  # what in the spec needs it


def quota_needs(
    spec: SoperatorSpec,
    capacity: dict[str, str] | None = None,
    *,
    gpu_quotas: dict[str, str] | None = None,
) -> list[Need]:
    """Needs summed per quota, in a stable order (instances, CPU, GPUs, disks, filesystems).

    `gpu_quotas`: platform → the quota its GPUs count against, as PlatformService publishes
    it (`spec.gpu_count_quota_type`); platforms it does not cover use the naming rule."""
    gpu_quotas = gpu_quotas or {}
    from npa_sop_tui.spec.catalog import load_catalog

    cat = load_catalog()
    amounts: dict[str, int] = {}
    units: dict[str, str] = {}
    whys: dict[str, list[str]] = {}

    def add(name: str, amount: int, unit: str, why: str) -> None:
        if amount <= 0:
            return
        amounts[name] = amounts.get(name, 0) + amount
        units[name] = unit
        whys.setdefault(name, []).append(why)

    fabrics: set[str] = set()
    for group in footprint.node_groups(spec):
        n = group.count
        label = f"{group.name} ×{n}"
        add("compute.instance.count", n, "count", label)
        add(ALLOCATIONS, n, "count", label)
        preset = cat.preset(group.platform, group.preset)
        if group.gpus_per_node == 0 and preset is not None:
            add("compute.instance.non-gpu.vcpu", n * preset.vcpu, "vcpu", label)
        if group.gpus_per_node:
            pool = next(p for p in spec.workers if p.name == group.name)
            if pool.capacity_mode(capacity) != "reserved":
                quota = gpu_quotas.get(group.platform) or gpu_quota_name(group.platform)
                add(quota, n * group.gpus_per_node, "gpu", label)
            if group.fabric and preset is not None and preset.gpu_cluster_compatible:
                fabrics.add(group.fabric)
        add("compute.disk.count", n * (1 + len(group.extra_disks)), "count", label)
        add(disk_quota_name(BOOT_DISK_TYPE), n * group.boot_disk_gib * GIB, "bytes", label)
        for disk_type, gib in group.extra_disks:
            add(disk_quota_name(disk_type), n * gib * GIB, "bytes", f"{group.name} image cache")
    add(ALLOCATIONS, 1, "count", "the login's static address (nebius_vpc_v1_allocation)")
    add("compute.gpucluster.count", len(fabrics), "count", ", ".join(sorted(fabrics)))
    for fs in footprint.filesystems(spec):
        add("compute.filesystem.count", 1, "count", fs.role)
        add(filesystem_quota_name(fs.type), fs.size_gib * GIB, "bytes", fs.role)
    add("mk8s.cluster.count", 1, "count", f"soperator-{spec.name}")
    return [Need(k, amounts[k], units[k], "; ".join(whys[k])) for k in amounts]


def price_requests(spec: SoperatorSpec) -> list[PriceRequest]:
    """Every node group as priced instances (worker pools by name, the control plane's groups
    as `control-plane/<role>`), their boot and extra disks (`<group>/disks`), and the shared
    filesystems (`filesystem/<role>`)."""
    out: list[PriceRequest] = []
    for g in footprint.node_groups(spec):
        key = g.name if g.role == "worker" else f"control-plane/{g.role}"
        out.append(PriceRequest(key, g.platform, g.preset, g.count, preemptible=g.preemptible))
        disks = [(BOOT_DISK_TYPE, g.boot_disk_gib), *g.extra_disks]
        for disk_type, gib in disks:
            if gib > 0:
                out.append(PriceRequest(f"{key}/disks", "", "", g.count, kind="disk",
                                        size_gib=gib, storage_type=disk_type))  # fmt: skip
    for fs in footprint.filesystems(spec):
        out.append(PriceRequest(f"filesystem/{fs.role}", "", "", 1, kind="filesystem",
                                size_gib=fs.size_gib, storage_type=fs.type))  # fmt: skip
    return out
