"""Spec → the soperator recipe's input variables, as `terraform.tfvars.json`.

The only module that knows recipe variable names. The output is complete: Terraform replaces
whole objects from tfvars (no deep merge), so every object is written in full and nothing
relies on the example terraform.tfvars. Identity goes to Terraform as `TF_VAR_*` in the
environment, never into the file. Shapes follow upstream-recipe.md §10 per recipe generation:
4.1.6 (also 4.1.7) and 4.1.12 (also 4.1.13).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.capacity import CAPACITY_ENV
from npa_sop_tui.config import Identity
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.spec.catalog import Catalog, load_catalog
from npa_sop_tui.spec.findings import Finding, did_you_mean, errors_of
from npa_sop_tui.spec.model import SUPPORTED_VERSIONS, SoperatorSpec, SpecError, WorkerPoolSpec
from npa_sop_tui.spec.model import kube_context as kube_context  # re-exported per contracts.md
from npa_sop_tui.sshkeys import ResolvedKey

TFVARS_FILE = "terraform.tfvars.json"
# Backups are force-disabled, so the recipe never uses this password; it is a fixed,
# non-secret placeholder only because the variable is required.
BACKUPS_PLACEHOLDER_PASSWORD = "unused-backups-disabled"
ACTIVE_CHECKS_SCOPE = "essential"  # valid in every supported version (upstream-recipe §9)
O11Y_PROFILE = "soperator-telemetry"  # .envrc's default profile name
# Variables that come from the environment, never the file (they are identity).
ENV_VARIABLES = (
    "region",
    "iam_tenant_id",
    "iam_project_id",
    "vpc_subnet_id",
    "o11y_iam_tenant_id",
    "o11y_profile",
)
NVIDIA_CONFIG_LINES = [
    "options nvidia NVreg_RestrictProfilingToAdminUsers=0",
    "options nvidia NVreg_EnableStreamMemOPs=1",
]
PARTITION_COMMON = "PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP OverSubscribe=YES"


@dataclass
class Rendered:
    """What Terraform needs for one cluster. `.secrets` are values logs must redact."""

    tfvars: dict[str, Any]
    env: dict[str, str]
    recipe_version: str
    kube_context: str
    sizing_tier: str
    env_names: list[str] = field(default_factory=lambda: [f"TF_VAR_{v}" for v in ENV_VARIABLES])
    secrets: list[str] = field(default_factory=list)
    root_key_fingerprint: str | None = None
    root_key_source: str | None = None
    warnings: list[Finding] = field(default_factory=list)

    def tfvars_json(self) -> str:
        return json.dumps(self.tfvars, indent=2, sort_keys=True) + "\n"

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "<redacted>")
        return text

    def write(self, out_dir: str | Path) -> Path:
        """Write `terraform.tfvars.json` atomically with mode 0600 (it may hold reservation
        IDs); a failure leaves any previous file intact."""
        from npa_sop_tui.fsutil import SECRET_MODE, atomic_write_text

        target = Path(out_dir) / TFVARS_FILE
        atomic_write_text(target, self.tfvars_json(), mode=SECRET_MODE)
        return target


# --- capacity (reservations) supplied at run time -------------------------------------------


def _resolve_capacity(spec: SoperatorSpec, capacity: Mapping[str, str]) -> dict[str, str]:
    """Per GPU pool, the reservation ID to use; run-time IDs win over the spec's."""
    names = [p.name for p in spec.workers]
    for pool_name in capacity:
        pool = spec.pool(pool_name)
        if pool is None:
            raise UsageError(
                f"capacity block group given for unknown worker pool {pool_name!r}",
                hint=did_you_mean(pool_name, names) or f"pools: {', '.join(names)}",
            )
        if not pool.is_gpu:
            raise UsageError(
                f"worker pool {pool_name!r}: reserved capacity is valid only for GPU pools"
            )
        if pool.preemptible:
            raise UsageError(
                f"worker pool {pool_name!r}: reserved capacity is mutually exclusive with "
                "preemptible=true"
            )
    resolved: dict[str, str] = {}
    for pool in spec.workers:
        if pool.name in capacity:
            resolved[pool.name] = capacity[pool.name]
        elif pool.capacity_block_group:
            resolved[pool.name] = pool.capacity_block_group
        elif pool.capacity_block_group_name:
            raise UsageError(
                f"worker pool {pool.name!r}: a capacity block name must be resolved to an ID "
                "before rendering Terraform",
                hint=f"give its ID at run time: {pool.name}=capacityblockgroup-… in "
                f"{CAPACITY_ENV} or the capacity option of the call",
            )
    return resolved


# --- nodesets -------------------------------------------------------------------------------


def _boot_disk(size: int) -> dict[str, Any]:
    return {"type": "NETWORK_SSD", "size_gibibytes": size, "block_size_kibibytes": 4}


def _worker(pool: WorkerPoolSpec, cat: Catalog, reservation: str | None) -> dict[str, Any]:
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
    return {
        "name": pool.name,
        "size": pool.size,
        # A fixed count: the type's default {enabled=true, min_size=0} could start empty.
        "autoscaling": {"enabled": False},
        "resource": {"platform": pool.platform, "preset": pool.preset},
        "boot_disk": _boot_disk(pool.boot_disk_gib),
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


def _ordered_pools(spec: SoperatorSpec) -> list[WorkerPoolSpec]:
    """GPU pools first: the recipe takes the Slurm CUDA version from workers[0]."""
    return [p for p in spec.workers if p.is_gpu] + [p for p in spec.workers if not p.is_gpu]


def _partitions() -> list[dict[str, Any]]:
    # `hidden` is used by the active checks and must be kept (upstream-recipe §3.5).
    return [
        {
            "name": "main",
            "is_all": True,
            "slurm_nodeset_refs": [],
            "topology": "flat",
            "config": f"Default=YES {PARTITION_COMMON}",
        },
        {
            "name": "hidden",
            "is_all": True,
            "slurm_nodeset_refs": [],
            "topology": "flat",
            "config": f"Hidden=YES {PARTITION_COMMON}",
        },
    ]


# --- the two generations --------------------------------------------------------------------


def _common(
    spec: SoperatorSpec, cat: Catalog, key: str, reservations: dict[str, str]
) -> dict[str, Any]:
    cp = spec.control_plane
    system = cp.system
    return {
        "company_name": spec.name,
        "production": False,
        "iam_merge_request_url": "",
        "slurm_login_public_ip": True,
        "k8s_version": spec.effective_k8s_version,
        "node_group_version": spec.effective_node_group_version,
        "use_preinstalled_gpu_drivers": True,
        "nvidia_config_lines": list(NVIDIA_CONFIG_LINES),
        "k8s_cluster_node_ssh_access_users": [],
        "slurm_operator_version": spec.slurm_operator_version,
        "slurm_operator_stable": True,
        "slurm_nodesets_partitions": _partitions(),
        "controller_state_on_filestore": False,
        "allow_empty_jail_submounts": True,
        "slurm_nodeset_system": {
            "min_size": system.min_size,
            "max_size": system.effective_max_size,
            "resource": {"platform": "cpu-d3", "preset": system.preset},
            "boot_disk": _boot_disk(192),
        },
        "slurm_nodeset_controller": {
            "size": 1,
            "resource": {"platform": "cpu-d3", "preset": cp.controller.preset},
            "boot_disk": _boot_disk(256),
        },
        "slurm_nodeset_login": {
            "size": 1,
            "resource": {"platform": "cpu-d3", "preset": cp.login.preset},
            "boot_disk": _boot_disk(256),
        },
        "slurm_nodeset_accounting": {
            "resource": {"platform": "cpu-d3", "preset": cp.accounting.preset},
            "boot_disk": _boot_disk(128),
        },
        "slurm_nodeset_workers": [
            _worker(p, cat, reservations.get(p.name)) for p in _ordered_pools(spec)
        ],
        "slurm_login_ssh_root_public_keys": [key],
        "accounting_enabled": spec.accounting,
        "slurm_rest_enabled": spec.rest_enabled,
        "slurm_exporter_enabled": spec.telemetry,
        "telemetry_enabled": spec.telemetry,
        "public_o11y_enabled": spec.telemetry,
        "use_default_apparmor_profile": spec.use_default_apparmor_profile,
        "active_checks_scope": ACTIVE_CHECKS_SCOPE,
        "soperator_notifier": {"enabled": False},
        "nccl_inspector_profiling": {"enabled": False},
        "backups_enabled": "force_disable",
        "backups_password": BACKUPS_PLACEHOLDER_PASSWORD,
        "backups_schedule": "@daily-random",
        "backups_prune_schedule": "@daily-random",
        "backups_retention": {"keepDaily": 7},
        "cleanup_bucket_on_destroy": False,
    }


def _filestore_spec(size: int, *, typed: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"size_gibibytes": size, "block_size_kibibytes": 4}
    if typed:
        spec = {"type": "NETWORK_SSD", **spec}
    return {"spec": {**spec, "forbid_deletion": False}}


def _shape_4_1_6(spec: SoperatorSpec, out: dict[str, Any]) -> None:
    out["filestore_controller_spool"] = _filestore_spec(128, typed=False)
    out["filestore_jail"] = _filestore_spec(spec.jail_size_gib, typed=False)
    out["filestore_jail_submounts"] = []
    out["filestore_accounting"] = _filestore_spec(512, typed=False) if spec.accounting else None
    # Flat NFS objects; main.tf lowercases nfs_in_k8s.disk_type even when disabled, so the
    # disabled object still carries every attribute (upstream-recipe §3.3).
    out["nfs"] = {
        "enabled": False,
        "size_gibibytes": 3720,
        "mount_path": "/home",
        "resource": {"platform": "cpu-d3", "preset": "32vcpu-128gb"},
        "public_ip": False,
    }
    out["nfs_in_k8s"] = {
        "enabled": False,
        "version": "1.2.0",
        "use_stable_repo": True,
        "size_gibibytes": 3720,
        "disk_type": "NETWORK_SSD_IO_M3",
        "filesystem_type": "ext4",
        "threads": 8,
    }
    out["slurm_nodeset_nfs"] = None
    out["slurm_partition_config_type"] = "default"


def _shape_4_1_12(spec: SoperatorSpec, out: dict[str, Any], version: str) -> None:
    out["filesystem_jail"] = _filestore_spec(spec.jail_size_gib, typed=True)
    out["filesystem_jail_submounts"] = []
    out["filestore_controller_spool"] = None
    out["filestore_accounting"] = None
    out["nfs"] = {"enabled": False}
    out["nfs_in_k8s"] = {"enabled": False}
    if version == "4.1.13":
        out["cloud_environment"] = "production"
        out["accounting_storage_size_gibibytes"] = 512


def _env(identity: Identity | None, spec: SoperatorSpec) -> dict[str, str]:
    identity = identity or Identity()
    env: dict[str, str] = {}
    pairs = {
        "region": identity.region,
        "iam_tenant_id": identity.tenant_id,
        "iam_project_id": identity.project_id,
        "vpc_subnet_id": identity.subnet_id,
        # The recipe requires an o11y tenant even with o11y off; npa uses the cluster's tenant.
        "o11y_iam_tenant_id": identity.tenant_id,
    }
    for name, value in pairs.items():
        if value:
            env[f"TF_VAR_{name}"] = value
    # "" is allowed only while public o11y is off, which is exactly when telemetry is off.
    env["TF_VAR_o11y_profile"] = O11Y_PROFILE if spec.telemetry else ""
    return env


def supported_versions() -> list[str]:
    return list(SUPPORTED_VERSIONS)


def render(
    spec: SoperatorSpec,
    *,
    identity: Identity | None = None,
    recipe_version: str | None = None,
    capacity: Mapping[str, str] | None = None,
    root_login_key: ResolvedKey | str | None = None,
    catalog: Catalog | None = None,
) -> Rendered:
    """Render `spec` for the recipe at `recipe_version` (default: the spec's operator version).

    Raises `SpecError` if the spec has errors, `UsageError` for an unsupported version, an
    unresolved capacity name, or no root login key (resolved from the spec, environment,
    config and ~/.ssh when not given).
    """
    from npa_sop_tui.spec.validate import validate_spec

    cat = catalog or load_catalog()
    findings = validate_spec(spec, catalog=cat, capacity=capacity)
    if errors_of(findings):
        raise SpecError(findings)
    version = recipe_version or spec.slurm_operator_version
    generation = SUPPORTED_VERSIONS.get(version)
    if generation is None:
        raise UsageError(
            f"recipe version {version!r} is not supported",
            hint=f"supported versions: {', '.join(SUPPORTED_VERSIONS)}",
        )
    if version != spec.slurm_operator_version:
        raise UsageError(
            f"recipe version {version} differs from the spec's slurm_operator_version "
            f"{spec.slurm_operator_version}",
            hint="change slurm_operator_version in the spec to deploy another version",
        )
    reservations = _resolve_capacity(spec, dict(capacity or {}))
    key = _root_key(spec, root_login_key)
    tfvars = _common(spec, cat, key.key, reservations)
    if generation == "4.1.6":
        _shape_4_1_6(spec, tfvars)
    else:
        _shape_4_1_12(spec, tfvars, version)
    problems = recipe_problems(tfvars, version, cat)
    if problems:  # a bug here, not a user mistake: validation should have refused the spec
        raise OperationError(
            "rendered variables break the recipe's rules: " + "; ".join(problems),
            hint="please report this with the spec (IDs redacted)",
        )
    return Rendered(
        tfvars=tfvars,
        env=_env(identity, spec),
        recipe_version=version,
        kube_context=spec.kube_context,
        sizing_tier=spec.sizing_tier,
        secrets=sorted(set(reservations.values())),
        root_key_fingerprint=key.fingerprint,
        root_key_source=key.source,
        warnings=[f for f in findings if not f.is_error],
    )


def _root_key(spec: SoperatorSpec, given: ResolvedKey | str | None) -> ResolvedKey:
    from npa_sop_tui.sshkeys import KeyProblem, check_public_key, resolve_root_login_key

    if isinstance(given, ResolvedKey):
        return given
    if isinstance(given, str):
        try:
            return ResolvedKey(check_public_key(given), "caller")
        except KeyProblem as exc:
            raise UsageError(str(exc)) from None
    from npa_sop_tui.config import load_config

    spec_key = spec.root_login_ssh_public_key or (
        spec.ssh_public_keys[0] if spec.ssh_public_keys else None
    )
    return resolve_root_login_key(spec_key=spec_key, config_path=load_config().ssh_public_key_path)


# --- self-check against the recipe's rules --------------------------------------------------

_REQUIRED_COMMON = (
    "company_name",
    "node_group_version",
    "slurm_operator_version",
    "slurm_login_ssh_root_public_keys",
    "backups_password",
    "backups_schedule",
    "backups_prune_schedule",
    "backups_retention",
    "cleanup_bucket_on_destroy",
    "slurm_nodeset_workers",
    "slurm_nodesets_partitions",
    "active_checks_scope",
)
REQUIRED_VARIABLES = {
    "4.1.6": (*_REQUIRED_COMMON, "filestore_controller_spool", "filestore_jail"),
    "4.1.12": (*_REQUIRED_COMMON, "filesystem_jail"),
}
ACTIVE_CHECK_SCOPES = {
    "4.1.6": ("dev", "testing", "prod_quick", "prod_acceptance", "essential"),
    "4.1.12": ("prod_quick", "prod_acceptance", "essential", "skip_all", "testing"),
}


def recipe_problems(
    tfvars: Mapping[str, Any], recipe_version: str, catalog: Catalog | None = None
) -> list[str]:
    """The recipe's plan-time rules checked on rendered variables; [] when they all hold.

    A non-empty result is a bug in this module (validation should have caught the spec), so
    `render` refuses to return such output.
    """
    import re

    cat = catalog or load_catalog()
    gen = SUPPORTED_VERSIONS.get(recipe_version)
    if gen is None:
        return [f"unsupported recipe version {recipe_version}"]
    out: list[str] = []
    out += [f"{n} is required" for n in REQUIRED_VARIABLES[gen] if tfvars.get(n) is None]
    out += [f"{n} must come from TF_VAR_{n}" for n in ENV_VARIABLES if n in tfvars]
    name = str(tfvars.get("company_name", ""))
    if not (2 <= len(name) <= 32 and re.match(r"^[a-z][a-z\d-]*[a-z\d]+$", name)):
        out.append("company_name breaks ^[a-z][a-z\\d-]*[a-z\\d]+$ (2-32 chars)")
    for n in ("k8s_version", "node_group_version", "slurm_operator_version"):
        if not isinstance(tfvars.get(n), str) or not tfvars.get(n):
            out.append(f"{n} must be a non-empty string")
    keys = tfvars.get("slurm_login_ssh_root_public_keys") or []
    if not keys or any(not str(k).strip() for k in keys):
        out.append("slurm_login_ssh_root_public_keys needs >= 1 non-empty key")
    if tfvars.get("active_checks_scope") not in ACTIVE_CHECK_SCOPES[gen]:
        out.append("active_checks_scope is not valid for this version")
    if tfvars.get("production") is not False and not tfvars.get("iam_merge_request_url"):
        out.append("production=true needs iam_merge_request_url")
    system = tfvars.get("slurm_nodeset_system") or {}
    if system.get("min_size", 0) < 3 or system.get("max_size", 0) < system.get("min_size", 0):
        out.append("slurm_nodeset_system sizes break min>=3, max>=min")
    if (tfvars.get("slurm_nodeset_controller") or {}).get("size") != 1:
        out.append("slurm_nodeset_controller.size must be 1")
    mins = cat.boot_disk_min_gib
    for role, var in (
        ("system", "slurm_nodeset_system"),
        ("controller", "slurm_nodeset_controller"),
        ("login", "slurm_nodeset_login"),
        ("accounting", "slurm_nodeset_accounting"),
    ):
        disk = (tfvars.get(var) or {}).get("boot_disk") or {}
        if gen == "4.1.6" and not disk:
            out.append(f"{var}.boot_disk is required in 4.1.6")
        if disk and disk.get("size_gibibytes", 0) < mins[role]:
            out.append(f"{var}.boot_disk below {mins[role]} GiB")
    if tfvars.get("accounting_enabled") and tfvars.get("slurm_nodeset_accounting") is None:
        out.append("accounting needs slurm_nodeset_accounting")
    if gen == "4.1.6":
        nfs_k8s = tfvars.get("nfs_in_k8s") or {}
        if not nfs_k8s.get("disk_type") or not nfs_k8s.get("filesystem_type"):
            out.append("4.1.6 needs nfs_in_k8s.disk_type/filesystem_type even when disabled")
    if (tfvars.get("nfs") or {}).get("enabled") and (tfvars.get("nfs_in_k8s") or {}).get("enabled"):
        out.append("nfs and nfs_in_k8s cannot both be enabled")
    if not tfvars.get(
        "filestore_jail_submounts" if gen == "4.1.6" else "filesystem_jail_submounts"
    ) and not tfvars.get("allow_empty_jail_submounts"):
        out.append("jail submounts are empty without allow_empty_jail_submounts")
    if tfvars.get("backups_enabled") != "force_disable":
        out.append("backups must be force-disabled (the password is a placeholder)")
    out += _worker_problems(tfvars, gen, cat)
    return out


def _worker_problems(tfvars: Mapping[str, Any], gen: str, cat: Catalog) -> list[str]:
    out: list[str] = []
    workers = tfvars.get("slurm_nodeset_workers") or []
    names = [w.get("name") for w in workers]
    if not workers:
        out.append("no worker nodesets")
    if len(set(names)) != len(names):
        out.append("worker names are not unique")
    gpu_index = [i for i, w in enumerate(workers) if w["resource"]["platform"].startswith("gpu-")]
    if gpu_index and gpu_index[0] != 0:
        out.append("a GPU nodeset exists but slurm_nodeset_workers[0] is not GPU (CUDA lookup)")
    for w in workers:
        label = f"worker {w.get('name')}"
        preset = cat.preset(w["resource"]["platform"], w["resource"]["preset"])
        if preset is None:
            out.append(f"{label}: unknown platform/preset")
            continue
        if w.get("size", 0) < 1:
            out.append(f"{label}: size < 1")
        if w.get("gpu_cluster") is not None:
            if not preset.gpu_cluster_compatible:
                out.append(f"{label}: gpu_cluster on a preset that cannot cluster")
            elif not str(w["gpu_cluster"].get("infiniband_fabric") or "").strip():
                out.append(f"{label}: gpu_cluster without a fabric")
        if w.get("preemptible") is not None and w.get("reservation_policy") is not None:
            out.append(f"{label}: preemptible groups cannot use reservations")
        policy = w.get("reservation_policy")
        if policy is not None and not preset.gpus:
            out.append(f"{label}: CPU groups cannot use reservations")
        disk = w.get("node_local_image_disk")
        if disk is None or "enabled" not in disk:
            out.append(f"{label}: node_local_image_disk.enabled is required")
        elif disk["enabled"]:
            spec = disk.get("spec") or {}
            if spec.get("disk_type") not in cat.image_disk_types:
                out.append(f"{label}: image disk type must be NRD or IO_M3")
            if spec.get("size_gibibytes", 0) % cat.disk_granularity_gib:
                out.append(
                    f"{label}: image disk size is not a multiple of {cat.disk_granularity_gib}"
                )
            if spec.get("filesystem_type") not in cat.filesystem_types:
                out.append(f"{label}: image disk filesystem must be ext4 or xfs")
        if gen == "4.1.6":
            for attr in ("boot_disk", "node_local_jail_submounts"):
                if w.get(attr) is None:
                    out.append(f"{label}: {attr} is required in 4.1.6")
        boot = (w.get("boot_disk") or {}).get("size_gibibytes", 128)
        if boot < cat.boot_disk_min_gib["worker"]:
            out.append(f"{label}: boot disk below 128 GiB")
    valid_refs = set(names)
    topologies = {"flat"}
    if gpu_index:
        topologies.add("tree-ib")
    for part in tfvars.get("slurm_nodesets_partitions") or []:
        refs = part.get("slurm_nodeset_refs") or []
        if bool(part.get("is_all")) == bool(refs):
            out.append(f"partition {part.get('name')}: needs is_all or refs, not both")
        if set(refs) - valid_refs:
            out.append(f"partition {part.get('name')}: unknown nodeset refs")
        if part.get("topology", "flat" if gen != "4.1.6" else None) not in topologies:
            out.append(f"partition {part.get('name')}: topology not available")
    if "hidden" not in {p.get("name") for p in tfvars.get("slurm_nodesets_partitions") or []}:
        out.append("the hidden partition (used by active checks) is missing")
    return out
