"""The billing calculator's hourly estimate (billing v1 `CalculatorService.EstimateBatch`).

Billing v1 prices resources one by one: each request becomes one `ResourceSpec` whose `spec`
is an `Any` packing the create request of one resource in the project (`metadata.parent_id`):
`compute.v1.CreateInstanceRequest` for an instance of the platform and preset (preemptible
when asked), `CreateDiskRequest` / `CreateFilesystemRequest` for a disk or filesystem of its
size and type. The cost of one, times the request's count, is the request's hourly price.

The answer's costs are matched to the requests by resource and unit, never by position: each
packed request carries a name of its own (`metadata.name`, `npa-price-<n>`) that its costs
name again, and only costs per hour count. Billing may answer more than asked (a cost per
month, or per a non-time unit such as a GiB): those are left out, with a debug note. A request
without an hourly cost is an error rather than a wrong total. An answer that names no
resource at all is matched in order, when its hourly costs are exactly one a request.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from npa_sop_tui.cloud.connection import CloudError
from npa_sop_tui.cloud.model import PriceQuote, PriceRequest

Call = Callable[..., Awaitable[Any]]  # the client's `_call(what, make, *, service=…)`
HOUR = "hour"
log = logging.getLogger(__name__)


def price_name(index: int) -> str:
    """The name request `index` is priced under (echoed by its costs)."""
    return f"npa-price-{index}"


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


def _packed(r: PriceRequest, project_id: str | None, name: str) -> Any:
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.compute import v1 as compute
    from nebius.base.protos.dynamic import REGISTRY

    meta = ResourceMetadata(parent_id=project_id or "", name=name)
    if r.kind == "disk":
        disk = compute.DiskSpec(size_gibibytes=r.size_gib,
                                type=compute.DiskSpec.DiskType[r.storage_type])  # fmt: skip
        return REGISTRY.pack_any(compute.CreateDiskRequest(metadata=meta, spec=disk))
    if r.kind == "filesystem":
        kind = compute.FilesystemSpec.FilesystemType[r.storage_type]
        fs = compute.FilesystemSpec(size_gibibytes=r.size_gib, type=kind)
        return REGISTRY.pack_any(compute.CreateFilesystemRequest(metadata=meta, spec=fs))
    instance = compute.InstanceSpec(
        resources=compute.ResourcesSpec(platform=r.platform, preset=r.preset)
    )
    if r.preemptible:
        instance.preemptible = compute.PreemptibleSpec()
    return REGISTRY.pack_any(compute.CreateInstanceRequest(metadata=meta, spec=instance))


def _what(r: PriceRequest) -> str:
    return f"{r.platform}/{r.preset}" if r.kind == "instance" else f"{r.kind} {r.key}"


async def estimate_hourly(
    call: Call, requests: list[PriceRequest], project_id: str | None = None
) -> PriceQuote:
    """`call(what, make)` runs one bounded SDK request (the client's `_call`)."""
    from nebius.api.nebius.billing.v1 import (
        CalculatorServiceClient,
        EstimateBatchRequest,
        FilterAggregationUnit,
        ResourceSpec,
    )

    if not requests:
        return PriceQuote()
    specs = [ResourceSpec(spec=_packed(r, project_id, price_name(i))) for i, r in
             enumerate(requests)]  # fmt: skip
    hour = FilterAggregationUnit.FilterAggregationUnitValue.FILTER_AGGREGATION_UNIT_HOUR
    request = EstimateBatchRequest(
        resource_specs=specs,
        currency="usd",
        filter_aggregation_unit=FilterAggregationUnit(filter_aggregation_unit_values=[hour]),
    )
    resp = await call(
        "price estimate (billing CalculatorService.EstimateBatch)",
        lambda sdk, kw: CalculatorServiceClient(sdk).estimate_batch(request, **kw),
        service=CalculatorServiceClient,
    )
    per_one = hourly_costs(requests, list(resp.resource_costs))
    hourly: dict[str, Decimal] = {}
    for r, cost in zip(requests, per_one, strict=True):
        hourly[r.key] = hourly.get(r.key, Decimal(0)) + cost * r.count
    return PriceQuote(
        hourly=hourly,
        total_hourly=sum(hourly.values(), Decimal(0)),
        currency=resp.currency or "usd",
    )


def _unit(cost: Any) -> str:
    return str(cost.aggregation_unit.unit if cost.aggregation_unit is not None else "")


def _amount(cost: Any) -> Decimal | None:
    if cost.general is not None:
        return _decimal(cost.general.total.cost)
    if cost.fixed_instance is not None:
        return _decimal(cost.fixed_instance.per_instance.cost)
    return None


def _named(cost: Any) -> str:
    meta = cost.metadata
    return str(meta.name) if meta is not None else ""


def hourly_costs(requests: list[PriceRequest], costs: list[Any]) -> list[Decimal]:
    """The hourly cost of one of each request, from the answer's `ResourceCost`s matched by
    resource name and unit (see the module's docstring)."""
    names = {price_name(i): i for i in range(len(requests))}
    hourly = [c for c in costs if _unit(c).lower() == HOUR]
    for extra in (c for c in costs if _unit(c).lower() != HOUR):
        log.debug("price estimate: left out a cost per %s for %s", _unit(extra) or "(no unit)",
                  _named(extra) or "an unnamed resource")  # fmt: skip
    found: dict[int, Any] = {}
    if any(_named(c) for c in costs):
        for cost in hourly:
            index = names.get(_named(cost))
            if index is None:
                log.debug("price estimate: left out an hourly cost for %r (not asked)",
                          _named(cost))  # fmt: skip
            elif index not in found:
                found[index] = cost
    elif len(hourly) == len(requests):  # an answer that names no resource: in order
        found = dict(enumerate(hourly))
    out: list[Decimal] = []
    for index, r in enumerate(requests):
        amount = _amount(found[index]) if index in found else None
        if amount is None:
            raise CloudError(f"price estimate has no hourly cost for {_what(r)}")
        out.append(amount)
    return out
