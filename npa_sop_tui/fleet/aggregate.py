"""npa's fleet aggregate, beside our report: `{name, tenant_id, region, project_prefix,
profile, clusters[], deployed, failed, backend_counts}`.

Each `clusters` entry is the target's native result plus `backend`, `project_key`,
`project_id`, `cluster_name`, `region`, `backend_state_root`; a failed target is
`{…, status: "error", error}`. Unlike npa (which counts only `deployed`, so a successful
soperator target, whose native status is `ready`, was counted as failed), success is the
outcome's: a deployed target is `status: "deployed"` with the native status kept as
`cluster_status`.
"""

from __future__ import annotations

from typing import Any

BACKENDS = ("mk8s", "soperator")


def cluster_entry(target: Any, outcome: Any, state_root: str) -> dict[str, Any]:
    entry: dict[str, Any] = dict(outcome.result or {})
    if "status" in entry:
        entry["cluster_status"] = entry["status"]
    entry.update(
        {
            "backend": target.backend,
            "project_key": target.project_key,
            "project_id": target.project_id,
            "cluster_name": target.name,
            "region": entry.get("region") or target.region,
            "backend_state_root": state_root,
            "status": outcome.status if outcome.ok or outcome.status == "not-run" else "error",
        }
    )
    if not outcome.ok and outcome.status != "not-run":
        entry["error"] = outcome.message
    return entry


def aggregate(
    loaded: Any, clusters: list[dict[str, Any]], project_prefix: str | None = None
) -> dict[str, Any]:
    file = loaded.file
    return {
        "name": loaded.name,
        "tenant_id": file.tenant_id or "",
        "region": file.region or "",
        "project_prefix": file.project_prefix if project_prefix is None else project_prefix,
        "profile": file.profile or "",
        "clusters": clusters,
        "deployed": sum(1 for c in clusters if c["status"] == "deployed"),  # a plan deploys none
        "backend_counts": {b: sum(1 for c in clusters if c["backend"] == b) for b in BACKENDS},
    }


# npa's provider-free plan of one soperator cluster (lifecycle/contract_fields.py's fields).
_PLAN_FIELDS = ("name", "region", "control_plane", "workers", "reservation_preflight")


def plan_projects(
    loaded: Any, targets: list[Any], clusters: list[dict[str, Any]], prefix: str
) -> dict[str, Any]:
    """npa's plan document beside ours: `project_count`, `cluster_count`, and `projects[]`
    with each project's ID, display name (prefix + name), whether it would be created (this
    tool never creates one: a project without an ID fails identity) and its clusters."""
    projects: list[dict[str, Any]] = []
    by_index: dict[int, dict[str, Any]] = {}
    for target, cluster in zip(targets, clusters, strict=True):
        project = by_index.get(target.project_index)
        if project is None:
            declared = loaded.file.projects[target.project_index]
            project = by_index[target.project_index] = {
                "project_id": target.project_id or None,
                "display_name": f"{prefix}{declared.name}" if declared.name else None,
                "will_create": not target.project_id,
                "clusters": [],
            }
            projects.append(project)
        planned = {k: cluster[k] for k in _PLAN_FIELDS if k in cluster}
        project["clusters"].append(
            {"backend": target.backend, **planned, "provider_mutation": False}
        )
    return {
        "project_count": len(loaded.file.projects),
        "cluster_count": len(loaded.targets),
        "projects": projects,
    }
