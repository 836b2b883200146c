"""What a saved Terraform plan would do, read from `terraform show -json`.

Counts per action and module, a change set per worker pool (created, resized in place,
replaced, deleted) and the addresses that would be deleted or replaced, which `deploy`
refuses unless explicitly allowed — all in the real recipe's addresses (a stand-in's are
turned back, terraform/standin_addresses.py).

Which replacements are safe is not listed here: the caller passes the recipe's own list for
its commit (recipe/graph.py derives it from the recipe: rendered files, local wait steps).
A `create_before_destroy` replacement (`["create", "delete"]`) is a replacement too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.events import PoolChange
from npa_sop_tui.terraform.standin_addresses import real_address, real_type_name

# An older stand-in modelled in-place updates (a node-group size, Helm values) as small
# `null_resource`s named `*_size` / `*_values`; they are counted as the updates they stand for.
IN_PLACE_MODELS = re.compile(
    r"^module\.[a-z0-9_]+\.null_resource\.[a-z0-9_]+_(size|values)(\[.*\])?$"
)
WORKER_GROUPS = {  # (type, name) of the worker node groups: the recipe's, an older stand-in's
    ("nebius_mk8s_v1_node_group", "worker_v2"),
    ("null_resource", "worker_v2"),
    ("null_resource", "worker_v2_size"),
}
_INDEX = re.compile(r"\[[^\]]*\]$")


class PlanChanges(BaseModel):
    model_config = ConfigDict(extra="forbid")

    add: int = 0
    change: int = 0
    remove: int = 0
    by_module: dict[str, dict[str, int]] = Field(default_factory=dict)
    pools: list[PoolChange] = Field(default_factory=list)
    destructive: list[str] = Field(default_factory=list)


def _actions(change: dict[str, Any]) -> str:
    actions = change.get("change", {}).get("actions", [])
    if actions in (["delete", "create"], ["create", "delete"]):
        address = str(change.get("address", ""))
        if IN_PLACE_MODELS.match(address) or real_address(address)[1]:
            return "update"
        return "replace"
    if actions == ["create"]:
        return "create"
    if actions == ["update"]:
        return "update"
    if actions == ["delete"]:
        return "delete"
    return "noop"


def _pool_of(values: dict[str, Any] | None) -> tuple[str | None, int | None]:
    if not isinstance(values, dict):
        return None, None
    triggers = values.get("triggers") if isinstance(values.get("triggers"), dict) else {}
    name = values.get("name") or triggers.get("name")
    size = values.get("fixed_node_count", triggers.get("size"))
    pool = re.sub(r"-\d+$", "", str(name)) if name else None
    try:
        return pool, int(size) if size is not None else None
    except (TypeError, ValueError):
        return pool, None


def _count_pool(
    pools: dict[str, dict[str, Any]],
    addr: str,
    action: str,
    name: str,
    changes: list[dict[str, Any]],
) -> None:
    """Add one worker node group's change to its pool's change set."""
    found = [(_pool_of(c["change"].get("before")), _pool_of(c["change"].get("after")), c)
             for c in changes]  # fmt: skip
    # Attributes that depend on unknown values are hidden in a plan; an older stand-in's
    # instance key (`<pool>-<chunk>`) is always known.
    index = changes[0].get("index")
    key_pool = re.sub(r"-\d+$", "", index) if isinstance(index, str) else None
    pool = next((p for (bp, _), (ap, _), _ in found for p in (ap, bp) if p), None) or key_pool
    if not pool:
        return
    info = pools.setdefault(
        pool, {"before": 0, "after": 0, "actions": set(), "resources": [], "sized": False}
    )
    info["resources"].append(addr)
    if name == "worker_v2":  # the group itself (an older stand-in kept its size apart)
        info["actions"].add(action)
    before = next((s for (_, s), _, c in found if s is not None and c["change"].get("before")
                   is not None), None)  # fmt: skip
    after = next((s for _, (_, s), _ in found if s is not None), None)
    if before is not None:
        info["before"] += before
        info["sized"] = True
    if after is not None and action != "delete":
        info["after"] += after
        info["sized"] = True


def _tainted(plan: dict[str, Any]) -> set[str]:
    """Addresses marked tainted in the plan's prior state (creation failed or interrupted)."""
    found: set[str] = set()
    stack = [((plan.get("prior_state") or {}).get("values") or {}).get("root_module") or {}]
    while stack:
        module = stack.pop()
        found.update(r["address"] for r in module.get("resources", []) if r.get("tainted"))
        stack.extend(module.get("child_modules", []))
    return found


def _merged(plan: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(real address, action, its changes) per resource: a stand-in's in-place part is
    folded into the resource it belongs to (created or deleted with it; replaced alone, an
    update)."""
    main: dict[str, tuple[str, dict[str, Any]]] = {}
    in_place: dict[str, tuple[str, dict[str, Any]]] = {}
    order: list[str] = []
    for change in plan.get("resource_changes", []) or []:
        action = _actions(change)
        if action == "noop" or change.get("mode") == "data":
            continue
        real, part = real_address(str(change.get("address", "")))
        if real not in main and real not in in_place:
            order.append(real)
        (in_place if part else main)[real] = (action, change)
    out = []
    for real in order:
        changes = [entry[1] for entry in (main.get(real), in_place.get(real)) if entry]
        action = main[real][0] if real in main else "update"
        out.append((real, action, changes))
    return out


def summarize_plan(plan: dict[str, Any], safe: Iterable[str] = ()) -> PlanChanges:
    """Counts, per-module actions, destructive addresses and per-pool changes of a plan.

    `safe`: addresses (without instance keys) of the recipe's local bookkeeping, replaced on
    purpose and holding no cloud object (recipe/graph.py); replacing or deleting anything
    else is destructive. Replacing a tainted
    resource is not destructive either: it never finished being created (an interrupted or
    failed apply), and recreating it is how a re-run converges.
    """
    result = PlanChanges()
    pools: dict[str, dict[str, Any]] = {}
    tainted = {real_address(a)[0] for a in _tainted(plan)}
    safe_set = set(safe)
    for addr, action, changes in _merged(plan):
        change = changes[0]
        module = str(change.get("module_address", "root")).split(".")
        top = ".".join(module[:2]).split("[")[0] if module[0] == "module" else "root"
        per_module = result.by_module.setdefault(top, {})
        per_module[action] = per_module.get(action, 0) + 1
        if action in ("create", "replace"):
            result.add += 1
        if action in ("delete", "replace"):
            result.remove += 1
            # the recipe's bookkeeping (a rendered file, a wait) holds no cloud object
            harmless = _INDEX.sub("", addr) in safe_set or (action == "replace" and addr in tainted)
            if not harmless:
                result.destructive.append(addr)
        if action == "update":
            result.change += 1
        kind, name, _ = real_type_name(str(change.get("type")), str(change.get("name")))
        if top == "module.k8s" and (kind, name) in WORKER_GROUPS:
            _count_pool(pools, addr, action, name, changes)
    for pool, info in sorted(pools.items()):
        actions: set[str] = info["actions"]
        if actions == {"create"}:
            kind = "create"
        elif actions == {"delete"}:
            kind = "delete"
        elif "replace" in actions or ("delete" in actions and "create" in actions):
            kind = "replace"
        elif info["before"] != info["after"]:
            kind = "resize"
        else:
            kind = "update"
        result.pools.append(
            PoolChange(
                pool=pool,
                change=kind,  # type: ignore[arg-type]
                # Unknown (None), not 0, when the plan touches no size-bearing resource.
                size_before=info["before"] if kind != "create" and info["sized"] else None,
                size_after=info["after"] if kind != "delete" and info["sized"] else None,
                resources=sorted(info["resources"]),
            )
        )
    result.destructive.sort()
    return result
