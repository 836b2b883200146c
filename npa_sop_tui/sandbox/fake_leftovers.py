"""Get of what else a cluster may leave behind, on the local Nebius server: VPC allocations
(`vpc.v1.AllocationService`), GPU clusters (`compute.v1.GpuClusterService`) and buckets
(`storage.v1.BucketService`), answered from `FakeCloudState.others` with the SDK's own message
classes (`nebius` 0.6.29); an ID the state does not hold is NOT_FOUND, as it is once deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius_host import ServiceHost


def handlers(fake: ServiceHost, rpc: Callable[..., Any]) -> list[Any]:
    import grpc
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.compute import v1 as compute
    from nebius.api.nebius.storage import v1 as storage
    from nebius.api.nebius.vpc import v1 as vpc

    s = fake.state

    def get_of(kind: str, build: Callable[[Any, str], Any]) -> Callable[[Any, Any], Any]:
        def get(req: Any, ctx: Any) -> Any:
            item = s.others.get(req.id)
            if item is None or item.kind != kind:
                ctx.abort(grpc.StatusCode.NOT_FOUND, f"{kind} {req.id} not found")
            meta = ResourceMetadata(id=item.id, name=item.name, parent_id=s.project_id)
            return build(meta, item.state)

        return get

    def allocation(meta: Any, state: str) -> Any:
        status = vpc.AllocationStatus(state=vpc.AllocationStatus.State[state.upper()])
        return vpc.Allocation(metadata=meta, status=status)

    def bucket(meta: Any, state: str) -> Any:
        status = storage.BucketStatus(state=storage.BucketStatus.State[state.upper()])
        return storage.Bucket(metadata=meta, status=status)

    return [
        rpc("nebius.vpc.v1.AllocationService", "Get", vpc.GetAllocationRequest,
            vpc.Allocation, get_of("VPC allocation", allocation)),
        rpc("nebius.compute.v1.GpuClusterService", "Get", compute.GetGpuClusterRequest,
            compute.GpuCluster, get_of("GPU cluster", lambda meta, _: compute.GpuCluster(
                metadata=meta))),
        rpc("nebius.storage.v1.BucketService", "Get", storage.GetBucketRequest,
            storage.Bucket, get_of("bucket", bucket)),
    ]  # fmt: skip
