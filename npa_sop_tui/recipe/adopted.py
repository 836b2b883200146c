"""A cluster deployed without this product, taken over: the reverse of render.

The installation's variables (as Terraform evaluates them, terraform/console.py) are read back
into a spec (`spec_from_variables`). Only some of them are the spec's to decide — the
"governed" paths below: the cluster's name and versions, the control plane's sizes and
presets, each pool's size, platform, preset, disks, fabric and capacity mode. Everything else
(NFS, shared memory, partitions, boot disks of the control plane, …) is kept exactly as
deployed: every later render starts from the variables as they were (`merge`) and only the
governed paths take the spec's values. So a plan on the adopted spec shows no changes, and an
edit of the spec changes only what it names.

A governed path whose value the spec cannot reproduce (several root keys, an existing jail
filesystem, a 1-GPU pool with a fabric, …) is kept as deployed too (`mismatches` finds them
at adoption; they are listed in the generated cluster.yaml).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from npa_sop_tui.spec.derived import API_VERSION

WORKERS = "slurm_nodeset_workers"
JAILS = ("filesystem_jail", "filestore_jail")
# Where identity and the o11y settings come from: the environment (TF_VAR_*), never tfvars.
IDENTITY_VARIABLES = {
    "region": "region",
    "iam_tenant_id": "tenant_id",
    "iam_project_id": "project_id",
    "vpc_subnet_id": "subnet_id",
}
ENV_VARIABLES = (*IDENTITY_VARIABLES, "o11y_iam_tenant_id", "o11y_profile", "iam_token")

Path_ = tuple[str, ...]

_TOP: tuple[Path_, ...] = (
    ("company_name",),
    ("slurm_operator_version",),
    ("k8s_version",),
    ("node_group_version",),
    ("accounting_enabled",),
    ("slurm_rest_enabled",),
    ("telemetry_enabled",),
    ("slurm_exporter_enabled",),
    ("public_o11y_enabled",),
    ("use_default_apparmor_profile",),
    ("slurm_login_ssh_root_public_keys",),
    ("filestore_accounting",),
    ("slurm_nodeset_system", "min_size"),
    ("slurm_nodeset_system", "max_size"),
    ("slurm_nodeset_system", "resource", "preset"),
    ("slurm_nodeset_controller", "resource", "preset"),
    ("slurm_nodeset_login", "resource", "preset"),
    ("slurm_nodeset_accounting", "resource", "preset"),
)
_WORKER: tuple[Path_, ...] = (
    ("size",),
    ("resource", "platform"),
    ("resource", "preset"),
    ("boot_disk", "size_gibibytes"),
    ("gpu_cluster",),
    ("preemptible",),
    ("node_local_image_disk",),
    ("nvlink",),
    ("local_nvme",),
)
_MISSING = object()


def label(path: Path_, pool: str | None = None) -> str:
    """`slurm_nodeset_system.min_size`, `slurm_nodeset_workers[gpu].size`."""
    head = f"{WORKERS}[{pool}]." if pool is not None else ""
    return head + ".".join(path)


def _get(doc: Any, path: Path_) -> Any:
    for part in path:
        if not isinstance(doc, dict) or part not in doc:
            return _MISSING
        doc = doc[part]
    return doc


def _same(old: Any, new: Any) -> bool:
    """Equal, an absent attribute counting as null (Terraform's optional attributes)."""
    absent = (_MISSING, None)
    return old == new or (old in absent and new in absent)


def _set(doc: dict[str, Any], path: Path_, value: Any) -> None:
    *parents, last = path
    for part in parents:
        child = doc.get(part)
        if not isinstance(child, dict):
            return  # the deployed value has no such object: the path was kept (mismatches)
        doc = child
    if _same(doc.get(last, _MISSING), value):
        return  # as deployed (null and absent alike): left exactly as it was written
    if value is _MISSING:
        doc.pop(last, None)
    else:
        doc[last] = copy.deepcopy(value)


def _jail(variables: dict[str, Any]) -> str:
    return next((j for j in JAILS if j in variables), JAILS[-1])


def _top_paths(variables: dict[str, Any]) -> Iterator[Path_]:
    yield from _TOP
    yield (_jail(variables), "spec", "size_gibibytes")


def _workers(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = doc.get(WORKERS)
    if not isinstance(found, list):
        return {}
    return {w["name"]: w for w in found if isinstance(w, dict) and isinstance(w.get("name"), str)}


def _worker_paths(pool: str, reserved: set[str]) -> Iterator[Path_]:
    yield from _WORKER
    if pool in reserved:  # decided by the capacity given at run time, else kept
        yield ("reservation_policy",)


def mismatches(
    deployed: dict[str, Any], rendered: dict[str, Any], reserved: set[str] = frozenset()
) -> list[tuple[str, Any, Any]]:
    """(label, deployed, rendered) of every governed path the spec does not reproduce."""
    out: list[tuple[str, Any, Any]] = []
    for path in _top_paths(deployed):
        if path[0] not in deployed and path[0] not in rendered:
            continue
        old, new = _get(deployed, path), _get(rendered, path)
        if not _same(old, new):
            out.append((label(path), old, new))
    ours = _workers(rendered)
    for name, worker in _workers(deployed).items():
        mine = ours.get(name)
        if mine is None:
            continue
        for path in _worker_paths(name, reserved):
            old, new = _get(worker, path), _get(mine, path)
            if not _same(old, new):
                out.append((label(path, name), old, new))
    return [(where, _shown(old), _shown(new)) for where, old, new in out]


def _shown(value: Any) -> Any:
    return None if value is _MISSING else value


def merge(
    deployed: dict[str, Any],
    rendered: dict[str, Any],
    *,
    kept: set[str],
    reserved: set[str] = frozenset(),
) -> dict[str, Any]:
    """The variables to run with: as deployed, with every governed path (but `kept`) set
    from `rendered`. Pools are matched by name: a pool the spec dropped is dropped, a new one
    is taken whole from `rendered`; the deployed order is kept, new pools come last."""
    final = copy.deepcopy(deployed)
    for path in _top_paths(deployed):
        if label(path) in kept or (path[0] not in deployed and path[0] not in rendered):
            continue
        _set(final, path, _get(rendered, path))
    ours = _workers(rendered)
    pools: list[dict[str, Any]] = []
    for name, worker in _workers(deployed).items():
        mine = ours.pop(name, None)
        if mine is None:
            continue
        worker = copy.deepcopy(worker)
        for path in _worker_paths(name, reserved):
            if label(path, name) not in kept:
                _set(worker, path, _get(mine, path))
        pools.append(worker)
    pools += [copy.deepcopy(w) for w in ours.values()]
    if WORKERS in final or pools:
        final[WORKERS] = pools
    return final


# --- the spec -------------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _pool(worker: dict[str, Any]) -> dict[str, Any]:
    resource = worker.get("resource") or {}
    pool: dict[str, Any] = {"name": worker["name"]}
    for key, value in (("platform", resource.get("platform")), ("preset", resource.get("preset"))):
        if _text(value):
            pool[key] = value
    if isinstance(worker.get("size"), int):
        pool["size"] = worker["size"]
    boot = (worker.get("boot_disk") or {}).get("size_gibibytes")
    if isinstance(boot, int):
        pool["boot_disk_gib"] = boot
    fabric = (worker.get("gpu_cluster") or {}).get("infiniband_fabric")
    if _text(fabric):
        pool["fabric"] = fabric
    pool["preemptible"] = worker.get("preemptible") is not None
    image = worker.get("node_local_image_disk") or {}
    pool["docker_cache"] = bool(image.get("enabled"))
    disk = image.get("spec") or {}
    if pool["docker_cache"] and isinstance(disk.get("size_gibibytes"), int):
        pool["docker_cache_gib"] = disk["size_gibibytes"]
    if pool["docker_cache"] and _text(disk.get("disk_type")):
        pool["docker_cache_disk_type"] = disk["disk_type"]
    nvme = worker.get("local_nvme") or {}
    if nvme.get("enabled"):
        pool["local_nvme_device_count"] = nvme.get("device_count")
        pool["local_nvme_device_gb"] = nvme.get("device_capacity_gigabytes")
    return pool


def _role(variables: dict[str, Any], name: str) -> dict[str, Any]:
    preset = _text(((variables.get(name) or {}).get("resource") or {}).get("preset"))
    return {"preset": preset} if preset else {}


def spec_from_variables(
    variables: dict[str, Any], identity: dict[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """The spec mapping the variables describe, and the spec fields that took a default
    because the installation does not say (shown as comments in the written file)."""
    defaulted: list[str] = []
    spec: dict[str, Any] = {"apiVersion": API_VERSION, "name": variables.get("company_name")}
    spec.update({k: v for k, v in identity.items() if v})
    keys = [k for k in variables.get("slurm_login_ssh_root_public_keys") or [] if _text(k)]
    if keys:
        spec["root_login_ssh_public_key"] = keys[0]
    else:
        defaulted.append("root_login_ssh_public_key")
    system = variables.get("slurm_nodeset_system") or {}
    plane: dict[str, Any] = {"system": {}}
    for key in ("min_size", "max_size"):
        if isinstance(system.get(key), int):
            plane["system"][key] = system[key]
    plane["system"].update(_role(variables, "slurm_nodeset_system"))
    for role, variable in (
        ("controller", "slurm_nodeset_controller"),
        ("login", "slurm_nodeset_login"),
        ("accounting", "slurm_nodeset_accounting"),
    ):
        found = _role(variables, variable)
        if found:
            plane[role] = found
        elif _get(variables, (variable, "resource", "preset")) is _MISSING:
            defaulted.append(f"control_plane.{role}.preset")  # null: the tier decides, as ours
    spec["control_plane"] = plane
    spec["workers"] = [_pool(w) for w in _workers(variables).values()]
    accounting = bool(variables.get("accounting_enabled"))
    spec["accounting"] = accounting
    spec["telemetry"] = bool(variables.get("telemetry_enabled"))
    rest = variables.get("slurm_rest_enabled")
    if isinstance(rest, bool) and rest != accounting:
        spec["slurm_rest_enabled"] = rest
    apparmor = variables.get("use_default_apparmor_profile")
    if isinstance(apparmor, bool):
        spec["use_default_apparmor_profile"] = apparmor
    size = _get(variables, (_jail(variables), "spec", "size_gibibytes"))
    if isinstance(size, int):
        spec["jail_size_gib"] = size
    else:
        defaulted.append("jail_size_gib")
    for key in ("slurm_operator_version", "k8s_version", "node_group_version"):
        if _text(variables.get(key)):
            spec[key] = variables[key]
        else:
            defaulted.append(key)
    return spec, defaulted
