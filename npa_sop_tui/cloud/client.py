"""The cloud client interface, its settings and errors. Imports nothing heavy.

`connect(settings)` returns a client over the official Nebius SDK; the SDK itself is imported
only when the first call is made, so building a client (as every `Environment` does) costs
nothing on paths that never reach the cloud (`npa soperator validate`).

Every read is bounded by `settings.timeout` (120 s by default). A read that runs out of time
raises `CloudTimeout`; callers that can live without the answer turn it into `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from npa_sop_tui.cloud.connection import (  # re-exported: settings, errors, SDK warm-up
    DEFAULT_TIMEOUT,
    CloudError,
    CloudSettings,
    CloudTimeout,
    wait_for_warm_up,
    warm_up,
)
from npa_sop_tui.cloud.model import (
    CapacityAllowance,
    CapacityBlockGroup,
    CloudResource,
    Filesystem,
    Mk8sCluster,
    NodeGroup,
    PlatformOffer,
    PriceQuote,
    PriceRequest,
    Quota,
    ResourceAdvice,
    Subnet,
    WhoAmI,
)
from npa_sop_tui.cloud.signin import (  # the credential sources, shared with state/
    CLI_CONFIG,
    ENDPOINT_ENV,
    PROFILE_ENV,
    SA_CREDENTIALS_ENV,
    TOKEN_ENV,
    CloudCredentialsMissing,
)


@dataclass(frozen=True)
class CloudReads:
    """What one operation step reads the cloud for: the spec (the sandbox's simulated cloud
    seeds its reservations from it), its run-time reservations, where the cluster lives, and
    how to reach Nebius (profile, per-read timeout)."""

    spec: Any = None
    capacity: Mapping[str, str] = field(default_factory=dict)
    identity: Any = None
    name: str | None = None  # the cluster the step is about (destroy verification)
    profile: str | None = None
    timeout: float | None = None


@runtime_checkable
class CloudClient(Protocol):
    """What npa reads from Nebius. All methods are async and bounded by the settings' timeout.

    Scopes (`parent_id`): quotas take the tenant or a project (each has its own allowances),
    capacity block groups and resource advice the tenant, capacity allowances and subnets the
    project,
    platforms the project, mk8s the project (IAM container) or the cluster for node groups.
    `get`-style methods return None when the resource does not exist (a bucket already
    scheduled for deletion counts as gone). The SDK client also keeps `notes`: listings cut
    at their page limit.
    """

    async def whoami(self) -> WhoAmI: ...

    async def quotas(self, parent_id: str, region: str | None = None) -> list[Quota]: ...

    async def capacity_block_groups(self, tenant_id: str) -> list[CapacityBlockGroup]: ...

    async def capacity_allowances(self, project_id: str) -> list[CapacityAllowance]: ...

    async def subnets(self, project_id: str) -> list[Subnet]: ...

    async def project_tenant(self, project_id: str) -> str | None: ...

    async def resource_advice(self, tenant_id: str) -> list[ResourceAdvice]: ...

    async def platforms(self, project_id: str) -> list[PlatformOffer]: ...

    async def mk8s_clusters(self, project_id: str) -> list[Mk8sCluster]: ...

    async def mk8s_cluster(self, cluster_id: str) -> Mk8sCluster | None: ...

    async def node_groups(self, cluster_id: str) -> list[NodeGroup]: ...

    async def filesystem(self, filesystem_id: str) -> Filesystem | None: ...

    async def allocation(self, allocation_id: str) -> CloudResource | None: ...

    async def gpu_cluster(self, gpu_cluster_id: str) -> CloudResource | None: ...

    async def bucket(self, bucket_id: str) -> CloudResource | None: ...

    async def estimate_hourly(
        self, requests: list[PriceRequest], project_id: str | None = None
    ) -> PriceQuote: ...

    async def close(self) -> None: ...


def connect(settings: CloudSettings | None = None) -> CloudClient:
    """A client over the official Nebius SDK. Cheap: the SDK loads on the first call."""
    from npa_sop_tui.cloud.nebius_sdk import NebiusCloudClient

    return NebiusCloudClient(settings or CloudSettings.from_env())


__all__ = [
    "CLI_CONFIG",
    "DEFAULT_TIMEOUT",
    "ENDPOINT_ENV",
    "PROFILE_ENV",
    "SA_CREDENTIALS_ENV",
    "TOKEN_ENV",
    "CloudClient",
    "CloudCredentialsMissing",
    "CloudError",
    "CloudReads",
    "CloudSettings",
    "CloudTimeout",
    "connect",
    "wait_for_warm_up",
    "warm_up",
]
