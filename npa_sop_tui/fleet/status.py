"""`npa fleet status`: one row per target from the fleet state and the cluster inventory.

The fleet state says what the fleet last did to a target; the cluster's own inventory
(written by the lifecycle) says what the cluster is now. Both are shown, so a cluster
changed outside the fleet (`npa soperator destroy`) is visible as a mismatch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.fleet.loader import LoadedFleet
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.npa_records import npa_entries, npa_owner, npa_state_of
from npa_sop_tui.fleet.ownership import read_marker
from npa_sop_tui.fleet.state import load_state
from npa_sop_tui.home import inventory, npa_installs

# Any of these makes `fleet status` exit 1 (as documented): the inventory's and the live ones.
BAD_STATES = frozenset(
    {"failed", "interrupted", "destroy-incomplete", "degraded-validation", "status-error"}
)


class TargetStatusRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    project_key: str
    name: str
    backend: str
    labels: dict[str, str]
    fleet_state: str | None
    cluster_state: str | None
    last_operation: str | None
    kube_context: str | None
    subnet_id: str | None
    owned_by_fleet: bool
    message: str = ""
    # Live status (npa's per-target `status`): running | unreachable | status-error, with the
    # verdict of the snapshot; None when nothing is deployed or live status was not asked.
    live_state: str | None = None
    verdict: str | None = None


class FleetStatusTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fleet: str
    source: str
    ok: bool
    summary: str
    counts: dict[str, int]
    targets: list[TargetStatusRow]
    # npa's status document beside ours (`with_aggregate`): `name`, and per target
    # `clusters[]` with `status` running | status-error (live), else the recorded state.
    name: str = ""
    clusters: list[dict[str, Any]] = Field(default_factory=list)
    deployed: int = 0
    failed: int = 0
    backend_counts: dict[str, int] = Field(default_factory=dict)


def with_aggregate(table: FleetStatusTable) -> FleetStatusTable:
    """npa's fields from the rows (after live status, when there is any)."""
    from npa_sop_tui.fleet.aggregate import BACKENDS
    from npa_sop_tui.fleet.records import fleet_root

    clusters = []
    for row in table.targets:
        status = row.live_state or row.cluster_state or row.fleet_state or "unknown"
        entry: dict[str, Any] = {
            "backend": row.backend,
            "project_key": row.project_key,
            "cluster_name": row.name,
            "backend_state_root": str(fleet_root(table.fleet) / row.project_key / row.name),
            "status": status,
            "cluster_state": row.cluster_state,
            "fleet_state": row.fleet_state,
            "kube_context": row.kube_context,
        }
        if status in BAD_STATES and row.message:
            entry["error"] = row.message
        clusters.append(entry)
    table.name = table.fleet
    table.clusters = clusters
    table.deployed = sum(1 for c in clusters if c["status"] in ("running", "deployed"))
    table.failed = sum(1 for c in clusters if c["status"] in BAD_STATES)
    table.backend_counts = {b: sum(1 for r in table.targets if r.backend == b) for b in BACKENDS}
    return table


def _cluster_state(name: str) -> tuple[str, Any]:
    """The cluster's state and its inventory entry; one the existing npa deployed and not
    adopted yet counts as what its files say."""
    entry = inventory.get(name)
    if entry is not None:
        return entry.state, entry
    found = npa_installs.find(name)
    if found is not None and found.problem is None:
        return ("deployed" if found.has_state else "planned"), None
    if found is not None:
        raise ValueError(found.problem)
    return "absent", None


def fleet_status(loaded: LoadedFleet, targets: Sequence[FleetTarget]) -> FleetStatusTable:
    state = load_state(loaded.name)
    npa = npa_entries(loaded.name)  # the existing npa's records of the same fleet, if any
    rows: list[TargetStatusRow] = []
    for target in targets:
        record = state.targets.get(target.key)
        npa_state = npa_state_of(npa.get((target.project_key, target.name)))
        recorded = record.state if record else npa_state
        if target.backend != "soperator":
            rows.append(
                _row(
                    target,
                    None,
                    None,
                    None,
                    None,
                    None,
                    False,
                    f"backend {target.backend} is not handled by npa-sop-tui",
                )
            )
            continue
        try:
            cluster_state, entry = _cluster_state(target.name)
        except Exception as exc:  # a damaged record is that row's status-error, not fatal
            rows.append(
                _row(
                    target,
                    recorded,
                    "status-error",
                    None,
                    None,
                    None,
                    False,
                    getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}",
                )
            )
            continue
        last = entry.last_operation if entry else None
        owned = read_marker(target) is not None or npa_owner(
            loaded.name, target.project_key, target.name
        )
        rows.append(
            _row(
                target,
                recorded,
                cluster_state,
                f"{last.kind} {last.result}" if last else None,
                entry.kube_context if entry else None,
                record.subnet_id if record else None,
                owned,
                (record.message if record and record.state in BAD_STATES else ""),
            )
        )
    counts = Counter(r.cluster_state or "unsupported" for r in rows)
    ok = not any(r.cluster_state in BAD_STATES or r.fleet_state in BAD_STATES for r in rows)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return with_aggregate(
        FleetStatusTable(
            fleet=loaded.name,
            source=loaded.source,
            ok=ok,
            summary=summary,
            counts=dict(counts),
            targets=rows,
        )
    )


def _row(
    target: FleetTarget,
    fleet_state: str | None,
    cluster_state: str | None,
    last_operation: str | None,
    kube_context: str | None,
    subnet_id: str | None,
    owned: bool,
    message: str,
) -> TargetStatusRow:
    return TargetStatusRow(
        key=target.key,
        project_key=target.project_key,
        name=target.name,
        backend=target.backend,
        labels=target.labels,
        fleet_state=fleet_state,
        cluster_state=cluster_state,
        last_operation=last_operation,
        kube_context=kube_context,
        subnet_id=subnet_id,
        owned_by_fleet=owned,
        message=message,
    )
