"""The cloud client interface, its settings and errors. Imports nothing heavy.

`connect(settings)` returns a client over the official Nebius SDK; the SDK itself is imported
only when the first call is made, so building a client (as every `Environment` does) costs
nothing on paths that never reach the cloud (`npa soperator validate`).

Every read is bounded by `settings.timeout` (120 s by default). A read that runs out of time
raises `CloudTimeout`; callers that can live without the answer turn it into `unknown`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from npa_sop_tui.cloud.model import (
    CapacityAllowance,
    CapacityBlockGroup,
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
from npa_sop_tui.errors import OperationError
from npa_sop_tui.nebius_auth import (  # the credential sources, shared with state/
    CLI_CONFIG,
    ENDPOINT_ENV,
    PROFILE_ENV,
    SA_CREDENTIALS_ENV,
    TOKEN_ENV,
    CloudCredentialsMissing,
    is_loopback,
)

DEFAULT_TIMEOUT = 120.0


class CloudError(OperationError):
    """A cloud call failed (permission, unavailable service, bad answer)."""


class CloudTimeout(CloudError):
    """A cloud read did not answer within its bound."""


@dataclass(frozen=True)
class CloudSettings:
    """How to reach Nebius. Credentials stay where the user keeps them; nothing is copied.

    - `profile`: a profile of the Nebius CLI config (`~/.nebius/config.yaml`); None uses
      `$NEBIUS_PROFILE`, then the file's `default`.
    - `credentials_file`: a service-account credentials JSON file (instead of a profile).
    - `NEBIUS_IAM_TOKEN` in the environment wins over both, as it does for the CLI;
      `iam_token` (never read from or written to a file) wins over everything.
    - `endpoint`: `host:port` that serves every service (a local test server); plaintext is
      allowed only when it is a loopback address.
    """

    profile: str | None = None
    credentials_file: Path | None = None
    endpoint: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    cli_config: Path = CLI_CONFIG
    iam_token: str | None = field(default=None, repr=False)  # in memory only (the sandbox)

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        profile: str | None = None,
        timeout: float | None = None,
    ) -> CloudSettings:
        env = os.environ if env is None else env
        key_file = (env.get(SA_CREDENTIALS_ENV) or "").strip()
        return cls(
            profile=profile or (env.get(PROFILE_ENV) or "").strip() or None,
            credentials_file=Path(key_file).expanduser() if key_file else None,
            endpoint=(env.get(ENDPOINT_ENV) or "").strip() or None,
            timeout=timeout if timeout is not None else DEFAULT_TIMEOUT,
        )

    @property
    def plaintext(self) -> bool:
        """True when the endpoint is a loopback address (a local server without TLS)."""
        return is_loopback(self.endpoint)


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
    `get`-style methods return None when the resource does not exist.
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

    async def estimate_hourly(
        self, requests: list[PriceRequest], project_id: str | None = None
    ) -> PriceQuote: ...

    async def close(self) -> None: ...


def connect(settings: CloudSettings | None = None) -> CloudClient:
    """A client over the official Nebius SDK. Cheap: the SDK loads on the first call."""
    from npa_sop_tui.cloud.nebius_sdk import NebiusCloudClient

    return NebiusCloudClient(settings or CloudSettings.from_env())


_warming: list[Any] = []  # the warm-up thread, once started


def warm_up() -> None:
    """Import the SDK and the API modules preflight uses in a background thread, once per
    process, so the import (about a second) overlaps with whatever the caller does next
    (recipe resolution, Terraform discovery) instead of adding to it."""
    if _warming:
        return
    import threading

    def load() -> None:
        import contextlib

        with contextlib.suppress(Exception):  # a broken install shows up on the real call
            from nebius.api.nebius.billing import v1 as billing
            from nebius.api.nebius.capacity import v1 as capacity
            from nebius.api.nebius.compute import v1 as compute
            from nebius.api.nebius.quotas import v1 as quotas
            from nebius.sdk import SDK  # noqa: F401

            # Message classes are built on first use: build the ones preflight sends.
            quotas.ListQuotaAllowancesRequest(parent_id="x")
            capacity.ListCapacityBlockGroupsRequest(parent_id="x")
            capacity.ListResourceAdviceRequest(parent_id="x")
            compute.ListPlatformsRequest(parent_id="x")
            billing.EstimateBatchRequest(currency="usd")
            compute.CreateInstanceRequest()

    thread = threading.Thread(target=load, name="npa-nebius-sdk-import", daemon=True)
    _warming.append(thread)
    thread.start()


def wait_for_warm_up() -> None:
    """Let a running warm-up finish before importing the SDK or gRPC here: two threads
    importing gRPC's extension modules at once is not something to rely on."""
    for thread in _warming:
        thread.join()


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
