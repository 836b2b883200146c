"""The fake IAM v2 access-key service: create, get, get the secret, delete (over the key
store in `fake_access_keys`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npa_sop_tui.sandbox.fake_access_keys import IssuedKey

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius_host import ServiceHost


def handlers(fake: ServiceHost, rpc: Callable[..., Any]) -> list[Any]:
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
