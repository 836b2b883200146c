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
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui.cloud.client import (
    CloudError,
    CloudSettings,
    CloudTimeout,
)
from npa_sop_tui.cloud.model import (
    Availability,
    CapacityAllowance,
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
    Subnet,
    WhoAmI,
)

T = TypeVar("T")
MAX_PAGES = 50  # a listing longer than this is cut (the SDK's messages parse slowly)
PAGE_SIZE = 200


class _NotFound(Exception):
    pass


def _request_kwargs(budget: float) -> dict[str, Any]:
    """Every request's bound, and the option that makes a failed sign-in fail it at once."""
    from npa_sop_tui.nebius_auth import fail_fast

    return {"timeout": budget, **fail_fast()}


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
        self._sign: Any = None  # the nebius_auth.SignIn in use, once connected
        self._answered = False  # a call has come back: sign-in worked

    # --- connection --------------------------------------------------------------------

    async def _get(self) -> Any:
        async with self._lock:
            if self._sdk is not None:
                return self._sdk
            from npa_sop_tui.cloud.client import wait_for_warm_up
            from npa_sop_tui.nebius_auth import new_sdk, sign_in

            await asyncio.to_thread(wait_for_warm_up)
            s = self.settings
            self._sign = sign_in(
                iam_token=s.iam_token,
                credentials_file=s.credentials_file,
                profile=s.profile,
                cli_config=s.cli_config,
            )
            self._sdk = new_sdk(self._sign, s.endpoint)
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
        self,
        what: str,
        make: Callable[[Any, dict[str, Any]], Awaitable[T]],
        deadline: float | None = None,
    ) -> T:
        sdk = await self._get()
        from nebius.aio.service_error import RequestError

        budget = self.settings.timeout if deadline is None else deadline - time.monotonic()
        if budget <= 0:
            raise CloudTimeout(f"{what}: no answer within {self.settings.timeout:g}s")
        self.calls += 1
        try:
            answer = await asyncio.wait_for(make(sdk, _request_kwargs(budget)), budget + 1)
        except TimeoutError:
            raise self._timeout(what) from None
        except RequestError as exc:
            raise self._failure(what, exc) from None
        except Exception as exc:  # the SDK's sign-in errors are of several types
            from npa_sop_tui.nebius_auth import refused

            failed = refused(exc, self._sign)
            if failed is None:
                raise CloudError(f"{what} failed: {type(exc).__name__}: {exc}") from None
            raise failed from None
        self._answered = True
        return answer

    def _timeout(self, what: str) -> CloudError:
        message = f"{what}: no answer within {self.settings.timeout:g}s"
        if not self._answered and self._sign is not None:
            return CloudTimeout(message, hint=f"signing in used the {self._sign.source}; check "
                                "the network, then the credentials")  # fmt: skip
        return CloudTimeout(message)

    def _failure(self, what: str, exc: Exception) -> Exception:
        from npa_sop_tui.nebius_auth import refused, request_failure

        name, message = request_failure(exc)
        if name == "NOT_FOUND":
            return _NotFound()
        if name == "DEADLINE_EXCEEDED":
            return self._timeout(what)
        failed = refused(exc, self._sign)
        if failed is not None:
            return failed
        hint = None
        if name == "PERMISSION_DENIED":
            hint = "check that the profile or token can read this tenant/project"
        return CloudError(f"{what} failed: {name}: {message}", hint=hint)

    async def _pages(
        self, what: str, fetch: Callable[[Any, str, dict[str, Any]], Awaitable[Any]]
    ) -> list[Any]:
        """Every item of a paged listing, all pages within one timeout."""
        deadline = time.monotonic() + self.settings.timeout
        items: list[Any] = []
        token = ""
        for _ in range(MAX_PAGES):
            page = await self._call(
                what, lambda sdk, kw, tok=token: fetch(sdk, tok, kw), deadline=deadline
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
            lambda sdk, kw: ProfileServiceClient(sdk).get(GetProfileRequest(), **kw),
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

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListQuotaAllowancesRequest(
                parent_id=parent_id, page_size=PAGE_SIZE, page_token=token
            )
            return QuotaAllowanceServiceClient(sdk).list(req, **kw)

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
                    level="project" if parent_id.startswith("project-") else "tenant",
                )
            )
        return out

    async def capacity_allowances(self, project_id: str) -> list[CapacityAllowance]:
        from nebius.api.nebius.capacity.v1 import (
            CapacityAllowanceServiceClient,
            ListCapacityAllowancesRequest,
        )

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListCapacityAllowancesRequest(
                parent_id=project_id, page_size=PAGE_SIZE, page_token=token
            )
            return CapacityAllowanceServiceClient(sdk).list(req, **kw)

        out: list[CapacityAllowance] = []
        for item in await self._pages(f"capacity allowances of {project_id}", fetch):
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

    async def project_tenant(self, project_id: str) -> str | None:
        """The tenant a project belongs to (IAM ProjectService.Get: its parent), None when
        there is no such project."""
        from nebius.api.nebius.iam.v1 import GetProjectRequest, ProjectServiceClient

        try:
            item = await self._call(
                f"project {project_id}",
                lambda sdk, kw: ProjectServiceClient(sdk).get(
                    GetProjectRequest(id=project_id), **kw
                ),
            )
        except _NotFound:
            return None
        return str(item.metadata.parent_id) or None

    async def subnets(self, project_id: str) -> list[Subnet]:
        from nebius.api.nebius.vpc.v1 import ListSubnetsRequest, SubnetServiceClient

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListSubnetsRequest(parent_id=project_id, page_size=PAGE_SIZE, page_token=token)
            return SubnetServiceClient(sdk).list(req, **kw)

        return [
            Subnet(id=i.metadata.id, name=i.metadata.name)
            for i in await self._pages(f"subnets of {project_id}", fetch)
        ]

    async def capacity_block_groups(self, tenant_id: str) -> list[CapacityBlockGroup]:
        from nebius.api.nebius.capacity.v1 import (
            CapacityBlockGroupServiceClient,
            ListCapacityBlockGroupsRequest,
        )

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListCapacityBlockGroupsRequest(
                parent_id=tenant_id, page_size=PAGE_SIZE, page_token=token
            )
            return CapacityBlockGroupServiceClient(sdk).list(req, **kw)

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

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListResourceAdviceRequest(
                parent_id=tenant_id, page_size=PAGE_SIZE, page_token=token
            )
            return ResourceAdviceServiceClient(sdk).list(req, **kw)

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

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListPlatformsRequest(parent_id=project_id, page_size=PAGE_SIZE, page_token=token)
            return PlatformServiceClient(sdk).list(req, **kw)

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

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListClustersRequest(parent_id=project_id, page_size=PAGE_SIZE, page_token=token)
            return ClusterServiceClient(sdk).list(req, **kw)

        return [self._cluster(i) for i in await self._pages("mk8s clusters", fetch)]

    async def mk8s_cluster(self, cluster_id: str) -> Mk8sCluster | None:
        from nebius.api.nebius.mk8s.v1 import ClusterServiceClient, GetClusterRequest

        try:
            item = await self._call(
                f"mk8s cluster {cluster_id}",
                lambda sdk, kw: ClusterServiceClient(sdk).get(
                    GetClusterRequest(id=cluster_id), **kw
                ),
            )
        except _NotFound:
            return None
        return self._cluster(item)

    async def node_groups(self, cluster_id: str) -> list[NodeGroup]:
        from nebius.api.nebius.mk8s.v1 import ListNodeGroupsRequest, NodeGroupServiceClient

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = ListNodeGroupsRequest(parent_id=cluster_id, page_size=PAGE_SIZE, page_token=token)
            return NodeGroupServiceClient(sdk).list(req, **kw)

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
                lambda sdk, kw: FilesystemServiceClient(sdk).get(
                    GetFilesystemRequest(id=filesystem_id), **kw
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

    async def estimate_hourly(
        self, requests: list[PriceRequest], project_id: str | None = None
    ) -> PriceQuote:
        """Hourly price: one priced resource per request in `project_id` (billing v1
        EstimateBatch), times its count."""
        from npa_sop_tui.cloud.nebius_price import estimate_hourly

        return await estimate_hourly(self._call, requests, project_id)
