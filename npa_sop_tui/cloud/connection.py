"""How npa reaches Nebius: the connection settings, the errors every cloud call raises, and
the background import of the SDK. Imports nothing heavy.

The lowest layer of the cloud package: `client.py` (the interface), `nebius_sdk*.py` (the SDK
client) and `nebius_price.py` all build on it, and it imports none of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.cloud.signin import (
    CLI_CONFIG,
    ENDPOINT_ENV,
    PROFILE_ENV,
    SA_CREDENTIALS_ENV,
    is_loopback,
)
from npa_sop_tui.errors import OperationError

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


_warming: list[Any] = []  # the warm-up thread, once started

# The standard-library modules the SDK's import needs (these few pull in all of them). The
# warm-up imports them in the caller's thread before its own thread starts, so that the two
# threads never import the same module at once: CPython 3.11 can fail such a pair (one
# thread in a package, the other in one of its submodules) with `_DeadlockError`, and the
# process then hangs at exit. tests/cloud/test_cloud_connection.py checks that the list
# still covers what the SDK imports.
SHARED_WITH_THE_SDK = (
    "asyncio",
    "concurrent.futures.thread",
    "dataclasses",
    "decimal",
    "encodings.raw_unicode_escape",
    "encodings.unicode_escape",
    "hmac",
    "importlib.metadata",
    "json",
    "pickle",
    "pkgutil",
    "typing_extensions",
    "urllib.request",
    "uuid",
)


def import_the_sdk() -> None:
    """Import the SDK and build the request messages preflight sends first (a message class
    is built on its first use)."""
    from nebius.api.nebius.billing import v1 as billing
    from nebius.api.nebius.capacity import v1 as capacity
    from nebius.api.nebius.compute import v1 as compute
    from nebius.api.nebius.quotas import v1 as quotas
    from nebius.sdk import SDK  # noqa: F401

    quotas.ListQuotaAllowancesRequest(parent_id="x")
    capacity.ListCapacityBlockGroupsRequest(parent_id="x")
    capacity.ListResourceAdviceRequest(parent_id="x")
    compute.ListPlatformsRequest(parent_id="x")
    billing.EstimateBatchRequest(currency="usd")
    compute.CreateInstanceRequest()


def warm_up() -> None:
    """Import the SDK in a background thread, once per process, so the import (about a
    second) overlaps with whatever the caller does next (recipe resolution, Terraform
    discovery) instead of adding to it. What the SDK shares with the rest of npa is
    imported first, here (tens of milliseconds)."""
    if _warming:
        return
    import contextlib
    import importlib
    import threading

    for name in SHARED_WITH_THE_SDK:
        importlib.import_module(name)

    def load() -> None:
        with contextlib.suppress(Exception):  # a broken install shows up on the real call
            import_the_sdk()

    thread = threading.Thread(target=load, name="npa-nebius-sdk-import", daemon=True)
    _warming.append(thread)
    thread.start()


def wait_for_warm_up() -> None:
    """Let a running warm-up finish before importing the SDK or gRPC here: two threads must
    not import the same module at once (see SHARED_WITH_THE_SDK)."""
    for thread in _warming:
        thread.join()
