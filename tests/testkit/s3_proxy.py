"""S3 endpoints that misbehave the ways real networks and stores do: small HTTP proxies in
front of moto that pass requests through and change one thing.

- `ConditionIgnoringProxy` drops `If-None-Match` and `If-Match` from every request, as a
  store without conditional-write support would ignore them.
- `ReplyDroppingProxy` forwards a request, lets the store carry it out, and then closes the
  connection instead of answering, the first time(s) a request matching `drop` succeeds: the
  client never learns its write landed, and its retry meets its own write.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

DROPPED = {"if-none-match", "if-match"}

# (method, path, request headers) → whether to lose the reply of this request if it succeeds
Matcher = Callable[[str, str, Mapping[str, str]], bool]


class _Proxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                return

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = proxy.request_headers(dict(self.headers.items()))
                conn = http.client.HTTPConnection(
                    proxy.upstream.hostname, proxy.upstream.port, timeout=30
                )
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                finally:
                    conn.close()
                if proxy.lose_reply(self.command, self.path, self.headers, resp.status):
                    self.close_connection = True  # the store did it; the client never hears
                    return
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def request_headers(self, headers: dict[str, str]) -> dict[str, str]:
        return headers

    def lose_reply(self, method: str, path: str, headers: Mapping[str, str], status: int) -> bool:
        return False

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> _Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class ConditionIgnoringProxy(_Proxy):
    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.seen_conditions = 0  # requests that carried a dropped header

    def request_headers(self, headers: dict[str, str]) -> dict[str, str]:
        kept = {k: v for k, v in headers.items() if k.lower() not in DROPPED}
        if len(kept) != len(headers):
            self.seen_conditions += 1
        return kept

    def __enter__(self) -> ConditionIgnoringProxy:
        super().__enter__()
        return self


class ReplyDroppingProxy(_Proxy):
    def __init__(self, upstream: str, drop: Matcher, times: int = 1) -> None:
        super().__init__(upstream)
        self.drop = drop
        self.left = times
        self.dropped: list[tuple[str, str]] = []  # (method, path) whose reply was lost
        self._lock = threading.Lock()

    def lose_reply(self, method: str, path: str, headers: Mapping[str, str], status: int) -> bool:
        if not 200 <= status < 300 or not self.drop(method, path, headers):
            return False
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            self.dropped.append((method, path))
        return True

    def __enter__(self) -> ReplyDroppingProxy:
        super().__enter__()
        return self
