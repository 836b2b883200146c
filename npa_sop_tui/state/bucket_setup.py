"""`state init`: create the team's state bucket through the Nebius SDK, versioning on.

Versioning keeps every earlier Terraform state and record: a bad write, or a migration
someone regrets, can be rolled back from the bucket's history. The bucket is created in the
project (`project_id`) through the storage `BucketService`; npa never deletes it (destroying
the last cluster leaves it, and its history, in place).

Credentials are the ones every Nebius call of npa uses (cloud/signin.py): `NEBIUS_IAM_TOKEN`,
a service-account key file, else the Nebius CLI profile (`NEBIUS_PROFILE` or the config's
default); `NPA_NEBIUS_ENDPOINT` (host:port) sends every call to one address instead (a local
test server; plaintext only on loopback). The SDK is imported only when the command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass

from npa_sop_tui.cloud.connection import DEFAULT_TIMEOUT
from npa_sop_tui.errors import OperationError

TIMEOUT = DEFAULT_TIMEOUT  # the cloud timeout's default: all calls of one ensure_bucket together


@dataclass(frozen=True)
class BucketReady:
    name: str
    id: str
    created: bool  # False: it existed already
    versioning: str  # "enabled" once done; "pending" when S3 had not applied it in time
    note: str = ""  # the caveat while a versioning change applies (bucket_checks.py)
    versioning_switched: bool = False  # it was off: S3 applies it later (versioning_wait.py)


async def ensure_bucket(
    name: str, project_id: str, *, profile: str | None = None, timeout: float = TIMEOUT
) -> BucketReady:
    """Every call together bounded by `timeout` (the cloud timeout), the SDK's sign-in
    included; see `_ensure`."""
    try:
        return await asyncio.wait_for(
            _ensure(name, project_id, profile=profile, timeout=timeout), timeout
        )
    except TimeoutError:
        raise OperationError(
            f"bucket {name!r}: the Nebius API did not finish within {timeout:g}s",
            hint="check the network and the credentials (and NPA_NEBIUS_ENDPOINT if set); "
            "running `npa soperator state init` again is safe",
        ) from None


async def _ensure(
    name: str, project_id: str, *, profile: str | None = None, timeout: float = TIMEOUT
) -> BucketReady:
    """Create bucket `name` in `project_id` with versioning on; an existing one gets
    versioning turned on if it is off. `profile`: the Nebius CLI profile (None: the usual
    order, see cloud/signin.py)."""
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

    from npa_sop_tui.cloud.signin import (
        ENDPOINT_ENV,
        fail_fast,
        new_sdk,
        refused,
        request_failure,
        sign_in_from_env,
    )

    def _code(exc: Exception) -> str:
        return request_failure(exc)[0]

    sign = sign_in_from_env(profile=profile)  # a failure names the credentials it used
    sdk = new_sdk(sign, (os.environ.get(ENDPOINT_ENV) or "").strip() or None)
    try:
        service = BucketServiceClient(sdk)
        spec = BucketSpec(versioning_policy=VersioningPolicy.ENABLED)
        try:
            operation = await service.create(
                CreateBucketRequest(
                    metadata=ResourceMetadata(parent_id=project_id, name=name), spec=spec
                ),
                timeout=timeout,
                **fail_fast(),
            )
            await operation.wait(timeout=timeout)
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
            GetBucketByNameRequest(parent_id=project_id, name=name), timeout=timeout, **fail_fast()
        )
        if bucket.spec.versioning_policy != VersioningPolicy.ENABLED:
            bucket.spec.versioning_policy = VersioningPolicy.ENABLED
            update = await service.update(
                UpdateBucketRequest(metadata=bucket.metadata, spec=bucket.spec),
                timeout=timeout,
                **fail_fast(),
            )
            await update.wait(timeout=timeout)
            if not update.successful():
                raise OperationError(
                    f"turning on versioning of bucket {name!r} failed: {update.status()}",
                    hint="check that the profile or token may update buckets in this project",
                )
            # Nebius documents that a versioning change on an existing bucket can take up to
            # 15 minutes to apply; state init says so (bucket_checks.py) until then.
            return BucketReady(name, bucket.metadata.id, False, "enabled", versioning_switched=True)
        return BucketReady(name, bucket.metadata.id, False, "enabled")
    except RequestError as exc:
        failed = refused(exc, sign)  # UNAUTHENTICATED: the sign-in, named by its source
        if failed is not None:
            raise failed from None
        hint = "check that the profile or token may create buckets in this project"
        raise OperationError(
            f"bucket {name!r}: {_code(exc)}: {exc} (credentials: {sign.source})", hint=hint
        ) from None
    except OperationError:
        raise
    except TimeoutError:
        raise OperationError(
            f"bucket {name!r}: the Nebius API did not answer within {timeout:g}s",
            hint="check the network (and NPA_NEBIUS_ENDPOINT if set)",
        ) from None
    except Exception as exc:  # the SDK's token exchange fails with errors of its own
        failed = refused(exc, sign)
        if failed is None:
            raise
        raise failed from None
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
