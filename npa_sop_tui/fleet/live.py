"""`npa fleet status`: live status of every deployed target (npa runs its native status per
target). One target's failure is that target's `status-error`, never the command's."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from npa_sop_tui.fleet.status import (
    BAD_STATES,
    FleetStatusTable,
    TargetStatusRow,
    with_aggregate,
)

if TYPE_CHECKING:
    from npa_sop_tui.status.model import ClusterStatus

LIVE_STATES = frozenset({"deployed", "degraded-validation", "deploying", "failed"})


async def _snapshot(name: str, *, sandbox: bool, timeout: float) -> ClusterStatus:
    from npa_sop_tui.environment_choice import open_environment

    environment = open_environment(sandbox=sandbox)
    try:
        if sandbox:  # built from its spec: a cluster the existing npa deployed is adopted
            from npa_sop_tui.lifecycle.adopt import arequire_cluster

            await arequire_cluster(name, store=environment.state_store())
        settings = environment.status_settings(name)
        return await environment.status_once(settings, initial_timeout=timeout)
    finally:
        await environment.aclose()


async def _one(row: TargetStatusRow, *, sandbox: bool, timeout: float) -> None:
    try:
        snap = await _snapshot(row.name, sandbox=sandbox, timeout=timeout)
    except Exception as exc:
        row.live_state = "status-error"
        text = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        row.message = (row.message + "; " if row.message else "") + text
        return
    row.live_state = snap.reach
    row.verdict = snap.verdict.state
    kube = snap.freshness.get("kube")
    if snap.reach != "running" and kube is not None:
        why = kube.error or kube.note or f"Kubernetes {kube.state}"
        row.message = (row.message + "; " if row.message else "") + why
    if snap.verdict.state in ("degraded", "failed") and not row.message:
        row.message = snap.verdict.summary


async def add_live_status(
    table: FleetStatusTable, *, sandbox: bool, timeout: float = 10.0, concurrency: int = 4
) -> FleetStatusTable:
    """Each row whose cluster the inventory holds gets a live snapshot, at most
    `concurrency` at once; `ok` turns false for a `status-error`."""
    # The sandbox writes ONE kubeconfig per npa home, naming the context of the cluster it
    # opened last, so its snapshots are taken one at a time.
    gate = asyncio.Semaphore(1 if sandbox else concurrency)

    async def bounded(row: TargetStatusRow) -> None:
        async with gate:
            await _one(row, sandbox=sandbox, timeout=timeout)

    rows = [r for r in table.targets if r.cluster_state in LIVE_STATES]
    await asyncio.gather(*(bounded(r) for r in rows))
    bad = any({r.cluster_state, r.fleet_state, r.live_state} & BAD_STATES for r in table.targets)
    table.ok = not bad
    live: dict[str, int] = {}
    for row in rows:
        live[row.live_state or "unknown"] = live.get(row.live_state or "unknown", 0) + 1
    if live:
        table.summary += "; live: " + ", ".join(f"{n} {s}" for s, n in sorted(live.items()))
    return with_aggregate(table)


def run_live(table: FleetStatusTable, *, sandbox: bool, timeout: float) -> Any:
    return asyncio.run(add_live_status(table, sandbox=sandbox, timeout=timeout))
