"""`npa fleet status`: one row per target from the fleet state and the cluster inventory.

The fleet state says what the fleet last did to a target; the cluster's own inventory
(written by the lifecycle) says what the cluster is now. Both are shown, so a cluster
changed outside the fleet (`npa soperator destroy`) is visible as a mismatch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from npa_sop_tui.fleet.loader import LoadedFleet
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.ownership import read_marker
from npa_sop_tui.fleet.state import load_state
from npa_sop_tui.home import inventory

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


def fleet_status(loaded: LoadedFleet, targets: Sequence[FleetTarget]) -> FleetStatusTable:
    state = load_state(loaded.name)
    rows: list[TargetStatusRow] = []
    for target in targets:
        record = state.targets.get(target.key)
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
            entry = inventory.get(target.name)
        except Exception as exc:  # a damaged record is that row's status-error, not fatal
            rows.append(
                _row(
                    target,
                    record.state if record else None,
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
        rows.append(
            _row(
                target,
                record.state if record else None,
                entry.state if entry else "absent",
                f"{last.kind} {last.result}" if last else None,
                entry.kube_context if entry else None,
                record.subnet_id if record else None,
                read_marker(target) is not None,
                (record.message if record and record.state in BAD_STATES else ""),
            )
        )
    counts = Counter(r.cluster_state or "unsupported" for r in rows)
    ok = not any(r.cluster_state in BAD_STATES or r.fleet_state in BAD_STATES for r in rows)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return FleetStatusTable(
        fleet=loaded.name,
        source=loaded.source,
        ok=ok,
        summary=summary,
        counts=dict(counts),
        targets=rows,
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
