"""`CloudClient` over the official Nebius Python SDK (`nebius` on PyPI).

The SDK is imported inside methods only: `import npa_sop_tui.cloud.nebius_sdk` is cheap, and
the first call pays the SDK's import (about a second). The SDK runs its own event loop in a
background thread; its requests can be awaited from any loop, Textual's included.

Every call is bounded twice: the SDK's own `timeout=` (the gRPC deadline) and an
`asyncio.wait_for` around it, so neither a silent server nor a stuck resolver can hang a
caller. Credentials are handed to the SDK as the user keeps them (token in the environment,
a service-account file, the CLI profile); nothing is copied anywhere.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui import __version__
from npa_sop_tui.cloud.client import (
    CloudCredentialsMissing,
    CloudError,
    CloudSettings,
    CloudTimeout,
)
from npa_sop_tui.cloud.model import (
    Availability,
    CapacityBlockGroup,
    Filesystem,
    Mk8sCluster,
    NodeGroup,
    PlatformOffer,
    PresetOffer,
    PriceQuote,
    PriceRequest,
    Quota,
    ResourceAdvice,
    WhoAmI,
)

T = TypeVar("T")
MAX_PAGES = 50  # a listing longer than this is cut (the SDK's messages parse slowly)
PAGE_SIZE = 200


class _NotFound(Exception):
    pass


def _enum(value: Any, *prefixes: str) -> str:
    """`STATE_ACTIVE` → `active`; unknown values keep their number."""
    name = getattr(value, "name", None) or str(value)
    for prefix in prefixes:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return name.lower()


class NebiusCloudClient:
    def __init__(self, settings: CloudSettings) -> None:
        self.settings = settings
        self._sdk: Any = None
        self._lock = asyncio.Lock()
        self.calls = 0  # made so far (tests, benchmarks)

    # --- connection --------------------------------------------------------------------

    def _credentials(self) -> dict[str, Any]:
        from npa_sop_tui.nebius_auth import sdk_credentials

        s = self.settings
        return sdk_credentials(
            iam_token=s.iam_token,
            credentials_file=s.credentials_file,
            profile=s.profile,
            cli_config=s.cli_config,
        )

    async def _get(self) -> Any:
        async with self._lock:
            if self._sdk is not None:
                return self._sdk
            from npa_sop_tui.cloud.client import wait_for_warm_up

            await asyncio.to_thread(wait_for_warm_up)
            # gRPC core prints INFO lines (GOAWAY …) on stderr unless told otherwise.
            os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
            from nebius.sdk import SDK

            kwargs: dict[str, Any] = {"user_agent_prefix": f"npa-sop-tui/{__version__}"}
            from npa_sop_tui.nebius_auth import sdk_endpoint

            kwargs.update(self._credentials())
            kwargs.update(sdk_endpoint(self.settings.endpoint))
            try:
                self._sdk = SDK(**kwargs)
            except Exception as exc:
                raise CloudCredentialsMissing(
                    f"cannot set up the Nebius SDK: {exc}",
                    hint="check NEBIUS_IAM_TOKEN, the service-account file or the CLI profile",
                ) from None
            return self._sdk

    async def close(self) -> None:
        async with self._lock:
            sdk, self._sdk = self._sdk, None
        if sdk is not None:
            try:
                await asyncio.wait_for(sdk.close(), 10)
            except Exception:  # closing must never turn a result into a failure
                return

    # --- calls ---------------------------------------------------------------------------

    async def _call(
        self, what: str, make: Callable[[Any, float], Awaitable[T]], deadline: float | None = None
    ) -> T:
        sdk = await self._get()
        from nebius.aio.service_error import RequestError

        budget = self.settings.timeout if deadline is None else deadline - time.monotonic()
        if budget <= 0:
            raise CloudTimeout(f"{what}: no answer within {self.settings.timeout:g}s")
        self.calls += 1
        try:
            return await asyncio.wait_for(make(sdk, budget), budget + 1)
        except TimeoutError:
            raise CloudTimeout(f"{what}: no answer within {self.settings.timeout:g}s") from None
        except RequestError as exc:
            code = getattr(getattr(exc, "status", None), "code", None)
            name = getattr(code, "name", str(code))
            if name == "NOT_FOUND":
                raise _NotFound() from None
            if name == "DEADLINE_EXCEEDED":
                raise CloudTimeout(f"{what}: no answer within {self.settings.timeout:g}s") from None
            message = getattr(exc.status, "message", None) or str(exc)
            hint = None
            if name in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
                hint = "check that the profile or token can read this tenant/project"
            raise CloudError(f"{what} failed: {name}: {message}", hint=hint) from None

    async def _pages(
        self, what: str, fetch: Callable[[Any, str, float], Awaitable[Any]]
    ) -> list[Any]:
        """Every item of a paged listing, all pages within one timeout."""
        deadline = time.monotonic() + self.settings.timeout
        items: list[Any] = []
        token = ""
        for _ in range(MAX_PAGES):
            page = await self._call(
                what, lambda sdk, t, tok=token: fetch(sdk, tok, t), deadline=deadline
            )
            items.extend(page.items)
            token = page.next_page_token
            if not token:
                break
        return items

    # --- reads ---------------------------------------------------------------------------

    async def whoami(self) -> WhoAmI:
        from nebius.api.nebius.iam.v1 import GetProfileRequest, ProfileServiceClient

        resp = await self._call(
            "who am I (iam ProfileService.Get)",
            lambda sdk, t: ProfileServiceClient(sdk).get(GetProfileRequest(), timeout=t),
        )
        if resp.user_profile is not None:
            return WhoAmI("user", resp.user_profile.id)
        if resp.service_account_profile is not None:
            meta = resp.service_account_profile.info.metadata
            return WhoAmI("service_account", meta.id, meta.name)
        return WhoAmI("anonymous", "")

    async def quotas(self, parent_id: str, region: str | None = None) -> list[Quota]:
        from nebius.api.nebius.quotas.v1 import (
            ListQuotaAllowancesRequest,
            QuotaAllowanceServiceClient,
        )

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListQuotaAllowancesRequest(
                parent_id=parent_id, page_size=PAGE_SIZE, page_token=token
            )
            return QuotaAllowanceServiceClient(sdk).list(req, timeout=t)

        out: list[Quota] = []
        for item in await self._pages(f"quotas of {parent_id}", fetch):
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
                )
            )
        return out

    async def capacity_block_groups(self, tenant_id: str) -> list[CapacityBlockGroup]:
        from nebius.api.nebius.capacity.v1 import (
            CapacityBlockGroupServiceClient,
            ListCapacityBlockGroupsRequest,
        )

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListCapacityBlockGroupsRequest(
                parent_id=tenant_id, page_size=PAGE_SIZE, page_token=token
            )
            return CapacityBlockGroupServiceClient(sdk).list(req, timeout=t)

        out: list[CapacityBlockGroup] = []
        for item in await self._pages("capacity block groups", fetch):
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

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListResourceAdviceRequest(
                parent_id=tenant_id, page_size=PAGE_SIZE, page_token=token
            )
            return ResourceAdviceServiceClient(sdk).list(req, timeout=t)

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
        for item in await self._pages("resource advice", fetch):
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

    async def platforms(self, project_id: str) -> list[PlatformOffer]:
        from nebius.api.nebius.compute.v1 import ListPlatformsRequest, PlatformServiceClient

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListPlatformsRequest(parent_id=project_id, page_size=PAGE_SIZE, page_token=token)
            return PlatformServiceClient(sdk).list(req, timeout=t)

        out: list[PlatformOffer] = []
        for item in await self._pages(f"platforms of {project_id}", fetch):
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

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListClustersRequest(parent_id=project_id, page_size=PAGE_SIZE, page_token=token)
            return ClusterServiceClient(sdk).list(req, timeout=t)

        return [self._cluster(i) for i in await self._pages("mk8s clusters", fetch)]

    async def mk8s_cluster(self, cluster_id: str) -> Mk8sCluster | None:
        from nebius.api.nebius.mk8s.v1 import ClusterServiceClient, GetClusterRequest

        try:
            item = await self._call(
                f"mk8s cluster {cluster_id}",
                lambda sdk, t: ClusterServiceClient(sdk).get(
                    GetClusterRequest(id=cluster_id), timeout=t
                ),
            )
        except _NotFound:
            return None
        return self._cluster(item)

    async def node_groups(self, cluster_id: str) -> list[NodeGroup]:
        from nebius.api.nebius.mk8s.v1 import ListNodeGroupsRequest, NodeGroupServiceClient

        def fetch(sdk: Any, token: str, t: float) -> Any:
            req = ListNodeGroupsRequest(parent_id=cluster_id, page_size=PAGE_SIZE, page_token=token)
            return NodeGroupServiceClient(sdk).list(req, timeout=t)

        return [
            NodeGroup(
                id=i.metadata.id,
                name=i.metadata.name,
                cluster_id=i.metadata.parent_id,
                state=_enum(i.status.state, "STATE_"),
                target_nodes=int(i.status.target_node_count),
                ready_nodes=int(i.status.ready_node_count),
            )
            for i in await self._pages("mk8s node groups", fetch)
        ]

    async def filesystem(self, filesystem_id: str) -> Filesystem | None:
        from nebius.api.nebius.compute.v1 import FilesystemServiceClient, GetFilesystemRequest

        try:
            item = await self._call(
                f"filesystem {filesystem_id}",
                lambda sdk, t: FilesystemServiceClient(sdk).get(
                    GetFilesystemRequest(id=filesystem_id), timeout=t
                ),
            )
        except _NotFound:
            return None
        return Filesystem(
            id=item.metadata.id,
            name=item.metadata.name,
            parent_id=item.metadata.parent_id,
            state=_enum(item.status.state),
        )

    async def estimate_hourly(self, requests: list[PriceRequest]) -> PriceQuote:
        """Hourly price: one priced instance per request (billing v1 EstimateBatch), times
        its count."""
        from npa_sop_tui.cloud.nebius_price import estimate_hourly

        return await estimate_hourly(self._call, requests)
