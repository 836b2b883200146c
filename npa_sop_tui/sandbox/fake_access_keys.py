"""The IAM access-key service of the local Nebius server (`nebius.iam.v2.AccessKeyService`).

npa mints a short-lived Object Storage access key for a service account through it when the
team's state bucket is used without `AWS_*` keys. Keys are issued by `FakeAccessKeys.mint`:
by default a random key pair, or whatever the test's `minter` returns (a key an S3 server
that checks signatures really accepts). Every key issued, read and deleted is recorded, so a
test can prove which key reached the bucket and that npa cleaned up after itself.

Create and Delete answer with an operation of the server (fake_nebius.py), which takes the
state's `operation_seconds` and can be made to fail.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius import FakeNebius

Minter = Callable[[str], tuple[str, str]]  # service account id → (key id, secret)


@dataclass
class IssuedKey:
    id: str  # the Nebius resource id (accesskey-…)
    parent_id: str
    account_id: str  # the service account it belongs to
    aws_access_key_id: str
    secret: str = field(repr=False)
    expires_at: float  # seconds since the epoch
    description: str


def random_key_pair(_account: str) -> tuple[str, str]:
    return "NAKI" + secrets.token_hex(8).upper(), secrets.token_urlsafe(30)


@dataclass
class FakeAccessKeys:
    minter: Minter = random_key_pair
    issued: dict[str, IssuedKey] = field(default_factory=dict)
    secrets_read: list[str] = field(default_factory=list)  # ids whose secret was fetched
    deleted: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def mint(self, parent_id: str, account_id: str, expires_at: float, text: str) -> IssuedKey:
        aws_id, secret = self.minter(account_id)
        with self.lock:
            key = IssuedKey(
                id=f"accesskey-{len(self.issued) + 1:04d}",
                parent_id=parent_id,
                account_id=account_id,
                aws_access_key_id=aws_id,
                secret=secret,
                expires_at=expires_at,
                description=text,
            )
            self.issued[key.id] = key
            return key


def handlers(fake: FakeNebius, rpc: Callable[..., Any]) -> list[Any]:
    """The (service, method, handler) rows of the access-key service."""
    import grpc
    from nebius.api.nebius.common.v1 import Operation, ResourceMetadata
    from nebius.api.nebius.iam import v2 as iam2

    keys = fake.state.access_keys

    def found(key_id: str, ctx: Any) -> IssuedKey:
        with keys.lock:
            key = keys.issued.get(key_id)
        if key is None or key_id in keys.deleted:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"access key {key_id} not found")
        assert key is not None
        return key

    def create(req: Any, ctx: Any) -> Any:
        account = req.spec.account.service_account
        if account is None or not account.id:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "spec.account.service_account.id is empty")
        if not req.metadata.parent_id:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "metadata.parent_id is empty")
        expires = req.spec.expires_at
        expires_at = expires.timestamp() if expires is not None else 0.0
        key = keys.mint(req.metadata.parent_id, account.id, expires_at, req.spec.description)
        return fake.operation("iam.v2.AccessKeyService/Create", key.id)

    def get(req: Any, ctx: Any) -> Any:
        key = found(req.id, ctx)
        return iam2.AccessKey(
            metadata=ResourceMetadata(id=key.id, parent_id=key.parent_id),
            status=iam2.AccessKeyStatus(
                state=iam2.AccessKeyStatus.State.ACTIVE,
                aws_access_key_id=key.aws_access_key_id,
            ),
        )

    def get_secret(req: Any, ctx: Any) -> Any:
        key = found(req.id, ctx)
        with keys.lock:
            keys.secrets_read.append(key.id)
        return iam2.GetAccessKeySecretResponse(
            aws_access_key_id=key.aws_access_key_id, secret=key.secret
        )

    def delete(req: Any, ctx: Any) -> Any:
        key = found(req.id, ctx)
        with keys.lock:
            keys.deleted.append(key.id)
        return fake.operation("iam.v2.AccessKeyService/Delete", key.id)

    service = "nebius.iam.v2.AccessKeyService"
    return [
        rpc(service, "Create", iam2.CreateAccessKeyRequest, Operation, create),
        rpc(service, "Get", iam2.GetAccessKeyRequest, iam2.AccessKey, get),
        rpc(service, "GetSecret", iam2.GetAccessKeySecretRequest,
            iam2.GetAccessKeySecretResponse, get_secret),
        rpc(service, "Delete", iam2.DeleteAccessKeyRequest, Operation, delete),
    ]  # fmt: skip
