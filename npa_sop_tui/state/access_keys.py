"""Object Storage access keys minted through Nebius IAM (`nebius.iam.v2.AccessKeyService`).

Object Storage speaks S3, so boto3 and Terraform's S3 backend need an AWS-style key pair.
Nebius issues those for a service account: Create (with an expiry, the secret delivered on
request), then GetSecret. The pair lives only in the caller's memory; `delete_access_key`
retires it early, and the expiry retires it anyway if nobody does.

The service account is the one named by the caller, else the identity the credentials sign
in as when that is a service account (a service-account profile or key file). A user's own
profile cannot hold keys of its own, so it must name one.

The SDK is signed in as the cloud reads are (cloud/signin.py) and imported only here.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from npa_sop_tui.cloud.signin import (
    TOKEN_ENV,
    CloudCredentialsMissing,
    SignInFailed,
    fail_fast,
    request_failure,
)
from npa_sop_tui.errors import OperationError

T = TypeVar("T")


@dataclass(frozen=True)
class MintedKey:
    id: str  # the Nebius resource id, to delete it
    aws_access_key_id: str
    secret: str = field(repr=False)
    service_account_id: str
    expires_at: float  # seconds since the epoch


async def _call(what: str, timeout: float, make: Callable[[], Awaitable[T]]) -> T:
    """One bounded SDK request; its failure becomes an error that says which call failed."""
    from nebius.aio.service_error import RequestError

    try:
        return await asyncio.wait_for(make(), timeout + 1)
    except TimeoutError:
        raise OperationError(f"{what}: no answer within {timeout:g}s") from None
    except RequestError as exc:
        code, message = request_failure(exc)
        if code == "DEADLINE_EXCEEDED":  # the call's own deadline, before ours
            raise OperationError(f"{what}: no answer within {timeout:g}s") from None
        if code == "UNAUTHENTICATED":
            raise SignInFailed(
                f"{what}: the Nebius API refused the credentials ({message})",
                hint=f"check {TOKEN_ENV}, the service-account key file or the CLI profile",
            ) from None
        raise OperationError(f"{what} failed: {code}: {message}") from None


async def mint_access_key(
    sdk: Any,
    *,
    parent_id: str | None,
    service_account_id: str | None,
    lifetime_seconds: float,
    description: str,
    timeout: float,
) -> MintedKey:
    """A new access key of `service_account_id` (default: the caller's own service account),
    created in `parent_id` (the project; default: the caller's service account's own
    container), expiring after `lifetime_seconds`."""
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.iam.v1 import Account
    from nebius.api.nebius.iam.v2 import (
        AccessKeyServiceClient,
        AccessKeySpec,
        CreateAccessKeyRequest,
        GetAccessKeySecretRequest,
        SecretDeliveryMode,
    )

    if service_account_id:
        account, home = service_account_id, None
    else:
        account, home = await _own_service_account(sdk, timeout)
    parent_id = parent_id or home  # a service account's key sits beside it by default
    if not parent_id:
        raise CloudCredentialsMissing(
            f"no project to create the access key of {account} in",
            hint="set project_id (the project of the service account and the bucket)",
        )
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=lifetime_seconds)
    request = CreateAccessKeyRequest(
        metadata=ResourceMetadata(parent_id=parent_id),
        spec=AccessKeySpec(
            account=Account(service_account=Account.ServiceAccount(id=account)),
            expires_at=expires,
            description=description,
            secret_delivery_mode=SecretDeliveryMode.EXPLICIT,
        ),
    )
    service = AccessKeyServiceClient(sdk)

    async def create() -> str:
        operation = await service.create(request, timeout=timeout, **fail_fast())
        await operation.wait(timeout=timeout)
        if not operation.successful():
            raise OperationError(f"creating an access key failed: {operation.status()}")
        return str(operation.resource_id)

    key_id = await _call(f"create an access key for {account}", timeout, create)
    answer = await _call(
        f"read the secret of access key {key_id}",
        timeout,
        lambda: service.get_secret(
            GetAccessKeySecretRequest(id=key_id), timeout=timeout, **fail_fast()
        ),
    )
    if not answer.aws_access_key_id or not answer.secret:
        raise OperationError(f"access key {key_id} came back without its key pair")
    return MintedKey(
        id=key_id,
        aws_access_key_id=answer.aws_access_key_id,
        secret=answer.secret,
        service_account_id=account,
        expires_at=expires.timestamp(),
    )


async def delete_access_key(sdk: Any, key_id: str, timeout: float) -> None:
    from nebius.api.nebius.iam.v2 import AccessKeyServiceClient, DeleteAccessKeyRequest

    async def delete() -> None:
        operation = await AccessKeyServiceClient(sdk).delete(
            DeleteAccessKeyRequest(id=key_id), timeout=timeout, **fail_fast()
        )
        await operation.wait(timeout=timeout)

    await _call(f"delete access key {key_id}", timeout, delete)


async def _own_service_account(sdk: Any, timeout: float) -> tuple[str, str | None]:
    """The service account the credentials sign in as, and its container; a user profile
    cannot hold keys."""
    from nebius.api.nebius.iam.v1 import GetProfileRequest, ProfileServiceClient

    who = await _call(
        "who am I (iam ProfileService.Get)",
        timeout,
        lambda: ProfileServiceClient(sdk).get(GetProfileRequest(), timeout=timeout, **fail_fast()),
    )
    if who.service_account_profile is not None:
        meta = who.service_account_profile.info.metadata
        return str(meta.id), str(meta.parent_id or "") or None
    kind = "user" if who.user_profile is not None else "anonymous account"
    raise CloudCredentialsMissing(
        f"the Nebius credentials sign in as a {kind}; Object Storage access keys belong to a "
        "service account",
        hint="name the service account whose key to use (state.service_account_id or "
        "NPA_STATE_SERVICE_ACCOUNT_ID), or sign in with a service-account profile",
    )
