"""Reads of what the cloud lets a project use: quotas (tenant and project level), capacity
allowances, capacity block groups and resource advice (SDK `nebius` 0.6.29)."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.cloud.model import (
    Availability,
    CapacityAllowance,
    CapacityBlockGroup,
    Quota,
    ResourceAdvice,
)
from npa_sop_tui.cloud.nebius_calls import NebiusCalls, _enum


class CapacityReads(NebiusCalls):
    async def quotas(self, parent_id: str, region: str | None = None) -> list[Quota]:
        from nebius.api.nebius.quotas.v1 import (
            ListQuotaAllowancesRequest,
            QuotaAllowanceServiceClient,
        )

        out: list[Quota] = []
        for item in await self._list(
            f"quotas of {parent_id}",
            QuotaAllowanceServiceClient,
            ListQuotaAllowancesRequest,
            parent_id,
        ):
            if region and item.spec.region and item.spec.region != region:
                continue
            usage_state = _enum(item.status.usage_state, "USAGE_STATE_")
            usage: int | None = int(item.status.usage)
            if usage_state == "unknown":
                usage = None
            out.append(
                Quota(
                    name=item.metadata.name,
                    region=item.spec.region,
                    limit=item.spec.limit,
                    usage=usage,
                    state=_enum(item.status.state, "STATE_"),
                    unit=item.status.unit,
                    level="project" if parent_id.startswith("project-") else "tenant",
                )
            )
        return out

    async def capacity_allowances(self, project_id: str) -> list[CapacityAllowance]:
        from nebius.api.nebius.capacity.v1 import (
            CapacityAllowanceServiceClient,
            ListCapacityAllowancesRequest,
        )

        out: list[CapacityAllowance] = []
        for item in await self._list(
            f"capacity allowances of {project_id}",
            CapacityAllowanceServiceClient,
            ListCapacityAllowancesRequest,
            project_id,
        ):
            unknown = _enum(item.status.usage_state, "USAGE_STATE_") == "unknown"
            out.append(
                CapacityAllowance(
                    id=item.metadata.id,
                    project_id=item.metadata.parent_id,
                    group_id=item.spec.capacity_block_group_id,
                    limit=item.spec.limit,
                    usage=None if unknown else int(item.status.usage),
                    state=_enum(item.status.state, "STATE_"),
                )
            )
        return out

    async def capacity_block_groups(self, tenant_id: str) -> list[CapacityBlockGroup]:
        from nebius.api.nebius.capacity.v1 import (
            CapacityBlockGroupServiceClient,
            ListCapacityBlockGroupsRequest,
        )

        out: list[CapacityBlockGroup] = []
        for item in await self._list(
            "capacity block groups",
            CapacityBlockGroupServiceClient,
            ListCapacityBlockGroupsRequest,
            tenant_id,
        ):
            affinity = item.status.resource_affinity.compute_v1
            out.append(
                CapacityBlockGroup(
                    id=item.metadata.id,
                    name=item.metadata.name,
                    region=item.status.region,
                    platform=affinity.platform if affinity is not None else "",
                    fabric=affinity.fabric if affinity is not None else "",
                    state=_enum(item.status.state, "STATE_"),
                    limit=int(item.status.current_limit),
                    usage=int(item.status.usage),
                )
            )
        return out

    async def resource_advice(self, tenant_id: str) -> list[ResourceAdvice]:
        from nebius.api.nebius.capacity.v1 import (
            ListResourceAdviceRequest,
            ResourceAdviceServiceClient,
        )

        def availability(a: Any) -> Availability | None:
            state = _enum(a.data_state, "DATA_STATE_")
            if state == "unspecified":
                return None
            return Availability(
                data_state=state,
                available=int(a.available),
                limit=int(a.limit),
                level=_enum(a.availability_level, "AVAILABILITY_LEVEL_"),
            )

        out: list[ResourceAdvice] = []
        for item in await self._list(
            "resource advice", ResourceAdviceServiceClient, ListResourceAdviceRequest, tenant_id
        ):
            compute = item.spec.compute_instance
            if compute is None:
                continue
            out.append(
                ResourceAdvice(
                    region=item.spec.region,
                    fabric=item.spec.fabric,
                    platform=compute.platform,
                    preset=compute.preset.name,
                    gpus=int(compute.preset.resources.gpu_count),
                    reserved=availability(item.status.reserved),
                    on_demand=availability(item.status.on_demand),
                    preemptible=availability(item.status.preemptible),
                )
            )
        return out
