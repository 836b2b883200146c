"""Before Terraform: does the cloud have room for this spec, and what will it cost?

`run_preflight()` reads quotas, platforms, capacity block groups, resource advice and prices
concurrently (each read bounded by the client's timeout) and reports:

- one row per quota the spec needs: `resource, needed, limit, usage, verdict` where the
  verdict is `ok`, `short by N` or `unknown` (no answer, or the quota is not advertised);
- the platforms and presets the project's region offers (live; the cached or packaged
  catalog when the cloud does not answer), and whether each pool's shape is among them;
- for reserved pools: the group resolved to an ID (never shown), active, in the pool's
  region, platform and fabric, with free GPUs (and free nodes where ResourceAdvice says)
  covering size × GPUs per node;
- on-demand and preemptible availability where ResourceAdvice reports it;
- the hourly price per pool and in total.

Reserved capacity fails closed: anything wrong or unverifiable there is a `Problem` and the
caller refuses to go on. Everything else is a warning.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.cloud.allowances import check_allowances
from npa_sop_tui.cloud.client import CloudClient, CloudCredentialsMissing, CloudError
from npa_sop_tui.cloud.model import PlatformOffer, Quota, ResourceAdvice
from npa_sop_tui.cloud.needs import GIB, Need, price_requests, quota_needs
from npa_sop_tui.cloud.preflight_report import (  # re-exported: the report's documents
    UNUSABLE,
    AvailabilityRow,
    PlatformsSeen,
    PoolShape,
    PreflightReport,
    Price,
    PriceRow,
    Problem,
    QuotaRow,
)
from npa_sop_tui.cloud.reservations import check_reservations

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


class PreflightOutcome:
    """The report, plus the reservation IDs resolved from names (kept out of the report)."""

    def __init__(self, report: PreflightReport, capacity: dict[str, str]) -> None:
        self.report = report
        self.capacity = capacity


def _amount(value: int, unit: str) -> str:
    if unit == "bytes":
        gib = Decimal(value) / GIB
        return f"{gib.normalize():f} GiB" if gib == gib.to_integral() else f"{gib:.1f} GiB"
    return str(value)


def quota_rows(
    needs: list[Need],
    quotas: list[Quota] | None,
    *,
    existing: bool = False,
    project: list[Quota] | None = None,
    region: str | None = None,
    level: Literal["tenant", "project"] = "tenant",
) -> tuple[list[QuotaRow], list[str]]:
    """Rows for each need at each level read: the deciding allowance (`quotas`, at `level`:
    the tenant's, or the project's when no tenant is known; None: the read failed, all
    unknown) and the project's own under a tenant (`project`; a quota the project does not
    list has no separate cap there). Allowances are keyed by name and region (an allowance
    without a region counts everywhere).

    For a cluster that already exists, its own resources are part of `usage`, so the need is
    compared with the limit alone. A frozen, deleted or still provisioning allowance is a
    failed row whatever its numbers.
    """
    rows: list[QuotaRow] = []
    warnings: list[str] = []
    levels: list[tuple[Literal["tenant", "project"], list[Quota] | None]] = [(level, quotas)]
    if project is not None:
        levels.append(("project", project))
    for index, (at, listed) in enumerate(levels):
        found = {
            q.name: q for q in listed or [] if region is None or not q.region or q.region == region
        }
        for need in needs:
            q = found.get(need.resource)
            if q is None:
                if index == 0:  # the deciding level: unknown; the project's: no separate cap
                    rows.append(QuotaRow(resource=need.resource, needed=need.amount, limit=None,
                                         usage=None, verdict="unknown", unit=need.unit,
                                         level=at, region=region))  # fmt: skip
                continue
            verdict = _verdict(need, q, existing)
            where = f"{at} quota {need.resource}" + (f" in {q.region}" if q.region else "")
            if verdict in UNUSABLE:
                warnings.append(f"{where} is {verdict}: nothing new can use it")
            elif verdict.startswith("short"):
                warnings.append(
                    f"{where} is {verdict}: the spec needs {_amount(need.amount, need.unit)} "
                    f"({need.why}); limit {_amount(q.limit or 0, need.unit)}, in use "
                    f"{_amount(q.usage or 0, need.unit)}"
                )
            rows.append(QuotaRow(resource=need.resource, needed=need.amount, limit=q.limit,
                                 usage=q.usage, verdict=verdict, unit=need.unit, level=at,
                                 region=q.region or region))  # fmt: skip
    return rows, warnings


def _verdict(need: Need, q: Quota, existing: bool) -> str:
    if q.state in UNUSABLE:
        return q.state
    if q.limit is None:
        return "ok"
    if q.usage is None and not existing:
        return "unknown"
    free = q.limit if existing else q.limit - (q.usage or 0)
    short = need.amount - free
    return "ok" if short <= 0 else f"short by {_amount(short, need.unit)}"


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
    report.warnings = [*short, *scarce, *warnings]
    return PreflightOutcome(report, capacity)
