"""A local gRPC server that speaks Nebius's real protocol, with the SDK's own message types.

It implements the services npa reads (quotas, capacity block groups, resource advice,
platforms, filesystems, billing estimates, mk8s clusters and node groups, the IAM profile),
and the IAM access keys npa mints for the state bucket (fake_access_keys.py), over plaintext
gRPC on 127.0.0.1, answering from a `FakeCloudState`. The official SDK
reaches it through `CloudSettings(endpoint="127.0.0.1:PORT")`, exactly as it reaches Nebius,
so tests and the sandbox exercise the real client code, serialization included.

The SDK ships no servicer classes; each service is a generic handler whose methods
(de)serialize with the SDK's message classes.

    with FakeNebius(default_state()) as cloud:
        client = connect(CloudSettings(endpoint=cloud.endpoint))
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent import futures
from decimal import Decimal
from typing import Any

from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState

_FULL_STATE = {"active": "STATE_ACTIVE", "inactive": "STATE_INACTIVE"}


class FakeNebius:
    def __init__(self, state: FakeCloudState) -> None:
        self.state = state
        self._server: Any = None
        self._stopping = threading.Event()
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> FakeNebius:
        from npa_sop_tui.cloud.client import wait_for_warm_up

        wait_for_warm_up()  # never import gRPC beside the SDK's background import
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC core logs INFO lines
        import grpc

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self._server.add_generic_rpc_handlers(tuple(_handlers(self)))
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers stalled by `delays`
        if self._server is not None:
            self._server.stop(grace=0).wait(5)
            self._server = None

    def __enter__(self) -> FakeNebius:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request plumbing ----------------------------------------------------------------

    def _enter(self, method: str, ctx: Any) -> None:
        """Record the call, enforce the token, then apply the test's delay or error."""
        import grpc

        auth = dict(ctx.invocation_metadata()).get("authorization", "")
        s = self.state
        with s.lock:
            s.calls.append((method, auth))
        if s.token is not None and auth != f"Bearer {s.token}":
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid or missing IAM token")
        delay = s.delays.get(method)
        if delay:
            self._stopping.wait(delay)
        code = s.errors.get(method)
        if code:
            ctx.abort(getattr(grpc.StatusCode, code), f"{method} failed on purpose (test)")

    def _page(self, items: list[Any], request: Any) -> tuple[list[Any], str]:
        start = int(request.page_token or 0)
        size = min(request.page_size or self.state.max_page, self.state.max_page)
        chunk = items[start : start + size]
        return chunk, (str(start + size) if start + size < len(items) else "")


def _meta(**fields: Any) -> Any:
    from nebius.api.nebius.common.v1 import ResourceMetadata

    return ResourceMetadata(**fields)


def _handlers(fake: FakeNebius) -> list[Any]:
    import grpc
    from nebius.api.nebius.billing import v1 as billing
    from nebius.api.nebius.capacity import v1 as capacity
    from nebius.api.nebius.compute import v1 as compute
    from nebius.api.nebius.iam import v1 as iam
    from nebius.api.nebius.mk8s import v1 as mk8s
    from nebius.api.nebius.quotas import v1 as quotas
    from nebius.base.protos.dynamic import REGISTRY

    s = fake.state

    def rpc(service: str, name: str, req_cls: Any, resp_cls: Any, fn: Callable[..., Any]) -> Any:
        method = f"{service.removeprefix('nebius.')}/{name}"

        def handler(request: Any, ctx: Any) -> Any:
            fake._enter(method, ctx)
            return fn(request, ctx)

        return (
            service,
            name,
            grpc.unary_unary_rpc_method_handler(
                handler,
                request_deserializer=req_cls.FromString,
                response_serializer=resp_cls.SerializeToString,
            ),
        )

    # --- quotas ---------------------------------------------------------------------------
    def quota_msg(q: Any) -> Any:
        usage_state = "USAGE_STATE_UNKNOWN" if q.usage is None else "USAGE_STATE_USED"
        Status = quotas.QuotaAllowanceStatus
        return quotas.QuotaAllowance(
            metadata=_meta(name=q.name, parent_id=s.tenant_id, id=f"quotaallowance-{q.name}"),
            spec=quotas.QuotaAllowanceSpec(limit=q.limit, region=q.region),
            status=Status(
                state=Status.State[f"STATE_{q.state.upper()}"],
                usage=q.usage or 0,
                usage_state=Status.UsageState[usage_state],
                unit=q.unit,
            ),
        )

    def quota_list(req: Any, ctx: Any) -> Any:
        if req.parent_id not in (s.tenant_id, s.project_id):
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {req.parent_id}")
        items, token = fake._page([quota_msg(q) for q in s.quotas], req)
        return quotas.ListQuotaAllowancesResponse(items=items, next_page_token=token)

    def quota_by_name(req: Any, ctx: Any) -> Any:
        for q in s.quotas:
            if q.name == req.name and q.region == req.region:
                return quota_msg(q)
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
        items, token = fake._page([group_msg(g) for g in s.groups], req)
        return capacity.ListCapacityBlockGroupsResponse(items=items, next_page_token=token)

    def group_get(req: Any, ctx: Any) -> Any:
        for g in s.groups:
            if g.id == req.id:
                return group_msg(g)
        ctx.abort(grpc.StatusCode.NOT_FOUND, f"capacity block group {req.id} not found")

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
        items, token = fake._page(msgs, req)
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
                    ]
                ),
                status=compute.PlatformStatus(allowed_for_preemptibles=p.preemptible_allowed),
            )
            for p in s.platforms
        ]
        items, token = fake._page(msgs, req)
        return compute.ListPlatformsResponse(items=items, next_page_token=token)

    def filesystem_get(req: Any, ctx: Any) -> Any:
        fs = s.filesystems.get(req.id)
        if fs is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"filesystem {req.id} not found")
        State = compute.FilesystemStatus.State
        return compute.Filesystem(
            metadata=_meta(id=fs.id, name=fs.name, parent_id=fs.parent_id),
            status=compute.FilesystemStatus(state=State[fs.state.upper()]),
        )

    # --- billing --------------------------------------------------------------------------
    def estimate(req: Any, ctx: Any) -> Any:
        costs = []
        for item in req.resource_specs:
            inner = REGISTRY.unpack_any(item.spec, expected_type=compute.CreateInstanceRequest)
            res = inner.spec.resources
            price = s.hourly_price(
                res.platform, res.preset or "", preemptible=inner.spec.HasField("preemptible")
            )
            if price is None:
                ctx.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"unknown platform/preset {res.platform}/{res.preset}",
                )
            breakdown = billing.CostBreakdown(cost=str(price), cost_rounded=f"{price:.2f}")
            costs.append(
                billing.ResourceCost(
                    aggregation_unit=billing.AggregationUnit(unit="hour"),
                    general=billing.GeneralResourceCost(total=breakdown),
                )
            )
        total = sum((Decimal(c.general.total.cost) for c in costs), Decimal(0))
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
        items, token = fake._page(found, req)
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
        items, token = fake._page(msgs, req)
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

    table = [
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
        rpc("nebius.compute.v1.PlatformService", "List",
            compute.ListPlatformsRequest, compute.ListPlatformsResponse, platform_list),
        rpc("nebius.compute.v1.FilesystemService", "Get",
            compute.GetFilesystemRequest, compute.Filesystem, filesystem_get),
        rpc("nebius.billing.v1.CalculatorService", "EstimateBatch",
            billing.EstimateBatchRequest, billing.EstimateBatchResponse, estimate),
        rpc("nebius.mk8s.v1.ClusterService", "List",
            mk8s.ListClustersRequest, mk8s.ListClustersResponse, cluster_list),
        rpc("nebius.mk8s.v1.ClusterService", "Get",
            mk8s.GetClusterRequest, mk8s.Cluster, cluster_get),
        rpc("nebius.mk8s.v1.NodeGroupService", "List",
            mk8s.ListNodeGroupsRequest, mk8s.ListNodeGroupsResponse, node_group_list),
        rpc("nebius.iam.v1.ProfileService", "Get",
            iam.GetProfileRequest, iam.GetProfileResponse, profile_get),
    ]  # fmt: skip
    from npa_sop_tui.sandbox.fake_access_keys import handlers as access_key_handlers

    table += access_key_handlers(fake, rpc)
    services: dict[str, dict[str, Any]] = {}
    for service, name, handler in table:
        services.setdefault(service, {})[name] = handler
    return [grpc.method_handlers_generic_handler(svc, m) for svc, m in services.items()]
