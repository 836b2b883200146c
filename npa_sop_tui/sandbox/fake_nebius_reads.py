"""The read services of the local Nebius server: quotas (tenant and project), capacity block
groups, capacity allowances, resource advice, platforms, subnets, billing estimates, mk8s
clusters and node groups, the IAM profile and projects (v2, and v1). Each answers from the
`FakeCloudState` with the SDK's own message classes (see fake_nebius.py for the server;
filesystems are in fake_filesystems.py).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius_host import ServiceHost

_FULL_STATE = {"active": "STATE_ACTIVE", "inactive": "STATE_INACTIVE"}


def _meta(**fields: Any) -> Any:
    from nebius.api.nebius.common.v1 import ResourceMetadata

    return ResourceMetadata(**fields)


def handlers(fake: ServiceHost, rpc: Callable[..., Any]) -> list[Any]:
    """The (service, method, handler) rows of the read services."""
    import grpc
    from nebius.api.nebius.billing import v1 as billing
    from nebius.api.nebius.capacity import v1 as capacity
    from nebius.api.nebius.compute import v1 as compute
    from nebius.api.nebius.iam import v1 as iam
    from nebius.api.nebius.iam import v2 as iam2
    from nebius.api.nebius.mk8s import v1 as mk8s
    from nebius.api.nebius.quotas import v1 as quotas
    from nebius.api.nebius.vpc import v1 as vpc
    from nebius.base.protos.dynamic import REGISTRY

    s = fake.state

    # --- quotas ---------------------------------------------------------------------------
    def quota_msg(q: Any, parent_id: str) -> Any:
        usage_state = "USAGE_STATE_UNKNOWN" if q.usage is None else "USAGE_STATE_USED"
        Status = quotas.QuotaAllowanceStatus
        return quotas.QuotaAllowance(
            metadata=_meta(name=q.name, parent_id=parent_id, id=f"quotaallowance-{q.name}"),
            spec=quotas.QuotaAllowanceSpec(limit=q.limit, region=q.region),
            status=Status(
                state=Status.State[f"STATE_{q.state.upper()}"],
                usage=q.usage or 0,
                usage_state=Status.UsageState[usage_state],
                unit=q.unit,
            ),
        )

    def quotas_of(parent_id: str, ctx: Any) -> list[Any]:
        """A tenant's and a project's allowances are different lists (Nebius shares the
        tenant's quota out to its projects)."""
        if parent_id == s.tenant_id:
            return s.quotas
        if parent_id == s.project_id:
            return s.project_quotas
        ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {parent_id}")
        return []

    def quota_list(req: Any, ctx: Any) -> Any:
        found = quotas_of(req.parent_id, ctx)
        items, token = fake.page([quota_msg(q, req.parent_id) for q in found], req)
        return quotas.ListQuotaAllowancesResponse(items=items, next_page_token=token)

    def quota_by_name(req: Any, ctx: Any) -> Any:
        for q in quotas_of(req.parent_id, ctx):
            if q.name == req.name and q.region == req.region:
                return quota_msg(q, req.parent_id)
        ctx.abort(grpc.StatusCode.NOT_FOUND, f"quota {req.name} not found in {req.region}")

    # --- capacity -------------------------------------------------------------------------
    def group_msg(g: Any) -> Any:
        Status = capacity.CapacityBlockGroupStatus
        state = _FULL_STATE.get(g.state, f"STATE_{g.state.upper()}")
        return capacity.CapacityBlockGroup(
            metadata=_meta(id=g.id, name=g.name, parent_id=s.tenant_id),
            status=Status(
                region=g.region,
                resource_affinity=capacity.ResourceAffinity(
                    compute_v1=capacity.ResourceAffinityComputeV1(
                        fabric=g.fabric, platform=g.platform
                    )
                ),
                service="compute",
                state=Status.State[state],
                current_limit=g.limit,
                usage=g.usage,
            ),
        )

    def group_list(req: Any, ctx: Any) -> Any:
        if req.parent_id != s.tenant_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to tenant {req.parent_id}")
        items, token = fake.page([group_msg(g) for g in s.groups], req)
        return capacity.ListCapacityBlockGroupsResponse(items=items, next_page_token=token)

    def group_get(req: Any, ctx: Any) -> Any:
        for g in s.groups:
            if g.id == req.id:
                return group_msg(g)
        ctx.abort(grpc.StatusCode.NOT_FOUND, f"capacity block group {req.id} not found")

    def allowance_list(req: Any, ctx: Any) -> Any:
        if req.parent_id != s.project_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to project {req.parent_id}")
        Status = capacity.CapacityAllowanceStatus
        msgs = []
        for a in s.allowances:
            usage_state = "USAGE_STATE_UNKNOWN" if a.usage is None else "USAGE_STATE_USED"
            msgs.append(
                capacity.CapacityAllowance(
                    metadata=_meta(id=a.id, parent_id=a.project_id),
                    spec=capacity.CapacityAllowanceSpec(
                        capacity_block_group_id=a.group_id, limit=a.limit
                    ),
                    status=Status(
                        state=Status.State[f"STATE_{a.state.upper()}"],
                        usage=a.usage or 0,
                        usage_state=Status.UsageState[usage_state],
                        unit="GPU",
                    ),
                )
            )
        items, token = fake.page(msgs, req)
        return capacity.ListCapacityAllowancesResponse(items=items, next_page_token=token)

    def availability_msg(a: Any) -> Any:
        Avail = capacity.ResourceAdviceStatus.Availability
        if a is None:
            return Avail()
        return Avail(
            data_state=Avail.DataState[f"DATA_STATE_{a.data_state.upper()}"],
            available=a.available,
            limit=a.limit,
            availability_level=Avail.AvailabilityLevel[f"AVAILABILITY_LEVEL_{a.level.upper()}"],
        )

    def advice_list(req: Any, ctx: Any) -> Any:
        msgs = []
        for a in s.advice:
            details = capacity.ComputeInstanceDetails(
                platform=a.platform,
                preset=capacity.ComputeInstanceDetails.Preset(
                    name=a.preset,
                    resources=capacity.ComputeInstanceDetails.Preset.Resources(gpu_count=a.gpus),
                ),
            )
            msgs.append(
                capacity.ResourceAdvice(
                    metadata=_meta(parent_id=req.parent_id),
                    spec=capacity.ResourceAdviceSpec(
                        region=a.region, fabric=a.fabric, compute_instance=details
                    ),
                    status=capacity.ResourceAdviceStatus(
                        reserved=availability_msg(a.reserved),
                        on_demand=availability_msg(a.on_demand),
                        preemptible=availability_msg(a.preemptible),
                    ),
                )
            )
        items, token = fake.page(msgs, req)
        return capacity.ListResourceAdviceResponse(items=items, next_page_token=token)

    # --- compute --------------------------------------------------------------------------
    def platform_list(req: Any, ctx: Any) -> Any:
        if req.parent_id != s.project_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {req.parent_id}")
        msgs = [
            compute.Platform(
                metadata=_meta(name=p.name, parent_id=s.project_id),
                spec=compute.PlatformSpec(
                    presets=[
                        compute.Preset(
                            name=x.name,
                            resources=compute.PresetResources(
                                vcpu_count=x.vcpu, memory_gibibytes=x.memory_gib, gpu_count=x.gpus
                            ),
                            allow_gpu_clustering=x.gpu_clustering,
                        )
                        for x in p.presets
                    ],
                    gpu_count_quota_type=p.gpu_quota,
                ),
                status=compute.PlatformStatus(allowed_for_preemptibles=p.preemptible_allowed),
            )
            for p in s.platforms
        ]
        items, token = fake.page(msgs, req)
        return compute.ListPlatformsResponse(items=items, next_page_token=token)

    def subnet_list(req: Any, ctx: Any) -> Any:
        if req.parent_id != s.project_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {req.parent_id}")
        msgs = [
            vpc.Subnet(metadata=_meta(id=i, name=n, parent_id=s.project_id)) for i, n in s.subnets
        ]
        items, token = fake.page(msgs, req)
        return vpc.ListSubnetsResponse(items=items, next_page_token=token)

    # --- billing --------------------------------------------------------------------------
    def priced(item: Any, ctx: Any) -> Decimal:
        """One resource's hourly price; the request is checked as the calculator would: a
        known create request of a resource in this project."""
        url = item.spec.type_url.rsplit("/", 1)[-1]
        kinds = {
            "nebius.compute.v1.CreateInstanceRequest": compute.CreateInstanceRequest,
            "nebius.compute.v1.CreateDiskRequest": compute.CreateDiskRequest,
            "nebius.compute.v1.CreateFilesystemRequest": compute.CreateFilesystemRequest,
        }
        if url not in kinds:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot price a {url or 'empty spec'}")
        inner = REGISTRY.unpack_any(item.spec, expected_type=kinds[url])
        if inner.metadata.parent_id != s.project_id:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      f"metadata.parent_id {inner.metadata.parent_id!r} is not a project "
                      "you can price in")  # fmt: skip
        if url != "nebius.compute.v1.CreateInstanceRequest":
            if not inner.spec.size_gibibytes or inner.spec.type.name == "UNSPECIFIED":
                ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "size and type are required")
            return s.storage_price(inner.spec.size_gibibytes)
        res = inner.spec.resources
        price = s.hourly_price(
            res.platform, res.preset or "", preemptible=inner.spec.HasField("preemptible")
        )
        if price is None:
            ctx.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown platform/preset {res.platform}/{res.preset}",
            )
        assert price is not None
        return price

    def estimate(req: Any, ctx: Any) -> Any:
        """Each resource's cost named by its request's metadata; as billing may, extra
        costs in other units (`price_extra_units`), and the order not promised (reversed
        with `price_reversed`)."""
        hour = billing.FilterAggregationUnit.FilterAggregationUnitValue
        wanted = list(req.filter_aggregation_unit.filter_aggregation_unit_values) if (
            req.filter_aggregation_unit is not None) else []  # fmt: skip
        unit = "hour" if wanted == [hour.FILTER_AGGREGATION_UNIT_HOUR] else s.price_unit
        costs, total = [], Decimal(0)
        for item in req.resource_specs:
            price = priced(item, ctx)
            total += price
            meta = REGISTRY.unpack_any(item.spec).metadata
            for each in (unit, *s.price_extra_units):
                breakdown = billing.CostBreakdown(cost=str(price), cost_rounded=f"{price:.2f}")
                costs.append(
                    billing.ResourceCost(
                        metadata=_meta(name=meta.name, parent_id=meta.parent_id),
                        aggregation_unit=billing.AggregationUnit(unit=each),
                        general=billing.GeneralResourceCost(total=breakdown),
                    )
                )
        if s.price_reversed:
            costs.reverse()
        return billing.EstimateBatchResponse(
            resource_costs=costs,
            total_costs=[
                billing.TotalCost(
                    aggregation_unit=billing.AggregationUnit(unit="hour"),
                    general=billing.GeneralResourceCost(
                        total=billing.CostBreakdown(cost=str(total), cost_rounded=f"{total:.2f}")
                    ),
                )
            ],
            currency=req.currency or "usd",
        )

    # --- mk8s -----------------------------------------------------------------------------
    def cluster_msg(c: Any) -> Any:
        return mk8s.Cluster(
            metadata=_meta(id=c.id, name=c.name, parent_id=c.parent_id),
            status=mk8s.ClusterStatus(state=mk8s.ClusterStatus.State[c.state.upper()]),
        )

    def cluster_list(req: Any, ctx: Any) -> Any:
        with s.lock:
            found = [cluster_msg(c) for c in s.clusters.values() if c.parent_id == req.parent_id]
        items, token = fake.page(found, req)
        return mk8s.ListClustersResponse(items=items, next_page_token=token)

    def cluster_get(req: Any, ctx: Any) -> Any:
        with s.lock:
            c = s.clusters.get(req.id)
        if c is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"cluster {req.id} not found")
        return cluster_msg(c)

    def node_group_list(req: Any, ctx: Any) -> Any:
        msgs = [
            mk8s.NodeGroup(
                metadata=_meta(id=g.id, name=g.name, parent_id=g.cluster_id),
                status=mk8s.NodeGroupStatus(
                    state=mk8s.NodeGroupStatus.State[g.state.upper()],
                    target_node_count=g.target_nodes,
                    ready_node_count=g.ready_nodes,
                ),
            )
            for g in s.node_groups
            if g.cluster_id == req.parent_id
        ]
        items, token = fake.page(msgs, req)
        return mk8s.ListNodeGroupsResponse(items=items, next_page_token=token)

    # --- iam ------------------------------------------------------------------------------
    def profile_get(req: Any, ctx: Any) -> Any:
        who = s.profile
        if who.kind == "service_account":
            meta = _meta(id=who.id, name=who.name, parent_id=s.project_id)
            account = iam.ServiceAccount(metadata=meta)
            return iam.GetProfileResponse(
                service_account_profile=iam.ServiceAccountProfile(info=account)
            )
        return iam.GetProfileResponse(user_profile=iam.UserProfile(id=who.id))

    def project_get(req: Any, ctx: Any) -> Any:
        if req.id != s.project_id:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"project {req.id} not found")
        return iam.Container(metadata=_meta(id=s.project_id, parent_id=s.tenant_id))

    def project_get_v2(req: Any, ctx: Any) -> Any:
        if not s.iam_v2:  # an address that predates IAM v2
            ctx.abort(grpc.StatusCode.UNIMPLEMENTED, "unknown service nebius.iam.v2.ProjectService")
        if req.id != s.project_id:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"project {req.id} not found")
        return iam2.Project(metadata=_meta(id=s.project_id, parent_id=s.tenant_id))

    table: list[Any] = [
        rpc("nebius.quotas.v1.QuotaAllowanceService", "List",
            quotas.ListQuotaAllowancesRequest, quotas.ListQuotaAllowancesResponse, quota_list),
        rpc("nebius.quotas.v1.QuotaAllowanceService", "GetByName",
            quotas.GetByNameRequest, quotas.QuotaAllowance, quota_by_name),
        rpc("nebius.capacity.v1.CapacityBlockGroupService", "List",
            capacity.ListCapacityBlockGroupsRequest, capacity.ListCapacityBlockGroupsResponse,
            group_list),
        rpc("nebius.capacity.v1.CapacityBlockGroupService", "Get",
            capacity.GetCapacityBlockGroupRequest, capacity.CapacityBlockGroup, group_get),
        rpc("nebius.capacity.v1.ResourceAdviceService", "List",
            capacity.ListResourceAdviceRequest, capacity.ListResourceAdviceResponse, advice_list),
        rpc("nebius.capacity.v1.CapacityAllowanceService", "List",
            capacity.ListCapacityAllowancesRequest, capacity.ListCapacityAllowancesResponse,
            allowance_list),
        rpc("nebius.vpc.v1.SubnetService", "List",
            vpc.ListSubnetsRequest, vpc.ListSubnetsResponse, subnet_list),
        rpc("nebius.compute.v1.PlatformService", "List",
            compute.ListPlatformsRequest, compute.ListPlatformsResponse, platform_list),

        rpc("nebius.billing.v1.CalculatorService", "EstimateBatch",
            billing.EstimateBatchRequest, billing.EstimateBatchResponse, estimate),
        rpc("nebius.mk8s.v1.ClusterService", "List",
            mk8s.ListClustersRequest, mk8s.ListClustersResponse, cluster_list),
        rpc("nebius.mk8s.v1.ClusterService", "Get",
            mk8s.GetClusterRequest, mk8s.Cluster, cluster_get),
        rpc("nebius.mk8s.v1.NodeGroupService", "List",
            mk8s.ListNodeGroupsRequest, mk8s.ListNodeGroupsResponse, node_group_list),
        rpc("nebius.iam.v1.ProjectService", "Get",
            iam.GetProjectRequest, iam.Container, project_get),
        rpc("nebius.iam.v2.ProjectService", "Get",
            iam2.GetProjectRequest, iam2.Project, project_get_v2),
        rpc("nebius.iam.v1.ProfileService", "Get",
            iam.GetProfileRequest, iam.GetProfileResponse, profile_get),
    ]  # fmt: skip
    return table
