"""The billing calculator's hourly estimate (billing v1 `CalculatorService.EstimateBatch`).

Billing v1 prices resources one by one: each request becomes one `ResourceSpec` whose `spec`
is an `Any` packing the create request of one resource in the project (`metadata.parent_id`):
`compute.v1.CreateInstanceRequest` for an instance of the platform and preset (preemptible
when asked), `CreateDiskRequest` / `CreateFilesystemRequest` for a disk or filesystem of its
size and type. The cost of one, times the request's count, is the request's hourly price.
Every cost must be per hour (its `aggregation_unit`); anything else is refused rather than
summed into a wrong total.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from npa_sop_tui.cloud.connection import CloudError
from npa_sop_tui.cloud.model import PriceQuote, PriceRequest

Call = Callable[..., Awaitable[Any]]  # the client's `_call(what, make, *, service=…)`


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


def _packed(r: PriceRequest, project_id: str | None) -> Any:
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.compute import v1 as compute
    from nebius.base.protos.dynamic import REGISTRY

    meta = ResourceMetadata(parent_id=project_id or "")
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
    specs = [ResourceSpec(spec=_packed(r, project_id)) for r in requests]
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
    if len(resp.resource_costs) != len(requests):
        raise CloudError(
            f"price estimate answered {len(resp.resource_costs)} costs for "
            f"{len(requests)} resources"
        )
    hourly: dict[str, Decimal] = {}
    for r, cost in zip(requests, resp.resource_costs, strict=True):
        unit = cost.aggregation_unit.unit if cost.aggregation_unit is not None else ""
        if unit.lower() != "hour":
            raise CloudError(
                f"price estimate for {_what(r)} is per {unit or '(no unit)'}, not per hour"
            )
        per_instance = None
        if cost.general is not None:
            per_instance = _decimal(cost.general.total.cost)
        elif cost.fixed_instance is not None:
            per_instance = _decimal(cost.fixed_instance.per_instance.cost)
        if per_instance is None:
            raise CloudError(f"price estimate has no cost for {_what(r)}")
        hourly[r.key] = hourly.get(r.key, Decimal(0)) + per_instance * r.count
    return PriceQuote(
        hourly=hourly,
        total_hourly=sum(hourly.values(), Decimal(0)),
        currency=resp.currency or "usd",
    )
