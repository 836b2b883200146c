"""What a saved Terraform plan would do, read from `terraform show -json`.

Counts per action and module, a change set per worker pool (created, resized in place,
replaced, deleted) and the addresses that would be deleted or replaced, which `deploy`
refuses unless explicitly allowed.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.events import PoolChange

# Replacements that are safe to apply without asking: local bookkeeping resources upstream
# re-creates on purpose (the kubectl context and the login script's address), and the
# stand-in's model of an in-place node-group resize (null_resource can only express
# change by replacement).
SAFE_REPLACEMENTS = (
    re.compile(r"^module\.k8s\.terraform_data\.kubectl_cluster_context(\[.*\])?$"),
    re.compile(r"^module\.login_script\.terraform_data\.lb_service_ip(\[.*\])?$"),
    re.compile(r"^module\.login_script\.local_file\.this(\[.*\])?$"),
)
# The stand-in models in-place updates (a node-group size, Helm values) as small
# `null_resource`s named `*_size` / `*_values` that can only be replaced; they are counted
# and guarded as the in-place updates they stand for.
IN_PLACE_MODELS = re.compile(
    r"^module\.[a-z0-9_]+\.null_resource\.[a-z0-9_]+_(size|values)(\[.*\])?$"
)
WORKER_GROUP_NAMES = ("worker_v2", "worker_v2_size")


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
        if IN_PLACE_MODELS.match(str(change.get("address", ""))):
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


def _tainted(plan: dict[str, Any]) -> set[str]:
    """Addresses marked tainted in the plan's prior state (creation failed or interrupted)."""
    found: set[str] = set()
    stack = [((plan.get("prior_state") or {}).get("values") or {}).get("root_module") or {}]
    while stack:
        module = stack.pop()
        found.update(r["address"] for r in module.get("resources", []) if r.get("tainted"))
        stack.extend(module.get("child_modules", []))
    return found


def summarize_plan(plan: dict[str, Any]) -> PlanChanges:
    """Counts, per-module actions, destructive addresses and per-pool changes of a plan.

    Replacing a tainted resource is not destructive: it never finished being created (an
    interrupted or failed apply), and recreating it is how a re-run converges.
    """
    result = PlanChanges()
    pools: dict[str, dict[str, Any]] = {}
    tainted = _tainted(plan)
    for change in plan.get("resource_changes", []) or []:
        action = _actions(change)
        if action == "noop" or change.get("mode") == "data":
            continue
        addr = str(change.get("address", ""))
        module = str(change.get("module_address", "root")).split(".")
        top = ".".join(module[:2]).split("[")[0] if module[0] == "module" else "root"
        per_module = result.by_module.setdefault(top, {})
        per_module[action] = per_module.get(action, 0) + 1
        if action in ("create", "replace"):
            result.add += 1
        if action in ("delete", "replace"):
            result.remove += 1
            safe = action == "replace" and (
                addr in tainted or any(p.match(addr) for p in SAFE_REPLACEMENTS)
            )
            if not safe:
                result.destructive.append(addr)
        if action == "update":
            result.change += 1
        if top == "module.k8s" and change.get("name") in WORKER_GROUP_NAMES:
            before_pool, before_size = _pool_of(change["change"].get("before"))
            after_pool, after_size = _pool_of(change["change"].get("after"))
            # Attributes that depend on unknown values are hidden in a plan; the instance
            # key (`<pool>-<chunk>`) is always known.
            index = change.get("index")
            key_pool = re.sub(r"-\d+$", "", index) if isinstance(index, str) else None
            pool = after_pool or before_pool or key_pool
            if not pool:
                continue
            info = pools.setdefault(
                pool, {"before": 0, "after": 0, "actions": set(), "resources": [], "sized": False}
            )
            info["resources"].append(addr)
            is_group = change.get("name") == "worker_v2"
            if is_group:
                info["actions"].add(action)
            if before_size is not None and change["change"].get("before") is not None:
                info["before"] += before_size
                info["sized"] = True
            if after_size is not None and action != "delete":
                info["after"] += after_size
                info["sized"] = True
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
