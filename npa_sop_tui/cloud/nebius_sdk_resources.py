"""Reads of identity and resources: who am I, projects, subnets, platforms, mk8s clusters
and node groups, filesystems, and what else a cluster may leave behind — VPC allocations, GPU
clusters, buckets (SDK `nebius` 0.6.29)."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.cloud.model import (
    CloudResource,
    Filesystem,
    Mk8sCluster,
    NodeGroup,
    PlatformOffer,
    PresetOffer,
    Subnet,
    WhoAmI,
)
from npa_sop_tui.cloud.nebius_calls import NebiusCalls, _enum


class ResourceReads(NebiusCalls):
    async def whoami(self) -> WhoAmI:
        from nebius.api.nebius.iam.v1 import GetProfileRequest, ProfileServiceClient

        resp = await self._call(
            "who am I (iam ProfileService.Get)",
            lambda sdk, kw: ProfileServiceClient(sdk).get(GetProfileRequest(), **kw),
            service=ProfileServiceClient,
        )
        if resp.user_profile is not None:
            return WhoAmI("user", resp.user_profile.id)
        if resp.service_account_profile is not None:
            meta = resp.service_account_profile.info.metadata
            return WhoAmI("service_account", meta.id, meta.name)
        return WhoAmI("anonymous", "")

    async def project_tenant(self, project_id: str) -> str | None:
        """The tenant a project belongs to (IAM v2 ProjectService.Get: its parent), None
        when there is no such project (iam_projects.py)."""
        from npa_sop_tui.cloud.iam_projects import project_tenant

        return await project_tenant(self, project_id)

    async def subnets(self, project_id: str) -> list[Subnet]:
        from nebius.api.nebius.vpc.v1 import ListSubnetsRequest, SubnetServiceClient

        return [
            Subnet(id=i.metadata.id, name=i.metadata.name)
            for i in await self._list(
                f"subnets of {project_id}", SubnetServiceClient, ListSubnetsRequest, project_id
            )
        ]

    async def platforms(self, project_id: str) -> list[PlatformOffer]:
        from nebius.api.nebius.compute.v1 import ListPlatformsRequest, PlatformServiceClient

        out: list[PlatformOffer] = []
        for item in await self._list(
            f"platforms of {project_id}", PlatformServiceClient, ListPlatformsRequest, project_id
        ):
            presets = tuple(
                PresetOffer(
                    name=p.name,
                    vcpu=int(p.resources.vcpu_count),
                    memory_gib=int(p.resources.memory_gibibytes),
                    gpus=int(p.resources.gpu_count),
                    gpu_clustering=bool(p.allow_gpu_clustering),
                )
                for p in item.spec.presets
            )
            out.append(
                PlatformOffer(
                    name=item.metadata.name,
                    presets=presets,
                    preemptible_allowed=bool(item.status.allowed_for_preemptibles),
                    gpu_quota=item.spec.gpu_count_quota_type,
                )
            )
        return out

    @staticmethod
    def _cluster(item: Any) -> Mk8sCluster:
        return Mk8sCluster(
            id=item.metadata.id,
            name=item.metadata.name,
            parent_id=item.metadata.parent_id,
            state=_enum(item.status.state, "STATE_"),
        )

    async def mk8s_clusters(self, project_id: str) -> list[Mk8sCluster]:
        from nebius.api.nebius.mk8s.v1 import ClusterServiceClient, ListClustersRequest

        return [
            self._cluster(i)
            for i in await self._list(
                "mk8s clusters", ClusterServiceClient, ListClustersRequest, project_id
            )
        ]

    async def mk8s_cluster(self, cluster_id: str) -> Mk8sCluster | None:
        from nebius.api.nebius.mk8s.v1 import ClusterServiceClient, GetClusterRequest

        item = await self._get_or_none(
            f"mk8s cluster {cluster_id}", ClusterServiceClient, GetClusterRequest, cluster_id
        )
        if item is None:
            return None
        return self._cluster(item)

    async def node_groups(self, cluster_id: str) -> list[NodeGroup]:
        from nebius.api.nebius.mk8s.v1 import ListNodeGroupsRequest, NodeGroupServiceClient

        return [
            NodeGroup(
                id=i.metadata.id,
                name=i.metadata.name,
                cluster_id=i.metadata.parent_id,
                state=_enum(i.status.state, "STATE_"),
                target_nodes=int(i.status.target_node_count),
                ready_nodes=int(i.status.ready_node_count),
            )
            for i in await self._list(
                "mk8s node groups", NodeGroupServiceClient, ListNodeGroupsRequest, cluster_id
            )
        ]

    async def filesystem(self, filesystem_id: str) -> Filesystem | None:
        from nebius.api.nebius.compute.v1 import FilesystemServiceClient, GetFilesystemRequest

        item = await self._get_or_none(
            f"filesystem {filesystem_id}",
            FilesystemServiceClient,
            GetFilesystemRequest,
            filesystem_id,
        )
        if item is None:
            return None
        return Filesystem(
            id=item.metadata.id,
            name=item.metadata.name,
            parent_id=item.metadata.parent_id,
            state=_enum(item.status.state),
        )

    async def _resource(
        self, kind: str, service: Any, request: Any, item_id: str, *, gone: tuple[str, ...] = ()
    ) -> CloudResource | None:
        item = await self._get_or_none(f"{kind} {item_id}", service, request, item_id)
        if item is None:
            return None
        status = getattr(item, "status", None)
        state = _enum(getattr(status, "state", ""), "STATE_") if status is not None else ""
        if state in gone:
            return None
        return CloudResource(kind, item.metadata.id, item.metadata.name, state)

    async def allocation(self, allocation_id: str) -> CloudResource | None:
        from nebius.api.nebius.vpc.v1 import AllocationServiceClient, GetAllocationRequest

        return await self._resource(
            "VPC allocation", AllocationServiceClient, GetAllocationRequest, allocation_id
        )

    async def gpu_cluster(self, gpu_cluster_id: str) -> CloudResource | None:
        from nebius.api.nebius.compute.v1 import GetGpuClusterRequest, GpuClusterServiceClient

        return await self._resource(
            "GPU cluster", GpuClusterServiceClient, GetGpuClusterRequest, gpu_cluster_id
        )

    async def bucket(self, bucket_id: str) -> CloudResource | None:
        from nebius.api.nebius.storage.v1 import BucketServiceClient, GetBucketRequest

        return await self._resource(
            "bucket", BucketServiceClient, GetBucketRequest, bucket_id,
            gone=("scheduled_for_deletion",),
        )  # fmt: skip
