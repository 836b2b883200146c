"""The existing npa's fleet records, read beside ours (never written).

`npa fleet` keeps, under the same `<npa home>/fleet/<fleet>/`:
- `fleet-state.json`: its aggregate `{name, tenant_id, region, project_prefix, profile,
  clusters: [{…native result, backend, project_key, cluster_name, project_id, region,
  backend_state_root, status}], deployed, failed, backend_counts}`;
- per target, `<project>/<cluster>/.npa-backend-owner.json`: `{fleet_name, project_key,
  cluster_name, backend}`, its proof that the target's cluster is the fleet's.

The two share the state file's name with ours (fleet/state.py tells them apart by shape).
One damaged entry is that target's problem only: it never makes the file unreadable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from npa_sop_tui.fleet.records import fleet_root

STATE_FILE = "fleet-state.json"
OWNER_FILE = ".npa-backend-owner.json"
_LIMIT = 8 * 1024 * 1024

# npa's per-target statuses, as our fleet states (its soperator success is `ready`).
_STATES = {
    "deployed": "deployed",
    "ready": "deployed",
    "running": "deployed",
    "destroyed": "destroyed",
    "absent": "destroyed",
    "destroy-incomplete": "destroy-incomplete",
    "degraded-validation": "failed",
    "error": "failed",
    "failed": "failed",
}


def is_npa_state(doc: Any) -> bool:
    """npa's aggregate (a `clusters` list), not our records (`targets`)."""
    return isinstance(doc, dict) and isinstance(doc.get("clusters"), list) and "targets" not in doc


def _read_json(path: Path) -> Any:
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    try:
        return json.loads(read_regular_text(path, limit=_LIMIT, what="npa fleet record"))
    except (Unreadable, ValueError):
        return None


def npa_entries(fleet: str) -> dict[tuple[str, str], dict[str, Any]]:
    """npa's aggregate entries by (project key, cluster name); an entry that is not an
    object with both keys is skipped (it names no target)."""
    doc = _read_json(fleet_root(fleet) / STATE_FILE)
    if not is_npa_state(doc):
        return {}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in doc["clusters"]:
        if not isinstance(entry, dict):
            continue
        key, name = entry.get("project_key"), entry.get("cluster_name")
        if isinstance(key, str) and isinstance(name, str):
            found[(key, name)] = entry
    return found


def npa_state_of(entry: dict[str, Any] | None) -> str | None:
    """An npa entry's status as one of our fleet states (an unknown one as it is)."""
    if entry is None:
        return None
    status = entry.get("status")
    if not isinstance(status, str) or not status:
        return "unknown"
    return _STATES.get(status, status)


def npa_owner(fleet: str, project_key: str, cluster: str) -> bool:
    """Whether npa's ownership marker names this target of this fleet."""
    data = _read_json(fleet_root(fleet) / project_key / cluster / OWNER_FILE)
    if not isinstance(data, dict):
        return False
    expected = {"fleet_name": fleet, "project_key": project_key, "cluster_name": cluster}
    named = all(data.get(k) in (None, "", v) for k, v in expected.items())
    return named and data.get("backend") == "soperator"  # npa reads an absent one as mk8s
