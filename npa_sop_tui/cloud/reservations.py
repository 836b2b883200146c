"""Reserved pools against their capacity block groups. Fails closed.

A reserved pool names its group by ID (run time: `--capacity-block-group POOL=ID` or
`NPA_CAPACITY_BLOCK_GROUPS`; or the spec) or by name (`capacity_block_group_name`). The
group must exist exactly once in the tenant, be active, and sit in the pool's region,
platform and fabric; its free GPUs must cover every pool that uses it (size × GPUs per
node), and ResourceAdvice must hold exactly one fresh reserved-availability entry for the
pool's platform, preset, region and fabric whose free nodes cover the pool's size (as the
existing npa requires; no entry, a stale one or no answer is a failure). Problems name the
pool and the group's name, never its ID (IDs are secrets).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cloud.model import CapacityBlockGroup, ResourceAdvice

if TYPE_CHECKING:
    from npa_sop_tui.cloud.preflight_report import ReservationRow

LIST_HINT = "see them with `nebius capacity capacity-block-group list --parent-id {tenant}`"


def _find(
    pool: Any, capacity: dict[str, str], groups: list[CapacityBlockGroup]
) -> tuple[str, list[CapacityBlockGroup]]:
    group_id = capacity.get(pool.name) or pool.capacity_block_group_id
    if group_id:
        return "id", [g for g in groups if g.id == group_id]
    return "name", [g for g in groups if g.name == pool.capacity_block_group_name]


def _advice_entries(
    pool: Any, advice: list[ResourceAdvice] | None, region: str | None
) -> list[ResourceAdvice]:
    """The ResourceAdvice entries for the pool's platform, preset, region and fabric."""
    return [
        a for a in advice or []
        if a.platform == pool.platform and a.preset == pool.preset
        and (region is None or a.region == region)
        and (not pool.fabric or a.fabric == pool.fabric)
    ]  # fmt: skip


def check_reservations(
    pools: list[Any],
    capacity: dict[str, str],
    *,
    groups: list[CapacityBlockGroup] | None,
    advice: list[ResourceAdvice] | None,
    tenant_id: str | None,
    region: str | None,
    read_error: str | None = None,
    in_use: dict[str, int] | None = None,
) -> tuple[list[ReservationRow], list[tuple[str, str]], dict[str, str]]:
    """Rows, blocking problems (message, hint) and pool → group ID for name selectors.

    `in_use`: GPUs this cluster's pools already hold in their groups (a re-deploy); they
    are part of the group's usage, so they are credited back.
    """
    in_use = in_use or {}
    from npa_sop_tui.cloud.preflight_report import ReservationRow

    rows: list[ReservationRow] = []
    problems: list[tuple[str, str]] = []
    resolved: dict[str, str] = {}
    tenant = tenant_id or "<tenant>"
    by_group: dict[str, list[Any]] = defaultdict(list)
    chosen: dict[str, CapacityBlockGroup] = {}

    for pool in pools:
        gpus = pool.size * pool.gpus_per_node
        kind, matches = _find(pool, capacity, groups or [])
        label = "given by ID" if kind == "id" else f"named {pool.capacity_block_group_name!r}"
        row = ReservationRow(pool=pool.name, selector=kind, gpus_needed=gpus,
                             nodes_needed=pool.size, verdict="ok")  # fmt: skip
        rows.append(row)

        def fail(verdict: str, message: str, hint: str, *, row: ReservationRow = row) -> None:
            row.verdict = verdict
            problems.append((f"worker pool {row.pool}: {message}", hint))

        if groups is None:
            fail(
                "unknown",
                f"could not verify its reserved capacity ({read_error or 'no tenant to ask'})",
                "re-run when the capacity service answers; --no-preflight skips the check "
                "(Terraform may then fail half-way)",
            )
            continue
        if not matches:
            fail(
                "missing",
                f"the capacity block group {label} does not exist in tenant {tenant}",
                "check the group and pass its ID with --capacity-block-group "
                f"{pool.name}=<ID> (or NPA_CAPACITY_BLOCK_GROUPS); "
                + LIST_HINT.format(tenant=tenant),
            )
            continue
        if len(matches) > 1:
            fail(
                "ambiguous",
                f"{len(matches)} capacity block groups are {label} in tenant {tenant}",
                f"pass the one you mean by ID: --capacity-block-group {pool.name}=<ID> "
                f"(or NPA_CAPACITY_BLOCK_GROUPS); {LIST_HINT.format(tenant=tenant)}",
            )
            continue
        (group,) = matches
        row.group, row.state = group.name, group.state
        if kind == "name":
            resolved[pool.name] = group.id
        if group.state != "active":
            fail(
                "inactive",
                f"capacity block group {group.name!r} is {group.state}, not active",
                "wait until its capacity interval starts, or reserve with another group",
            )
            continue
        mismatches = [
            f"{what} {have!r} (the pool wants {want!r})"
            for what, have, want in (
                ("region", group.region, region),
                ("platform", group.platform, pool.platform),
                ("fabric", group.fabric, pool.fabric),
            )
            if want and have != want
        ]
        if mismatches:
            fail(
                "mismatch",
                f"capacity block group {group.name!r} is for " + ", ".join(mismatches),
                "use a group reserved for this pool's region, platform and fabric, or change "
                "the pool to match the group",
            )
            continue
        by_group[group.id].append(pool)
        chosen[group.id] = group
        row.gpus_free = group.free
        # As the existing npa: exactly one entry for the pool's shape, and a fresh one; free
        # GPUs alone do not say the nodes can be placed.
        entries = _advice_entries(pool, advice, region)
        fresh = [a for a in entries if a.reserved is not None
                 and a.reserved.data_state == "fresh"]  # fmt: skip
        shape = f"{pool.platform}/{pool.preset} in {region or 'the region'}"
        shape += f", fabric {pool.fabric}" if pool.fabric else ""
        if advice is None or len(fresh) != 1:
            state = "no answer" if advice is None else (
                f"{len(fresh)} fresh entries" if fresh else
                f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, none fresh"
            )  # fmt: skip
            fail(
                "no fresh availability",
                f"reserved availability of {shape} cannot be confirmed ({state} in ResourceAdvice)",
                "re-run in a few minutes (availability data refreshes regularly); see "
                f"`nebius capacity resource-advice list --parent-id {tenant}`; "
                "--no-preflight skips the check (Terraform may then fail half-way)",
            )
            continue
        assert fresh[0].reserved is not None
        nodes = fresh[0].reserved.available
        row.nodes_free = nodes
        if nodes < pool.size:
            fail(
                "short",
                f"capacity block group {group.name!r} has {nodes} free node(s), "
                f"the pool needs {pool.size}",
                "lower the pool's size or free nodes in the reservation",
            )

    # One group can serve several pools: their GPUs add up.
    for group_id, users in by_group.items():
        group = chosen[group_id]
        need = sum(max(p.size * p.gpus_per_node - in_use.get(p.name, 0), 0) for p in users)
        if group.free < need:
            names = ", ".join(p.name for p in users)
            for row in rows:
                if row.pool in {p.name for p in users} and row.verdict == "ok":
                    row.verdict = "short"
            problems.append(
                (
                    f"worker pool(s) {names}: capacity block group {group.name!r} has "
                    f"{group.free} free GPU(s) ({group.limit} reserved, {group.usage} in use), "
                    f"the pools need {need}",
                    "lower the pool sizes, free GPUs in the reservation, or use on-demand "
                    "capacity for part of them",
                )
            )
    return rows, problems, resolved


def resolve_names(
    pools: list[Any], capacity: dict[str, str], groups: list[CapacityBlockGroup], tenant_id: str
) -> dict[str, str]:
    """Pool → group ID for pools that name their group (no other check: `--no-preflight`).

    Raises `UsageError` when a name matches no group or several.
    """
    from npa_sop_tui.errors import UsageError

    resolved: dict[str, str] = {}
    for pool in pools:
        if not pool.capacity_block_group_name:
            continue  # on-demand, preemptible, or reserved by ID
        kind, matches = _find(pool, capacity, groups)
        if kind != "name":
            continue
        if len(matches) != 1:
            found = "no" if not matches else str(len(matches))
            raise UsageError(
                f"worker pool {pool.name}: {found} capacity block group(s) named "
                f"{pool.capacity_block_group_name!r} in tenant {tenant_id}",
                hint=f"pass the group's ID with --capacity-block-group {pool.name}=<ID>; "
                + LIST_HINT.format(tenant=tenant_id),
            )
        resolved[pool.name] = matches[0].id
    return resolved
