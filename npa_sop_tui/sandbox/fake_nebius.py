"""A local Nebius API that speaks the real gRPC protocol, with the SDK's own message types.

Follows the official Python SDK `nebius` 0.6.29 (PyPI): its message classes and service
names (`nebius.api.nebius.*`), its address resolver (`nebius/base/resolver.py`,
`Conventional`: `nebius.<svc>.v1.XService` → `<svc or api_service_name>.{domain}`), its
token exchange (`nebius/aio/token/exchangeable.py`, `base/service_account/*`: an RS256 JWT
with `kid`, `iss` = `sub` = the service account, `aud` = the token service, exchanged through
`nebius.iam.v1.TokenExchangeService/Exchange`), and its operations (`nebius/aio/operation.py`:
an operation without `status` is running; it is polled through `OperationService/Get` at the
address of the service that started it).

As on Nebius, every service address runs its own server (one 127.0.0.1 port per address the
resolver gives: `quota-dispatcher.billing-cpl`, `compute`, `tokens.iam`, …); `endpoint` is the
`address=host:port,…` map npa's `NPA_NEBIUS_ENDPOINT` takes, so a call the SDK routes to the
wrong address meets a server that does not implement it. Services demand a bearer token the
state accepts (`token`, or one the token exchange issued and not expired); operations take
`operation_seconds` to finish and can end in an error.

    with FakeNebius(default_state()) as cloud:
        client = connect(CloudSettings(endpoint=cloud.endpoint))
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from typing import Any

from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState

SDK_VERSION = "0.6.29"
TOKEN_AUDIENCE = "token-service.iam.new.nebiuscloud.net"  # what the SDK's JWTs name
TOKEN_LIFETIME = 3600
_OPEN = ("iam.v1.TokenExchangeService/Exchange",)  # reached before there is a token


@dataclass
class _Operation:
    id: str
    resource_id: str
    ready_at: float  # monotonic
    error: str | None


def service_address(service: str) -> str:
    """The SDK's own answer for where `service` lives, without the `.{domain}` suffix."""
    from nebius.base.resolver import Conventional

    return Conventional().resolve(service).removesuffix(".{domain}")


class FakeNebius:
    def __init__(self, state: FakeCloudState) -> None:
        self.state = state
        self._servers: list[Any] = []
        self._stopping = threading.Event()
        self.addresses: dict[str, str] = {}  # resolver address → 127.0.0.1:port
        self._operations: dict[str, _Operation] = {}

    @property
    def endpoint(self) -> str:
        """Every service address, as `NPA_NEBIUS_ENDPOINT` takes them."""
        return ",".join(f"{name}={addr}" for name, addr in sorted(self.addresses.items()))

    def start(self) -> FakeNebius:
        from npa_sop_tui.cloud.connection import wait_for_warm_up

        wait_for_warm_up()  # never import gRPC beside the SDK's background import
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC core logs INFO lines
        import grpc

        by_address: dict[str, dict[str, dict[str, Any]]] = {}
        for service, name, handler in _table(self):
            by_address.setdefault(service_address(service), {}).setdefault(service, {})[name] = (
                handler
            )
        operation_rows = _operation_rows(self)
        for address, services in sorted(by_address.items()):
            for service, name, handler in operation_rows:  # polled where they started
                services.setdefault(service, {})[name] = handler
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
            server.add_generic_rpc_handlers(
                tuple(grpc.method_handlers_generic_handler(s, m) for s, m in services.items())
            )
            port = server.add_insecure_port("127.0.0.1:0")
            server.start()
            self._servers.append(server)
            self.addresses[address] = f"127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers stalled by `delays`
        for server in self._servers:
            server.stop(grace=0).wait(5)
        self._servers.clear()

    def __enter__(self) -> FakeNebius:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request plumbing ----------------------------------------------------------------

    def _enter(self, method: str, ctx: Any) -> None:
        """Record the call, enforce the token, then apply the test's delay or error."""
        import grpc

        auth = dict(ctx.invocation_metadata()).get("authorization", "")
        s = self.state
        with s.lock:
            s.calls.append((method, auth))
        if method not in _OPEN:
            token = auth.removeprefix("Bearer ")
            if token in s.expired_tokens:
                ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "the access token has expired")
            issued = s.issued_tokens.get(token)
            if issued is not None and issued < time.time():
                ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "the access token has expired")
            if s.token is not None and auth != f"Bearer {s.token}" and issued is None:
                ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid or missing IAM token")
        delay = s.delays.get(method)
        if delay:
            self._stopping.wait(delay)
        code = s.errors.get(method)
        if code:
            ctx.abort(getattr(grpc.StatusCode, code), f"{method} failed on purpose (test)")

    def page(self, items: list[Any], request: Any) -> tuple[list[Any], str]:
        start = int(request.page_token or 0)
        size = min(request.page_size or self.state.max_page, self.state.max_page)
        chunk = items[start : start + size]
        return chunk, (str(start + size) if start + size < len(items) else "")

    # --- operations ------------------------------------------------------------------------

    def operation(self, method: str, resource_id: str) -> Any:
        """A new operation of `method` on `resource_id`: running for `operation_seconds`,
        then done, or failed when the test said so (`failing_operations`)."""
        s = self.state
        op = _Operation(
            id=f"op-{secrets.token_hex(6)}",
            resource_id=resource_id,
            ready_at=time.monotonic() + s.operation_seconds,
            error=s.failing_operations.get(method),
        )
        with s.lock:
            self._operations[op.id] = op
        return self._operation_msg(op)

    def _operation_msg(self, op: _Operation) -> Any:
        from nebius.api.google.rpc import Status
        from nebius.api.nebius.common.v1 import Operation

        if time.monotonic() < op.ready_at:
            return Operation(id=op.id, resource_id=op.resource_id)
        if op.error:
            return Operation(
                id=op.id, resource_id=op.resource_id, status=Status(code=9, message=op.error)
            )
        return Operation(id=op.id, resource_id=op.resource_id, status=Status(code=0))

    def operation_get(self, request: Any, ctx: Any) -> Any:
        import grpc

        with self.state.lock:
            op = self._operations.get(request.id)
        if op is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"operation {request.id} not found")
        assert op is not None
        return self._operation_msg(op)


def rpc_row(
    fake: FakeNebius, service: str, name: str, req_cls: Any, resp_cls: Any, fn: Callable[..., Any]
) -> tuple[str, str, Any]:
    """One (service, method, handler) row: (de)serialised with the SDK's classes, recorded and
    checked by `FakeNebius._enter` first."""
    import grpc

    method = f"{service.removeprefix('nebius.')}/{name}"

    def handler(request: Any, ctx: Any) -> Any:
        fake._enter(method, ctx)
        return fn(request, ctx)

    return (
        service,
        name,
        grpc.unary_unary_rpc_method_handler(
            handler,
            request_deserializer=req_cls.FromString,
            response_serializer=resp_cls.SerializeToString,
        ),
    )


def _operation_rows(fake: FakeNebius) -> list[Any]:
    from nebius.api.nebius.common.v1 import GetOperationRequest, Operation

    return [
        rpc_row(fake, "nebius.common.v1.OperationService", "Get", GetOperationRequest, Operation,
                fake.operation_get),
    ]  # fmt: skip


def _table(fake: FakeNebius) -> list[Any]:
    from npa_sop_tui.sandbox.fake_access_key_service import handlers as access_key_handlers
    from npa_sop_tui.sandbox.fake_filesystems import handlers as filesystem_handlers
    from npa_sop_tui.sandbox.fake_leftovers import handlers as leftover_handlers
    from npa_sop_tui.sandbox.fake_nebius_reads import handlers as read_handlers

    def rpc(*args: Any) -> Any:
        return rpc_row(fake, *args)

    return [
        *read_handlers(fake, rpc),
        *access_key_handlers(fake, rpc),
        *filesystem_handlers(fake, rpc),
        *leftover_handlers(fake, rpc),
        *_token_rows(fake, rpc),
    ]


def _token_rows(fake: FakeNebius, rpc: Callable[..., Any]) -> list[Any]:
    """`iam.v1.TokenExchangeService/Exchange`: a service account's signed JWT for an access
    token, verified against the public key its `kid` names."""
    import grpc
    import jwt
    from nebius.api.nebius.iam import v1 as iam

    s = fake.state

    def exchange(req: Any, ctx: Any) -> Any:
        if req.grant_type != "urn:ietf:params:oauth:grant-type:token-exchange":
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unsupported grant_type {req.grant_type}")
        if req.subject_token_type != "urn:ietf:params:oauth:token-type:jwt":
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "subject_token_type must be a JWT")
        try:
            kid = jwt.get_unverified_header(req.subject_token).get("kid", "")
        except jwt.PyJWTError:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "the subject token is not a JWT")
        known = s.public_keys.get(kid)
        if known is None:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, f"unknown public key {kid!r}")
        account, pem = known
        try:
            claims = jwt.decode(
                req.subject_token, pem, algorithms=["RS256"], audience=TOKEN_AUDIENCE
            )
        except jwt.PyJWTError as exc:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, f"JWT rejected: {exc}")
        if claims.get("iss") != account or claims.get("sub") != account:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "JWT issuer/subject is not the key's owner")
        token = "fake-iam-" + secrets.token_urlsafe(16)
        with s.lock:
            s.issued_tokens[token] = time.time() + TOKEN_LIFETIME
        return iam.CreateTokenResponse(
            access_token=token,
            issued_token_type="urn:ietf:params:oauth:token-type:access_token",
            token_type="Bearer",
            expires_in=TOKEN_LIFETIME,
        )

    return [
        rpc("nebius.iam.v1.TokenExchangeService", "Exchange", iam.ExchangeTokenRequest,
            iam.CreateTokenResponse, exchange),
    ]  # fmt: skip
