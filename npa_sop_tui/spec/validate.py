"""Rules beyond the model: the recipe's plan-time checks and npa's contract, as findings.

Every rule returns findings rather than raising, so a user sees all problems at once. Where
npa and the recipe differ, the stricter recipe rule wins and the message says whose rule it
is. Errors block rendering; warnings inform.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from npa_sop_tui.capacity import CAPACITY_ID_PREFIX
from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS, Catalog, load_catalog
from npa_sop_tui.spec.findings import Finding, did_you_mean, error, one_of_hint, warning
from npa_sop_tui.spec.identity import IDENTITY_PREFIX, identity_shape_problems

if TYPE_CHECKING:
    # types only: the model runs these rules when it loads a spec (no import cycle)
    from npa_sop_tui.spec.model import SoperatorSpec, WorkerPoolSpec

COMPANY_NAME_RE = re.compile(r"^[a-z][a-z\d-]*[a-z\d]+$")
POOL_NAME_RE = re.compile(r"^[a-z]([a-z\d-]*[a-z\d])?$")
SEMVER_RE = re.compile(r"^[1-9]\d*\.\d+\.\d+$")
K8S_RE = re.compile(r"^\d+\.\d+$")
NODE_GROUP_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.]*$")
# driver_presets.tf at 4.1.12 (9a187732) only has these k8s versions.
K8S_VERSIONS_4_1_12 = ("1.35", "1.36")
MAX_POOL_NAME = 40


def slug(name: str) -> str:
    """A suggestion that satisfies the company_name rule, for hints."""
    out = re.sub(r"[^a-z0-9-]+", "-", name.lower())
    # start at the first letter; cutting to 32 may leave a trailing '-', so strip after it
    out = re.sub(r"^[^a-z]+", "", out)[:32].rstrip("-")
    return out if len(out) >= 2 else "my-cluster"


def validate_spec(
    spec: SoperatorSpec,
    *,
    catalog: Catalog | None = None,
    capacity: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every rule, in a stable order; an empty list means the spec is good as written.

    `capacity` lists pools that get reserved capacity at run time ({pool: id}).
    """
    cat = catalog or load_catalog()
    jail = [error("jail_size_gib", "must be at least 1 GiB")] if spec.jail_size_gib < 1 else []
    return [
        *_name(spec),
        *_region(spec, cat),
        *_identity(spec),
        *_versions(spec),
        *_keys(spec),
        *_control_plane(spec, cat),
        *_accounting(spec),
        *jail,
        *_workers(spec, cat, capacity or {}),
    ]


def _name(spec: SoperatorSpec) -> list[Finding]:
    name = spec.name
    if 2 <= len(name) <= 32 and COMPANY_NAME_RE.match(name):
        return []
    return [
        error(
            "name",
            f"cluster name {name!r} breaks the recipe's company_name rule: 2-32 characters, "
            "lowercase letters, digits and '-', starting with a letter and ending with a "
            "letter or digit",
            f"try {slug(name)!r}",
        )
    ]


def _region(spec: SoperatorSpec, cat: Catalog) -> list[Finding]:
    if spec.region is None or spec.region in cat.regions:
        return []
    return [
        error(
            "region",
            f"unknown region {spec.region!r}",
            one_of_hint(spec.region, sorted(cat.regions)),
        )
    ]


def _identity(spec: SoperatorSpec) -> list[Finding]:
    values = {name: getattr(spec, name) for name in IDENTITY_PREFIX}
    return [
        error(
            name,
            message,
            f"copy the ID as Nebius shows it ({IDENTITY_PREFIX[name]}e00…), or leave {name} "
            "out and set it in config.yaml or the environment at deploy time",
        )
        for name, message in identity_shape_problems(values)
    ]


def _versions(spec: SoperatorSpec) -> list[Finding]:
    out: list[Finding] = []
    version = spec.slurm_operator_version
    supported = ", ".join(SUPPORTED_VERSIONS)
    if not SEMVER_RE.match(version):
        out.append(
            error(
                "slurm_operator_version",
                f"must be an explicit semantic version such as '4.1.6', got {version!r}",
                f"supported: {supported}",
            )
        )
    elif version == "4.1.0":
        out.append(
            error(
                "slurm_operator_version",
                "slurm_operator_version 4.1.0 is no longer verified",
                "replace it with 4.1.6",
            )
        )
    elif version not in SUPPORTED_VERSIONS:
        out.append(
            error(
                "slurm_operator_version",
                f"Soperator {version} is not a recipe version this tool can render",
                f"supported versions: {supported}",
            )
        )
    elif version != "4.1.6" and spec.use_default_apparmor_profile is False:
        out.append(
            error(
                "use_default_apparmor_profile",
                f"the unconfined Enroot/Pyxis override is verified only with Soperator 4.1.6; "
                f"{version} needs the default AppArmor profile",
                "set use_default_apparmor_profile: true",
            )
        )
    if spec.k8s_version is not None and not K8S_RE.match(spec.k8s_version):
        out.append(
            error(
                "k8s_version",
                f'must be MAJOR.MINOR such as "1.34", got {spec.k8s_version!r}',
            )
        )
    elif (
        spec.recipe_generation == "4.1.12" and spec.effective_k8s_version not in K8S_VERSIONS_4_1_12
    ):
        out.append(
            error(
                "k8s_version",
                f"recipe {version} only knows GPU drivers for Kubernetes "
                f"{' and '.join(K8S_VERSIONS_4_1_12)} (driver_presets.tf), not "
                f"{spec.effective_k8s_version}",
                f'set k8s_version: "{K8S_VERSIONS_4_1_12[-1]}"',
            )
        )
    if spec.node_group_version is not None and not NODE_GROUP_RE.match(spec.node_group_version):
        out.append(
            error(
                "node_group_version",
                f'must be a node image version such as "72", got {spec.node_group_version!r}',
            )
        )
    return out


def _keys(spec: SoperatorSpec) -> list[Finding]:
    out: list[Finding] = []
    if spec.root_login_ssh_public_key and spec.ssh_public_keys:
        out.append(
            error(
                "ssh_public_keys",
                "set only root_login_ssh_public_key; ssh_public_keys is its legacy alias",
            )
        )
    if len(spec.ssh_public_keys) > 1:
        out.append(
            error(
                "ssh_public_keys",
                "ssh_public_keys accepts exactly one root-login public-key record",
                "use root_login_ssh_public_key",
            )
        )
    candidates = [("root_login_ssh_public_key", spec.root_login_ssh_public_key)]
    candidates += [(f"ssh_public_keys[{i}]", k) for i, k in enumerate(spec.ssh_public_keys)]
    for path, key in candidates:
        if key is None:
            continue
        from npa_sop_tui.sshkeys import KeyProblem, check_public_key  # only when there is a key

        try:
            check_public_key(key)
        except KeyProblem as exc:
            out.append(error(path, str(exc), "paste the single line of your .pub file"))
    return out


def _check_cp_preset(
    role: str, preset: str, tier: str, cat: Catalog, *, role_path: str
) -> list[Finding]:
    path = f"{role_path}.preset"
    cpu = cat.platforms["cpu-d3"]
    spec_preset = cpu.presets.get(preset)
    if spec_preset is None:
        return [
            error(
                path,
                f"{preset!r} is not a cpu-d3 preset (control-plane nodes run on cpu-d3)",
                one_of_hint(preset, list(cpu.presets)),
            )
        ]
    # the catalog names every role (tests/spec checks the data), so a gap fails loudly
    need_recipe = cat.role_min_vcpu[role]
    if spec_preset.vcpu < need_recipe:
        return [
            error(
                path,
                f"{preset} is insufficient for the {role} node group (recipe rule: at least "
                f"{need_recipe} vCPU)",
                "choose a larger preset or omit it so the sizing tier decides",
            )
        ]
    need_tier = cat.control_plane_min_vcpu[role][tier]
    if spec_preset.vcpu < need_tier:
        return [
            error(
                path,
                f"{preset} is insufficient for {tier} sizing ({role} requires at least "
                f"{need_tier} vCPU)",
                "omit the preset to use the recipe's sizing tier",
            )
        ]
    return []


def _control_plane(spec: SoperatorSpec, cat: Catalog) -> list[Finding]:
    out: list[Finding] = []
    cp = spec.control_plane
    system = cp.system
    if system.min_size < 3:
        out.append(error("control_plane.system.min_size", "must be >= 3 (recipe rule)", "use 3"))
    if system.max_size is not None and system.max_size < system.min_size:
        out.append(
            error(
                "control_plane.system.max_size",
                f"must be >= min_size ({system.min_size})",
            )
        )
    tier = spec.sizing_tier
    roles: list[tuple[str, str | None]] = [
        ("system", system.preset),
        ("controller", cp.controller.preset),
        ("login", cp.login.preset),
    ]
    if spec.accounting:
        roles.append(("accounting", cp.accounting.preset))
    for role, preset in roles:
        if preset is not None:
            out += _check_cp_preset(role, preset, tier, cat, role_path=f"control_plane.{role}")
    return out


def _accounting(spec: SoperatorSpec) -> list[Finding]:
    if spec.slurm_rest_enabled and not spec.accounting:
        return [
            error(
                "slurm_rest_enabled",
                f"slurm_rest_enabled=true requires accounting=true with Soperator "
                f"{spec.slurm_operator_version}: the controller skips REST reconciliation "
                "without an accounting database",
                "set accounting: true, or remove slurm_rest_enabled (it follows accounting)",
            )
        ]
    return []


def _workers(spec: SoperatorSpec, cat: Catalog, capacity: Mapping[str, str]) -> list[Finding]:
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
        if pool.is_gpu:
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
    if not pool.is_gpu:
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
    if reserved and not pool.is_gpu:
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
    if pool.is_gpu and not pool.preemptible and not (has_id or has_name or runtime_reserved):
        out.append(
            warning(
                base,
                f"GPU pool {pool.name!r} is on-demand: on-demand GPU quota is often 0",
                "use preemptible: true, or reserved capacity (a capacity block group)",
            )
        )
    return out
