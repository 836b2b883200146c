"""npa's `workers[]` / `capacity_status` from a cluster's Terraform state (via the state store).

Same rules as the existing npa: `nebius_mk8s_v1_node_group` resources named
`worker_v2`; pool = node-group name without its trailing `-<digits>`; mode `reserved` for
STRICT reservation policy with IDs, `preemptible` when `template.preemptible` is set, else
`on-demand`; nodes = Σ fixed_node_count.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.status.model import WorkerCapacity
from npa_sop_tui.terraform.state import STATE_FILE, instances, read_state

if TYPE_CHECKING:
    from npa_sop_tui.state.store import StateStore

_SUFFIX = re.compile(r"-\d+$")


def workers_from_tfstate(path: Path) -> list[WorkerCapacity]:
    doc = read_state(path)
    if doc is None:
        raise ValueError(f"{path}: not a readable Terraform state")
    return workers_from_state(doc)


def workers_from_state(doc: dict[str, Any]) -> list[WorkerCapacity]:
    items = list(instances(doc))
    pools = _mk8s_pools(items) or _standin_pools(items)
    return [
        WorkerCapacity(
            name=name, capacity_mode=v["mode"], node_groups=v["groups"], nodes=v["nodes"]
        )
        for name, v in sorted(pools.items())
    ]


Instances = list[tuple[dict[str, Any], dict[str, Any]]]


def _mk8s_pools(items: Instances) -> dict[str, dict[str, Any]]:
    pools: dict[str, dict[str, Any]] = {}
    for res, inst in items:
        if res.get("type") != "nebius_mk8s_v1_node_group" or res.get("name") != "worker_v2":
            continue
        attrs = inst.get("attributes") or {}
        pool = _SUFFIX.sub("", str(attrs.get("name") or ""))
        template = attrs.get("template") or {}
        if isinstance(template, list):
            template = template[0] if template else {}
        entry = pools.setdefault(pool, {"groups": 0, "nodes": 0, "mode": "on-demand"})
        entry["groups"] += 1
        entry["nodes"] += int(attrs.get("fixed_node_count") or 0)
        reservation = template.get("reservation_policy") or {}
        if isinstance(reservation, list):
            reservation = reservation[0] if reservation else {}
        if reservation.get("policy") == "STRICT" and reservation.get("reservation_ids"):
            entry["mode"] = "reserved"
        elif template.get("preemptible") is not None and entry["mode"] != "reserved":
            entry["mode"] = "preemptible"
    return pools


# A stand-in's worker node groups (terraform/standin_addresses.py names them after the real
# `nebius_mk8s_v1_node_group.worker_v2`; an older stand-in called them `worker_v2`), and the
# part that holds what changes in place, the node count among it.
STANDIN_GROUPS = ("nebius_mk8s_v1_node_group__worker_v2", "worker_v2")
STANDIN_SIZES = ("nebius_mk8s_v1_node_group__worker_v2__update", "worker_v2_size")


def _standin_pools(items: Instances) -> dict[str, dict[str, Any]]:
    """The sandbox's stand-in recipe has no Nebius provider: its worker node groups are
    `null_resource`s whose triggers carry the group name and capacity mode, and the node
    count lives in their in-place part (so a resize is not a replace)."""
    sizes: dict[str, int] = {}
    groups: list[dict[str, Any]] = []
    for res, inst in items:
        if res.get("type") != "null_resource" or res.get("mode", "managed") != "managed":
            continue
        triggers = (inst.get("attributes") or {}).get("triggers") or {}
        if res.get("name") in STANDIN_SIZES:
            sizes[str(triggers.get("name"))] = int(triggers.get("size") or 0)
        elif res.get("name") in STANDIN_GROUPS:
            groups.append(triggers)
    pools: dict[str, dict[str, Any]] = {}
    for triggers in groups:
        group = str(triggers.get("name") or "")
        entry = pools.setdefault(
            _SUFFIX.sub("", group), {"groups": 0, "nodes": 0, "mode": "on-demand"}
        )
        entry["groups"] += 1
        entry["nodes"] += sizes.get(group, 0)
        if triggers.get("capacity") in ("reserved", "preemptible"):
            entry["mode"] = triggers["capacity"]
    return pools


def find_tfstate(name: str, terraform_dir: Path | None = None) -> Path | None:
    """A local terraform.tfstate of the cluster: explicit dir, the inventory, else cluster_dir."""
    from npa_sop_tui.state.local import LocalStore

    return LocalStore().tfstate_path(name, terraform_dir)


def capacity_for(
    name: str, terraform_dir: Path | None = None, store: StateStore | None = None
) -> tuple[list[WorkerCapacity], str]:
    """Worker pools as applied: from an explicit folder's state, else from wherever the state
    store keeps the cluster's state (local files, or the team's bucket)."""
    from npa_sop_tui.errors import NpaError

    doc = read_state(Path(terraform_dir) / STATE_FILE) if terraform_dir is not None else None
    if doc is None:
        try:
            if store is None:
                from npa_sop_tui.state.stores import default_store

                store = default_store()
            doc = store.read_tfstate(name)
        except NpaError:  # unreachable bucket, damaged record: capacity is just unknown
            doc = None
    if doc is None:
        return [], "unknown"
    workers = workers_from_state(doc)
    # A state without worker node groups (a phase-1 apply, a destroyed cluster) says nothing
    # about capacity: "applied" always comes with the pools it describes.
    return workers, "applied" if workers else "unknown"
