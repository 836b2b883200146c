"""mTLS in front of the plugin's gRPC server, with Python's `ssl` (OpenSSL).

Why not gRPC's own TLS: go-plugin's client certificate has a P-521 ECDSA key
(hashicorp/go-plugin `mtls.go`, `generateCert`), and gRPC's BoringSSL does not offer
`ecdsa_secp521r1_sha512` among its TLS 1.3 verify algorithms, so the Go client sends no
certificate and the handshake fails (seen with Terraform 1.0.3). OpenSSL accepts it. So the
plugin listens with OpenSSL on 127.0.0.1 (requiring exactly Terraform's client certificate,
ALPN `h2`) and pipes each connection to the gRPC server on a Unix socket in a private folder.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import ssl
import tempfile
import threading
from pathlib import Path

from npa_sop_tui.home.fsutil import atomic_write_bytes


def server_context(cert_pem: bytes, key_pem: bytes, client_cert_pem: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    folder = Path(tempfile.mkdtemp(prefix="npa-tfplugin-"))  # 0700
    try:
        # ssl loads a key only from a file: 0600 in a 0700 folder, removed at once
        atomic_write_bytes(folder / "cert.pem", cert_pem, mode=0o600)
        atomic_write_bytes(folder / "key.pem", key_pem, mode=0o600)
        context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    finally:
        for name in ("cert.pem", "key.pem"):
            with contextlib.suppress(FileNotFoundError):
                (folder / name).unlink()
        folder.rmdir()
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_cert_pem)
    context.set_alpn_protocols(["h2"])
    return context


class TLSProxy:
    """Accepts TLS on 127.0.0.1:<port> and forwards the plain bytes to `target` (a Unix
    socket path), one thread per connection (Terraform opens one)."""

    def __init__(self, context: ssl.SSLContext, target: str) -> None:
        self.context = context
        self.target = target
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port: int = self.listener.getsockname()[1]
        self._closed = False

    def start(self) -> TLSProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            tls = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()  # not Terraform (no or another client certificate)
            return
        inner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            inner.connect(self.target)
            _pump(tls, inner)
        except OSError:
            pass
        finally:
            inner.close()
            with contextlib.suppress(OSError):
                tls.close()


def _pump(tls: ssl.SSLSocket, inner: socket.socket) -> None:
    tls.setblocking(False)
    inner.setblocking(False)
    while True:
        # data already decrypted inside the SSL object is not visible to select()
        readable = [tls] if tls.pending() else select.select([tls, inner], [], [], 5.0)[0]
        for source in readable:
            sink = inner if source is tls else tls
            try:
                data = source.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                continue
            if not data:
                return
            _send_all(sink, data)


def _send_all(sink: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sink.send(view)
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            select.select([], [sink], [], 5.0)
            continue
        view = view[sent:]


def private_socket_path() -> str:
    folder = tempfile.mkdtemp(prefix="npa-tfplugin-")  # 0700: only this user reaches it
    return os.path.join(folder, "grpc.sock")
