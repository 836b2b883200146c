"""`state init`: create the team's state bucket through the Nebius SDK, versioning on.

Versioning keeps every earlier Terraform state and record: a bad write, or a migration
someone regrets, can be rolled back from the bucket's history. The bucket is created in the
project (`project_id`) through the storage `BucketService`; npa never deletes it (destroying
the last cluster leaves it, and its history, in place).

Credentials are the Nebius CLI's: `NEBIUS_IAM_TOKEN`, else the CLI profile
(`NEBIUS_PROFILE` or the config's default). `NPA_NEBIUS_ENDPOINT` (host:port) sends every
call to one address instead (a local test server; plaintext only on loopback).
The SDK is imported only here, when the command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import OperationError, UsageError

ENDPOINT_ENV = "NPA_NEBIUS_ENDPOINT"
TOKEN_ENV = "NEBIUS_IAM_TOKEN"
PROFILE_ENV = "NEBIUS_PROFILE"
CLI_CONFIG = Path("~/.nebius/config.yaml")
TIMEOUT = 60.0


@dataclass(frozen=True)
class BucketReady:
    name: str
    id: str
    created: bool  # False: it existed already
    versioning: str  # "enabled" once done


def _loopback(endpoint: str) -> bool:
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _sdk_kwargs(env: dict[str, str]) -> dict[str, Any]:
    from npa_sop_tui import __version__

    kwargs: dict[str, Any] = {"user_agent_prefix": f"npa-sop-tui/{__version__}"}
    token = (env.get(TOKEN_ENV) or "").strip()
    if token:
        kwargs["credentials"] = token
    else:
        config = CLI_CONFIG.expanduser()
        if not config.is_file():
            raise UsageError(
                f"no Nebius credentials: no {TOKEN_ENV} and no Nebius CLI config at {config}",
                hint="run `nebius profile create`, or export "
                f"{TOKEN_ENV}=$(nebius iam get-access-token)",
            )
        from nebius.aio.cli_config import Config

        try:
            reader = Config(config_file=config, profile=env.get(PROFILE_ENV), no_parent_id=True)
        except Exception as exc:  # the SDK raises several types for a bad profile
            raise UsageError(
                f"the Nebius CLI profile in {config} is not usable: {exc}",
                hint=f"pick another with {PROFILE_ENV}, or see `nebius profile list`",
            ) from None
        kwargs.update(
            config_reader=reader,
            federation_invitation_no_browser_open=True,
            federation_invitation_writer=sys.stderr,
        )
    endpoint = (env.get(ENDPOINT_ENV) or "").strip()
    if endpoint:
        from nebius.base.resolver import Constant

        kwargs["resolver"] = Constant(endpoint)
        if _loopback(endpoint):
            from nebius.base.options import INSECURE

            kwargs["options"] = [(INSECURE, True)]
            kwargs["keepalive"] = False
    return kwargs


def _code(exc: Exception) -> str:
    code = getattr(getattr(exc, "status", None), "code", None)
    return str(getattr(code, "name", code))


async def ensure_bucket(
    name: str, project_id: str, *, env: dict[str, str] | None = None
) -> BucketReady:
    """Create bucket `name` in `project_id` with versioning on; an existing one gets
    versioning turned on if it is off."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from nebius.aio.service_error import RequestError
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.storage.v1 import (
        BucketServiceClient,
        BucketSpec,
        CreateBucketRequest,
        GetBucketByNameRequest,
        UpdateBucketRequest,
        VersioningPolicy,
    )
    from nebius.sdk import SDK

    sdk = SDK(**_sdk_kwargs(dict(os.environ if env is None else env)))
    try:
        service = BucketServiceClient(sdk)
        spec = BucketSpec(versioning_policy=VersioningPolicy.ENABLED)
        try:
            operation = await service.create(
                CreateBucketRequest(
                    metadata=ResourceMetadata(parent_id=project_id, name=name), spec=spec
                ),
                timeout=TIMEOUT,
            )
            await operation.wait(timeout=TIMEOUT)
            if not operation.successful():
                raise OperationError(
                    f"creating bucket {name!r} failed: {operation.status()}",
                    hint="check the project's Object Storage quota and your permissions",
                )
            return BucketReady(name, operation.resource_id, True, "enabled")
        except RequestError as exc:
            if _code(exc) != "ALREADY_EXISTS":
                raise
        bucket = await service.get_by_name(
            GetBucketByNameRequest(parent_id=project_id, name=name), timeout=TIMEOUT
        )
        if bucket.spec.versioning_policy != VersioningPolicy.ENABLED:
            bucket.spec.versioning_policy = VersioningPolicy.ENABLED
            update = await service.update(
                UpdateBucketRequest(metadata=bucket.metadata, spec=bucket.spec), timeout=TIMEOUT
            )
            await update.wait(timeout=TIMEOUT)
        return BucketReady(name, bucket.metadata.id, False, "enabled")
    except RequestError as exc:
        code = _code(exc)
        hint = "check that the profile or token may create buckets in this project"
        raise OperationError(f"bucket {name!r}: {code}: {exc}", hint=hint) from None
    except TimeoutError:
        raise OperationError(
            f"bucket {name!r}: the Nebius API did not answer within {TIMEOUT:g}s",
            hint="check the network (and NPA_NEBIUS_ENDPOINT if set)",
        ) from None
    finally:
        with contextlib.suppress(Exception):  # closing never turns a result into a failure
            await asyncio.wait_for(sdk.close(), 10)


def config_lines(name: str, region: str | None, endpoint: str | None) -> str:
    """The `state:` block to add to the npa config."""
    lines = ["state:", "  backend: s3", f"  bucket: {name}"]
    if region:
        lines.append(f"  region: {region}")
    if endpoint:
        lines.append(f"  endpoint: {endpoint}")
    return "\n".join(lines)
