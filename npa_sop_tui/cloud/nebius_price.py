"""The billing calculator's hourly estimate (billing v1 `CalculatorService.EstimateBatch`).

Billing v1 prices resources one by one: each request becomes one `ResourceSpec` whose `spec`
is an `Any` packing a `compute.v1.CreateInstanceRequest` for one instance of the platform and
preset (preemptible when asked); the cost of that instance, times the request's count, is
the request's hourly price.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from npa_sop_tui.cloud.client import CloudError
from npa_sop_tui.cloud.model import PriceQuote, PriceRequest

Call = Callable[[str, Callable[[Any, dict[str, Any]], Awaitable[Any]]], Awaitable[Any]]


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


async def estimate_hourly(call: Call, requests: list[PriceRequest]) -> PriceQuote:
    """`call(what, make)` runs one bounded SDK request (the client's `_call`)."""
    from nebius.api.nebius.billing.v1 import (
        CalculatorServiceClient,
        EstimateBatchRequest,
        FilterAggregationUnit,
        ResourceSpec,
    )
    from nebius.api.nebius.compute.v1 import (
        CreateInstanceRequest,
        InstanceSpec,
        PreemptibleSpec,
        ResourcesSpec,
    )
    from nebius.base.protos.dynamic import REGISTRY

    if not requests:
        return PriceQuote()
    specs = []
    for r in requests:
        instance = InstanceSpec(resources=ResourcesSpec(platform=r.platform, preset=r.preset))
        if r.preemptible:
            instance.preemptible = PreemptibleSpec()
        specs.append(ResourceSpec(spec=REGISTRY.pack_any(CreateInstanceRequest(spec=instance))))
    hour = FilterAggregationUnit.FilterAggregationUnitValue.FILTER_AGGREGATION_UNIT_HOUR
    request = EstimateBatchRequest(
        resource_specs=specs,
        currency="usd",
        filter_aggregation_unit=FilterAggregationUnit(filter_aggregation_unit_values=[hour]),
    )
    resp = await call(
        "price estimate (billing CalculatorService.EstimateBatch)",
        lambda sdk, kw: CalculatorServiceClient(sdk).estimate_batch(request, **kw),
    )
    if len(resp.resource_costs) != len(requests):
        raise CloudError(
            f"price estimate answered {len(resp.resource_costs)} costs for "
            f"{len(requests)} resources"
        )
    hourly: dict[str, Decimal] = {}
    for r, cost in zip(requests, resp.resource_costs, strict=True):
        per_instance = None
        if cost.general is not None:
            per_instance = _decimal(cost.general.total.cost)
        elif cost.fixed_instance is not None:
            per_instance = _decimal(cost.fixed_instance.per_instance.cost)
        if per_instance is None:
            raise CloudError(f"price estimate has no cost for {r.platform}/{r.preset}")
        hourly[r.key] = hourly.get(r.key, Decimal(0)) + per_instance * r.count
    return PriceQuote(
        hourly=hourly,
        total_hourly=sum(hourly.values(), Decimal(0)),
        currency=resp.currency or "usd",
    )
