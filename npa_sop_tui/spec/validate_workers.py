"""The worker pool rules of the spec (names, sizes, platforms and presets, fabrics, reserved
capacity, image cache, GB300 racks and local NVMe), as findings."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from npa_sop_tui.home.capacity import CAPACITY_ID_PREFIX
from npa_sop_tui.spec.catalog import Catalog
from npa_sop_tui.spec.findings import Finding, did_you_mean, error, one_of_hint, warning
from npa_sop_tui.spec.validate_cluster import slug

if TYPE_CHECKING:
    # types only: the model runs these rules when it loads a spec (no import cycle)
    from npa_sop_tui.spec.model import SoperatorSpec, WorkerPoolSpec

POOL_NAME_RE = re.compile(r"^[a-z]([a-z\d-]*[a-z\d])?$")
MAX_POOL_NAME = 40


def worker_rules(spec: SoperatorSpec, cat: Catalog, capacity: Mapping[str, str]) -> list[Finding]:
    out: list[Finding] = []
    if not spec.workers:
        return [error("workers", "at least one worker pool is required")]
    seen: dict[str, int] = {}
    for i, pool in enumerate(spec.workers):
        base = f"workers[{i}]"
        if pool.name in seen:
            out.append(
                error(
                    f"{base}.name",
                    f"duplicate worker pool name {pool.name!r} (also workers[{seen[pool.name]}])",
                )
            )
        else:
            seen[pool.name] = i
        out += _pool(spec, pool, base, cat, pool.name in capacity)
    names = [pool.name for pool in spec.workers]
    for pool_name in capacity:
        if pool_name not in seen:
            # The same refusal render() gives, so validate never passes what deploy rejects.
            out.append(
                error(
                    "workers",
                    f"capacity block group given at run time for unknown worker pool {pool_name!r}",
                    did_you_mean(pool_name, names) or f"pools: {', '.join(names)}",
                )
            )
    arches = {
        plat.arch for pool in spec.workers if (plat := cat.platform(pool.platform)) is not None
    }
    if len(arches) > 1:
        out.append(
            error(
                "workers",
                f"worker pools mix CPU architectures ({', '.join(sorted(arches))}); all "
                "workers share one jail, so the recipe requires one architecture",
            )
        )
    gpu_seen = False
    for i, pool in reversed(list(enumerate(spec.workers))):
        if pool.is_gpu():
            gpu_seen = True
        elif gpu_seen:
            out.append(
                warning(
                    f"workers[{i}]",
                    f"CPU pool {pool.name!r} comes before a GPU pool; rendering puts GPU pools "
                    "first because the recipe takes the CUDA version from the first pool",
                )
            )
            break
    return out


def _pool(
    spec: SoperatorSpec, pool: WorkerPoolSpec, base: str, cat: Catalog, runtime_reserved: bool
) -> list[Finding]:
    out: list[Finding] = []
    if not POOL_NAME_RE.match(pool.name) or len(pool.name) > MAX_POOL_NAME:
        out.append(
            error(
                f"{base}.name",
                f"worker pool name {pool.name!r} must be lowercase letters, digits and '-', "
                f"start with a letter, end with a letter or digit, at most {MAX_POOL_NAME} "
                "characters (it names Slurm nodes and Kubernetes node groups)",
                f"try {slug(pool.name)!r}",
            )
        )
    if pool.size < 1:
        out.append(error(f"{base}.size", "must be >= 1"))
    if pool.boot_disk_gib < 512:
        out.append(
            error(f"{base}.boot_disk_gib", f"must be >= 512 (npa rule), got {pool.boot_disk_gib}")
        )
    platform = cat.platform(pool.platform)
    preset = None
    if platform is None:
        out.append(
            error(
                f"{base}.platform",
                f"unknown platform {pool.platform!r}",
                one_of_hint(pool.platform, list(cat.platforms)),
            )
        )
    else:
        if spec.region and spec.region in cat.regions and spec.region not in platform.regions:
            offered = cat.platforms_in_region(spec.region)
            out.append(
                error(
                    f"{base}.platform",
                    f"{pool.platform} is not offered in {spec.region}",
                    f"platforms in {spec.region}: {', '.join(offered)}",
                )
            )
        preset = platform.presets.get(pool.preset)
        if preset is None:
            out.append(
                error(
                    f"{base}.preset",
                    f"{pool.preset!r} is not a preset of {pool.platform}",
                    one_of_hint(pool.preset, list(platform.presets)),
                )
            )
        elif (
            preset.vcpu < cat.role_min_vcpu["worker"]
            or pool.preset in platform.worker_excluded_presets
        ):
            out.append(
                error(
                    f"{base}.preset",
                    f"{pool.preset} is insufficient for a worker node group (recipe rule: at "
                    f"least {cat.role_min_vcpu['worker']} vCPU)",
                )
            )
    out += _fabric(spec, pool, base, cat, preset.gpu_cluster_compatible if preset else None)
    out += _capacity(pool, base, runtime_reserved)
    if pool.docker_cache:
        gran = cat.disk_granularity_gib
        if pool.docker_cache_gib < gran or pool.docker_cache_gib % gran:
            lower = max(gran, pool.docker_cache_gib // gran * gran)
            out.append(
                error(
                    f"{base}.docker_cache_gib",
                    f"must be a positive multiple of {gran} (the disk's allocation unit), got "
                    f"{pool.docker_cache_gib}",
                    f"use {lower} or {lower + gran}",
                )
            )
        if pool.docker_cache_disk_type not in cat.image_disk_types:
            out.append(
                error(
                    f"{base}.docker_cache_disk_type",
                    f"{pool.docker_cache_disk_type!r} cannot hold the image cache",
                    one_of_hint(pool.docker_cache_disk_type, list(cat.image_disk_types)),
                )
            )
    out += _gb300(pool, base)
    return out


GB300_RACK = 18


def _gb300(pool: WorkerPoolSpec, base: str) -> list[Finding]:
    """GB300 pools: racks of 18 (a partial rack only below 18, as npa renders production =
    false) and the local NVMe layout the recipe needs for gpu-gb300."""
    out: list[Finding] = []
    nvme = (pool.local_nvme_device_count, pool.local_nvme_device_gb)
    if pool.platform != "gpu-gb300":
        if any(v is not None for v in nvme):
            out.append(
                error(
                    f"{base}.local_nvme_device_count", "local NVMe is rendered for gpu-gb300 only"
                )
            )
        return out
    if pool.size >= GB300_RACK and pool.size % GB300_RACK:
        out.append(
            error(
                f"{base}.size",
                f"GB300 pools come in racks of {GB300_RACK}: {pool.size} nodes is not whole racks",
                f"use {pool.size // GB300_RACK * GB300_RACK} or "
                f"{(pool.size // GB300_RACK + 1) * GB300_RACK}",
            )
        )
    for field_name, value in (
        ("local_nvme_device_count", pool.local_nvme_device_count),
        ("local_nvme_device_gb", pool.local_nvme_device_gb),
    ):
        if value is None or value < 1:
            out.append(
                error(
                    f"{base}.{field_name}",
                    "gpu-gb300 workers use local NVMe (on by default in the recipe), which "
                    "needs the number of devices and each device's size in GB",
                    "set local_nvme_device_count and local_nvme_device_gb from the platform's "
                    "specification",
                )
            )
    return out


def _fabric(
    spec: SoperatorSpec,
    pool: WorkerPoolSpec,
    base: str,
    cat: Catalog,
    clusterable: bool | None,
) -> list[Finding]:
    path = f"{base}.fabric"
    if not pool.is_gpu():
        if pool.fabric:
            return [error(path, "CPU pools must not set 'fabric'", "remove fabric")]
        return []
    if not pool.fabric:
        if clusterable:
            known = cat.fabrics_for(spec.region)
            return [
                error(
                    path,
                    f"GPU preset {pool.preset!r} needs an InfiniBand 'fabric' so its nodes "
                    "join one GPU cluster",
                    f"fabrics in {spec.region}: {', '.join(known)}" if known else "set fabric",
                )
            ]
        return []
    out: list[Finding] = []
    if clusterable is False:
        out.append(
            warning(
                path,
                f"{pool.preset} cannot join a GPU cluster; the fabric is ignored",
                "remove fabric, or use an 8-GPU preset",
            )
        )
        return out
    if spec.region is None:
        return out
    status = cat.fabric_status(spec.region, pool.fabric)
    if status.startswith("other-region:"):
        other = status.removeprefix("other-region:")
        out.append(
            error(
                path,
                f"fabric {pool.fabric!r} belongs to region {other}, not {spec.region}",
                one_of_hint(pool.fabric, cat.fabrics_for(spec.region)),
            )
        )
    elif status == "unknown":
        close = did_you_mean(pool.fabric, cat.fabrics_for(spec.region))
        out.append(
            error(
                path,
                f"{pool.fabric!r} does not look like a Nebius InfiniBand fabric name",
                close or "fabric names look like fabric-3 or us-central1-a",
            )
        )
    elif status in ("plausible", "unverified"):
        out.append(
            warning(
                path,
                f"fabric {pool.fabric!r} is not in the recipe's catalog for {spec.region}; "
                "check it against the capacity you were given",
            )
        )
    return out


def _capacity(pool: WorkerPoolSpec, base: str, runtime_reserved: bool) -> list[Finding]:
    out: list[Finding] = []
    has_id, has_name = bool(pool.capacity_block_group), bool(pool.capacity_block_group_name)
    if has_id and has_name:
        out.append(
            error(
                f"{base}.capacity_block_group_name",
                "set only one of capacity_block_group or capacity_block_group_name",
            )
        )
    reserved = has_id or has_name or runtime_reserved
    # Say where the selector came from: a run-time one has no line in the spec.
    origin = "" if (has_id or has_name) else " (capacity block group given at run time)"
    if reserved and not pool.is_gpu():
        out.append(
            error(
                f"{base}.capacity_block_group" if has_id or has_name else base,
                "reserved capacity selectors are valid only for GPU worker pools"
                if has_id or has_name
                else "reserved capacity is valid only for GPU pools" + origin,
            )
        )
    if reserved and pool.preemptible:
        out.append(
            error(
                f"{base}.preemptible",
                "reserved capacity is mutually exclusive with preemptible=true" + origin,
                "set preemptible: false to use a capacity block",
            )
        )
    if has_id and not str(pool.capacity_block_group_id).startswith(CAPACITY_ID_PREFIX):
        out.append(
            warning(
                f"{base}.capacity_block_group",
                f"capacity block group IDs start with {CAPACITY_ID_PREFIX!r}",
            )
        )
    if has_id:
        out.append(
            warning(
                f"{base}.capacity_block_group",
                "a capacity block group ID is written in the spec",
                "keep IDs out of committed files: give them at run time (POOL=ID in "
                "NPA_CAPACITY_BLOCK_GROUPS, or the capacity option of the call)",
            )
        )
    if pool.is_gpu() and not pool.preemptible and not (has_id or has_name or runtime_reserved):
        out.append(
            warning(
                base,
                f"GPU pool {pool.name!r} is on-demand: on-demand GPU quota is often 0",
                "use preemptible: true, or reserved capacity (a capacity block group)",
            )
        )
    return out
