"""`CloudClient` over the official Nebius Python SDK (`nebius` on PyPI).

Split by feature: `nebius_calls.py` (connection, bounded calls, error mapping, paging),
`nebius_sdk_capacity.py` (quotas, allowances, capacity blocks, resource advice),
`nebius_sdk_resources.py` (identity, projects, subnets, platforms, mk8s, filesystems) and
`nebius_price.py` (billing). Importing any of them is cheap: the SDK loads on the first call.
"""

from __future__ import annotations

from npa_sop_tui.cloud.model import PriceQuote, PriceRequest
from npa_sop_tui.cloud.nebius_sdk_capacity import CapacityReads
from npa_sop_tui.cloud.nebius_sdk_resources import ResourceReads


class NebiusCloudClient(CapacityReads, ResourceReads):
    async def estimate_hourly(
        self, requests: list[PriceRequest], project_id: str | None = None
    ) -> PriceQuote:
        """Hourly price: one priced resource per request in `project_id` (billing v1
        EstimateBatch), times its count."""
        from npa_sop_tui.cloud.nebius_price import estimate_hourly

        return await estimate_hourly(self._call, requests, project_id)
