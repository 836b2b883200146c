"""Before Terraform: does the cloud have room for this spec, and what will it cost?

`run_preflight()` reads quotas, platforms, capacity block groups, resource advice and prices
concurrently (each read bounded by the client's timeout) and reports:

- one row per quota the spec needs: `resource, needed, limit, usage, verdict` where the
  verdict is `ok`, `short by N` or `unknown` with its reason (quota_check.py); unknowns the
  operation may not go on without are the report's `undecided()`;
- the platforms and presets the project's region offers (live; the cached or packaged
  catalog when the cloud does not answer), and whether each pool's shape is among them;
- for reserved pools: the group resolved to an ID (never shown), active, in the pool's
  region, platform and fabric, with free GPUs (and free nodes where ResourceAdvice says)
  covering size × GPUs per node;
- on-demand and preemptible availability where ResourceAdvice reports it;
- the hourly price per pool and in total.

Reserved capacity fails closed: anything wrong or unverifiable there is a `Problem` and the
caller refuses to go on. Quotas the cloud did not answer for, or whose limit or unit cannot
judge the spec, stop the caller too unless it allows unknowns. Everything else is a warning,
a listing cut at its page limit included.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.cloud.allowances import check_allowances
from npa_sop_tui.cloud.client import CloudClient, CloudCredentialsMissing, CloudError
from npa_sop_tui.cloud.model import PlatformOffer, ResourceAdvice
from npa_sop_tui.cloud.needs import price_requests, quota_needs
from npa_sop_tui.cloud.preflight_report import (  # re-exported: the report's documents
    AvailabilityRow,
    PlatformsSeen,
    PoolShape,
    PreflightReport,
    Price,
    PriceRow,
    Problem,
)
from npa_sop_tui.cloud.quota_check import quota_rows  # re-exported: the rows' rules
from npa_sop_tui.cloud.reservations import check_reservations

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


class PreflightOutcome:
    """The report, plus the reservation IDs resolved from names (kept out of the report)."""

    def __init__(self, report: PreflightReport, capacity: dict[str, str]) -> None:
        self.report = report
        self.capacity = capacity


def _platforms(
    spec: SoperatorSpec, live: list[PlatformOffer] | None, region: str | None
) -> PlatformsSeen:
    from npa_sop_tui.cloud.catalog_cache import cached_platforms, catalog_platforms

    source: Literal["live", "cache", "catalog"] = "live"
    offers = live
    if offers is None:
        offers, source = cached_platforms(region), "cache"
        if offers is None:
            offers, source = catalog_platforms(region), "catalog"
    by_name = {p.name: p for p in offers}
    pools = []
    for pool in spec.workers:
        offer = by_name.get(pool.platform)
        offered = offer is not None and offer.preset(pool.preset) is not None
        pools.append(PoolShape(pool=pool.name, platform=pool.platform, preset=pool.preset,
                                offered=offered))  # fmt: skip
    return PlatformsSeen(
        source=source,
        offered={p.name: [x.name for x in p.presets] for p in offers},
        pools=pools,
    )


def _availability(
    spec: SoperatorSpec, advice: list[ResourceAdvice], region: str | None
) -> tuple[list[AvailabilityRow], list[str]]:
    rows, warnings = [], []
    for pool in spec.workers:
        mode = pool.capacity_mode()
        if mode == "reserved":
            continue  # reserved pools are judged against their group
        entries = [
            a for a in advice
            if a.platform == pool.platform and a.preset == pool.preset
            and (region is None or a.region == region)
            and (not pool.fabric or not a.fabric or a.fabric == pool.fabric)
        ]  # fmt: skip
        for entry in entries[:1]:
            avail = entry.preemptible if mode == "preemptible" else entry.on_demand
            if avail is None:
                continue
            rows.append(AvailabilityRow(pool=pool.name, mode=mode, level=avail.level,
                                        available=avail.available, needed=pool.size,
                                        data_state=avail.data_state))  # fmt: skip
            if avail.data_state == "fresh" and (
                avail.available < pool.size or avail.level in ("low", "limit_reached")
            ):
                warnings.append(
                    f"pool {pool.name}: {mode} availability of {pool.platform}/{pool.preset} "
                    f"is {avail.level.replace('_', ' ')} ({avail.available} free, "
                    f"{pool.size} needed); nodes may stay pending"
                )
    return rows, warnings


async def _read(what: str, coro: Any, warnings: list[str]) -> Any:
    """The answer, or None with a warning when the read failed or timed out."""
    try:
        return await coro
    except CloudCredentialsMissing:
        raise
    except CloudError as exc:
        warnings.append(f"{what}: {exc.message} (shown as unknown)")
        return None


async def run_preflight(
    spec: SoperatorSpec,
    client: CloudClient,
    *,
    tenant_id: str | None,
    project_id: str | None,
    region: str | None,
    capacity: dict[str, str] | None = None,
    existing: bool = False,
    in_use: dict[str, int] | None = None,
) -> PreflightOutcome:
    """`existing`: the cluster is deployed already (its resources are in the quotas' usage);
    `in_use`: GPUs its reserved pools hold in their groups now (credited back)."""
    capacity = dict(capacity or {})
    report = PreflightReport(name=spec.name, region=region)
    warnings: list[str] = []
    reserved = [p for p in spec.workers if p.capacity_mode(capacity) == "reserved"]

    async def nothing() -> None:
        return None

    quotas, project_quotas, platforms, groups, allowances, advice, price = await asyncio.gather(
        _read("quotas", client.quotas(tenant_id, region), warnings) if tenant_id else nothing(),
        _read("project quotas", client.quotas(project_id, region), warnings)
        if project_id
        else nothing(),
        _read("platforms", client.platforms(project_id), warnings) if project_id else nothing(),
        _read("capacity block groups", client.capacity_block_groups(tenant_id), warnings)
        if reserved and tenant_id
        else nothing(),
        _read("capacity allowances", client.capacity_allowances(project_id), warnings)
        if reserved and project_id
        else nothing(),
        _read("resource advice", client.resource_advice(tenant_id), warnings)
        if tenant_id
        else nothing(),
        _read("price", client.estimate_hourly(price_requests(spec), project_id), warnings),
    )
    deciding: Literal["tenant", "project"] = "tenant"
    if not tenant_id and project_id:  # the project's allowances are all there is to go by
        quotas, project_quotas, deciding = project_quotas, None, "project"
    gpu_quotas = {p.name: p.gpu_quota for p in platforms or [] if p.gpu_quota}
    report.rows, short = quota_rows(
        quota_needs(spec, capacity, gpu_quotas=gpu_quotas),
        quotas,
        existing=existing,
        project=project_quotas,
        region=region,
        level=deciding,
    )
    report.platforms = _platforms(spec, platforms, region)
    for shape in report.platforms.pools:
        if shape.offered is False:
            warnings.append(
                f"pool {shape.pool}: {shape.platform}/{shape.preset} is not offered in "
                f"{region or 'this region'} ({report.platforms.source} list)"
            )
    report.availability, scarce = _availability(spec, advice or [], region)
    if reserved:
        report.reservations, problems, resolved = check_reservations(
            reserved,
            capacity,
            groups=groups,
            advice=advice,
            tenant_id=tenant_id,
            region=region,
            read_error=next((w for w in warnings if w.startswith("capacity block")), None),
            in_use=in_use,
        )
        report.allowances, allowance_problems = check_allowances(
            reserved, report.reservations, groups or [], allowances, capacity | resolved,
            project_id=project_id, in_use=in_use,
        )  # fmt: skip
        problems = [*problems, *allowance_problems]
        report.problems.extend(Problem(message=m, hint=h) for m, h in problems)
        capacity.update(resolved)
    if price is not None:
        counts: dict[str, int] = {}
        for r in price_requests(spec):  # one row per key: a pool, its disks, a filesystem
            counts[r.key] = max(counts.get(r.key, 0), r.count)
        report.price = Price(
            currency=price.currency,
            pools=[
                PriceRow(key=k, count=n, hourly=str(price.hourly[k])) for k, n in counts.items()
            ],
            total=str(price.total_hourly),
            daily=str(price.total_daily),
        )
    notes = getattr(client, "notes", None)  # listings cut at their page limit (SDK client)
    cut = list(notes) if isinstance(notes, list) else []
    report.warnings = [*short, *scarce, *warnings, *cut]
    return PreflightOutcome(report, capacity)
