"""The existing npa's result fields, computed from the spec (one place for their shapes).

npa's deploy result carries `region`, `project_id`, `worker_pools`, `docker_cache_pools`,
`control_plane`, `workers` (a capacity summary) and `replacement_guard`, plus
`backend: "soperator"`; its plan is provider-free and shows `region: "(resolve-at-deploy)"`
when the spec names none. Reservation selector values never appear: only their kind.
"""

from __future__ import annotations

from typing import Any

BACKEND = "soperator"
RESOLVE_AT_DEPLOY = "(resolve-at-deploy)"


def control_plane(spec: Any) -> dict[str, Any]:
    system = spec.control_plane.system
    return {"system_min_size": system.min_size, "system_max_size": system.effective_max_size}


def capacity_workers(spec: Any, *, verified: bool, capacity: dict[str, str] | None = None) -> list:
    """npa's `worker_capacity_summary`: `reservation_verified` is null for unreserved pools,
    false in a plan (nothing was asked of the provider) and true after a deploy."""
    rows = []
    for pool in spec.workers:
        mode = pool.capacity_mode(capacity)
        rows.append(
            {
                "name": pool.name,
                "platform": pool.platform,
                "preset": pool.preset,
                "size": pool.size,
                "capacity_mode": mode,
                "reservation_selector": pool.reservation_selector_kind(capacity) or None,
                "reservation_verified": verified if mode == "reserved" else None,
            }
        )
    return rows


def reservation_preflight(spec: Any, capacity: dict[str, str] | None = None) -> str:
    reserved = any(p.capacity_mode(capacity) == "reserved" for p in spec.workers)
    return "required" if reserved else "not-required"


def plan_fields(spec: Any, capacity: dict[str, str] | None = None) -> dict[str, Any]:
    """npa's provider-free plan document (also the extra fields of our Terraform plan)."""
    return {
        "name": spec.name,
        "region": spec.region or RESOLVE_AT_DEPLOY,
        "control_plane": control_plane(spec),
        "workers": capacity_workers(spec, verified=False, capacity=capacity),
        "reservation_preflight": reservation_preflight(spec, capacity),
        "provider_mutation": False,
    }


def deploy_fields(
    spec: Any,
    *,
    region: str | None,
    project_id: str | None,
    plans_checked: int,
    replacements: int,
    capacity: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "region": region or spec.region or "",
        "project_id": project_id or spec.project_id or "",
        "worker_pools": [p.name for p in spec.workers],
        "docker_cache_pools": [p.name for p in spec.workers if p.docker_cache],
        "control_plane": control_plane(spec),
        "workers": capacity_workers(spec, verified=True, capacity=capacity),
        "replacement_guard": {
            # npa refuses any destructive plan; here `allow_destructive` may apply one, and
            # then the guard reports it instead of claiming it passed.
            "status": "passed" if replacements == 0 else "allowed-destructive",
            "plans_checked": plans_checked,
            "replacement_count": replacements,
            "safe_local_replacements_applied": 0,
        },
        "backend": BACKEND,
    }
