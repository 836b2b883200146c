"""The recipe's plan-time rules that a type check cannot see, checked on rendered variables.

A non-empty result is a bug in the renderer (validation should have refused the spec), so
`render` refuses to return such output. Names and optional attributes come from the commit's
contract; the rules themselves are the recipe's validations and main.tf preconditions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from npa_sop_tui.recipe.contract import Contract, load_contract
from npa_sop_tui.recipe.shape import GB300_PLATFORM, GB300_RACK, rack_names
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.catalog import Catalog, load_catalog
from npa_sop_tui.spec.model import SUPPORTED_VERSIONS

# Variables that come from the environment (TF_VAR_*), never from the rendered file.
ENV_VARIABLES = (
    "region",
    "iam_tenant_id",
    "iam_project_id",
    "vpc_subnet_id",
    "o11y_iam_tenant_id",
    "o11y_profile",
)


def recipe_problems(
    tfvars: Mapping[str, Any],
    recipe_version: str,
    catalog: Catalog | None = None,
    *,
    contract: Contract | None = None,
) -> list[str]:
    """The recipe's plan-time rules checked on rendered variables; [] when they all hold.

    A non-empty result is a bug in this module (validation should have caught the spec), so
    `render` refuses to return such output.
    """
    cat = catalog or load_catalog()
    gen = SUPPORTED_VERSIONS.get(recipe_version)
    if gen is None:
        return [f"unsupported recipe version {recipe_version}"]
    if contract is None:
        contract = load_contract(load_table().contract_commit(recipe_version))
    out = [
        f"{n} is required"
        for n, decl in contract.variables.items()
        if decl["required"] and n not in ENV_VARIABLES and tfvars.get(n) is None
    ]
    out += [f"{n} must come from TF_VAR_{n}" for n in ENV_VARIABLES if n in tfvars]
    name = str(tfvars.get("company_name"))
    if not (2 <= len(name) <= 32 and re.match(r"^[a-z][a-z\d-]*[a-z\d]+$", name)):
        out.append("company_name breaks ^[a-z][a-z\\d-]*[a-z\\d]+$ (2-32 chars)")
    for n in ("k8s_version", "node_group_version", "slurm_operator_version"):
        if not isinstance(tfvars.get(n), str) or not tfvars.get(n):
            out.append(f"{n} must be a non-empty string")
    keys = tfvars.get("slurm_login_ssh_root_public_keys") or []
    if not keys or any(not str(k).strip() for k in keys):
        out.append("slurm_login_ssh_root_public_keys needs >= 1 non-empty key")
    if tfvars.get("active_checks_scope") not in (contract.one_of("active_checks_scope") or ()):
        out.append("active_checks_scope is not valid for this version")
    if tfvars.get("production") is not False and not tfvars.get("iam_merge_request_url"):
        out.append("production=true needs iam_merge_request_url")
    system = tfvars.get("slurm_nodeset_system") or {}
    low, high = system.get("min_size"), system.get("max_size")
    if low is None or high is None or low < 3 or high < low:
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
        nodeset = tfvars.get(var)
        if nodeset is None:
            continue  # a null nodeset has no disk; "is required" / accounting cover its absence
        disk = nodeset.get("boot_disk") or {}
        if (
            not disk
            and contract.has_attr(var, "boot_disk")
            and not _optional(contract, var, "boot_disk")
        ):
            out.append(f"{var}.boot_disk is required by this recipe")
        size = disk.get("size_gibibytes")
        if disk and (size is None or size < mins[role]):
            out.append(f"{var}.boot_disk below {mins[role]} GiB")
    if tfvars.get("accounting_enabled") and tfvars.get("slurm_nodeset_accounting") is None:
        out.append("accounting needs slurm_nodeset_accounting")
    if (tfvars.get("nfs") or {}).get("enabled") and (tfvars.get("nfs_in_k8s") or {}).get("enabled"):
        out.append("nfs and nfs_in_k8s cannot both be enabled")
    if not (
        tfvars.get("filestore_jail_submounts") or tfvars.get("filesystem_jail_submounts")
    ) and not tfvars.get("allow_empty_jail_submounts"):
        out.append("jail submounts are empty without allow_empty_jail_submounts")
    if tfvars.get("backups_enabled") != "force_disable":
        out.append("backups must be force-disabled (the password is a placeholder)")
    out += _worker_problems(tfvars, contract, cat)
    return out


def _optional(contract: Contract, variable: str, attr: str) -> bool:
    spec = contract.object_attrs(variable).get(attr)
    return bool(spec and spec["optional"])


def _generated_nodesets(workers: list[Mapping[str, Any]]) -> tuple[list[str], set[str], set[str]]:
    """(names, gpu names, gb300 names) of the Slurm nodesets main.tf generates."""
    names: list[str] = []
    gpu: set[str] = set()
    gb300: set[str] = set()
    for w in workers:
        platform = w["resource"]["platform"]
        if platform == GB300_PLATFORM:
            generated = rack_names(w["name"], int(w.get("size") or 0))
            gb300.update(generated)
        else:
            generated = [w["name"]]
        if platform.startswith("gpu-"):
            gpu.update(generated)
        names += generated
    return names, gpu, gb300


def _worker_problems(tfvars: Mapping[str, Any], contract: Contract, cat: Catalog) -> list[str]:
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
        size = w.get("size", 0)
        if size < 1:
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
        for attr in ("boot_disk", "node_local_jail_submounts"):
            if w.get(attr) is None and not _optional(contract, "slurm_nodeset_workers", attr):
                out.append(f"{label}: {attr} is required by this recipe")
        gb300 = w["resource"]["platform"] == GB300_PLATFORM
        if gb300 and (w.get("nvlink") or {}).get("enabled") is not True:
            out.append(f"{label}: GB300 needs nvlink.enabled = true")
        if not gb300 and (w.get("nvlink") or {}).get("enabled"):
            out.append(f"{label}: NVLink is only for gpu-gb300")
        if gb300 and tfvars.get("production") is not False and size % GB300_RACK:
            out.append(f"{label}: GB300 size must be a multiple of {GB300_RACK} in production")
        boot = (w.get("boot_disk") or {}).get("size_gibibytes")
        least = cat.boot_disk_min_gib["worker"]
        if boot is not None and boot < least:
            out.append(f"{label}: boot disk below {least} GiB")
    generated, gpu_sets, gb300_sets = _generated_nodesets(workers)
    topologies = {"flat"}
    if gpu_sets:
        topologies.add("tree-ib")
    if gb300_sets:
        topologies.add("block-nvl72")
    topology_optional = _optional(contract, "slurm_nodesets_partitions", "topology")
    # 4.1.13 narrows what a partition of each topology may hold.
    strict_topologies = contract.declares("slurm_login_on_worker_nodes")
    for part in tfvars.get("slurm_nodesets_partitions") or []:
        name = part.get("name")
        refs = part.get("slurm_nodeset_refs") or []
        if bool(part.get("is_all")) == bool(refs):
            out.append(f"partition {name}: needs is_all or refs, not both")
        if set(refs) - set(generated):
            out.append(
                f"partition {name}: refs must name generated nodesets ({', '.join(generated)})"
            )
        topology = part.get("topology", "flat" if topology_optional else None)
        if topology not in topologies:
            out.append(f"partition {name}: topology {topology!r} not available")
        members = set(generated) if part.get("is_all") else set(refs)
        if strict_topologies and topology == "tree-ib" and members - gpu_sets:
            out.append(f"partition {name}: tree-ib partitions may hold GPU nodesets only")
        if strict_topologies and topology == "block-nvl72" and members - gb300_sets:
            out.append(f"partition {name}: block-nvl72 partitions may hold GB300 nodesets only")
    if "hidden" not in {p.get("name") for p in tfvars.get("slurm_nodesets_partitions") or []}:
        out.append("the hidden partition (used by active checks) is missing")
    return out
