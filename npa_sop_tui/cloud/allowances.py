"""Reserved pools against their project's capacity allowances. Fails closed.

A capacity allowance (CapacityAllowanceService, listed per project) caps how many GPUs of a
capacity block group one project may use. Where the project has one for a reserved pool's
group, it must be active and its free GPUs (limit − usage; no limit: uncapped) must cover
the pools of this spec that use the group. A project without an allowance for the group is
capped by the group alone (checked in reservations.py). Names only, never group IDs.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cloud.model import CapacityAllowance, CapacityBlockGroup

if TYPE_CHECKING:
    from npa_sop_tui.cloud.preflight_report import AllowanceRow, ReservationRow

LIST_HINT = "see them with `nebius capacity capacity-allowance list --parent-id {project}`"


def check_allowances(
    pools: list[Any],
    reservations: list[ReservationRow],
    groups: list[CapacityBlockGroup],
    allowances: list[CapacityAllowance] | None,
    capacity: dict[str, str],
    *,
    project_id: str | None,
    in_use: dict[str, int] | None = None,
) -> tuple[list[AllowanceRow], list[tuple[str, str]]]:
    """Rows and blocking problems (message, hint) for the pools whose group was found."""
    from npa_sop_tui.cloud.preflight_report import AllowanceRow

    in_use = in_use or {}
    project = project_id or "<project>"
    names = {g.id: g.name for g in groups}
    verified = {r.pool for r in reservations if r.group is not None}
    by_group: dict[str, list[Any]] = defaultdict(list)
    for pool in pools:
        group_id = capacity.get(pool.name) or pool.capacity_block_group_id
        if pool.name in verified and group_id:
            by_group[group_id].append(pool)
    rows: list[AllowanceRow] = []
    problems: list[tuple[str, str]] = []
    if allowances is None:
        if by_group:
            problems.append((
                f"worker pool(s) {', '.join(p.name for u in by_group.values() for p in u)}: "
                f"could not read project {project}'s capacity allowances",
                "re-run when the capacity service answers; --no-preflight skips the check",
            ))  # fmt: skip
        return rows, problems
    mine = {a.group_id: a for a in allowances}
    for group_id, users in by_group.items():
        allowance = mine.get(group_id)
        if allowance is None:
            continue
        need = sum(max(p.size * p.gpus_per_node - in_use.get(p.name, 0), 0) for p in users)
        label = ", ".join(p.name for p in users)
        group = names.get(group_id)
        verdict = "ok"
        if allowance.state != "active":
            verdict = allowance.state
            problems.append((
                f"worker pool(s) {label}: project {project}'s capacity allowance in group "
                f"{group!r} is {allowance.state.replace('_', ' ')}, not active",
                "wait until it is active, or ask the tenant admin to fix it; "
                + LIST_HINT.format(project=project),
            ))  # fmt: skip
        elif allowance.limit is not None:
            free = allowance.limit - (allowance.usage or 0)
            if allowance.usage is None or free < need:
                verdict = "short" if allowance.usage is not None else "unknown"
                problems.append((
                    f"worker pool(s) {label}: project {project} may use "
                    f"{'an unknown number of' if allowance.usage is None else free} GPU(s) of "
                    f"group {group!r} ({allowance.limit} allowed, "
                    f"{'?' if allowance.usage is None else allowance.usage} in use), the "
                    f"pools need {need}",
                    "lower the pool sizes or ask the tenant admin to raise the project's "
                    "capacity allowance; " + LIST_HINT.format(project=project),
                ))  # fmt: skip
        for pool in users:
            rows.append(AllowanceRow(pool=pool.name, group=group, state=allowance.state,
                                     limit=allowance.limit, usage=allowance.usage,
                                     gpus_needed=need, verdict=verdict))  # fmt: skip
    return rows, problems
