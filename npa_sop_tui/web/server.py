"""The served app: textual-serve's page, websocket and statics behind the token gate.

Each browser tab gets its own app process (textual-serve starts `command` per websocket);
this module adds what textual-serve leaves to its user: the token check on every route
(`access.TokenGate`), an access log that records paths without their query (the token
travels in the first URL), URLs in the page built from the address the browser used (so
`--host 0.0.0.0` works from another machine), TLS, and a cap on concurrent sessions.

What a client sends over the websocket is data: a window size is capped (`MAX_COLUMNS` ×
`MAX_ROWS`: a `resize 6000×6000` would make the app allocate hundreds of MB and stream as
much back), and a message that is not what textual-serve's page sends is ignored. And no log
line carries the token whatever fails: tracebacks are logged without local variables
(textual-serve's own logging shows them, and a websocket handler's locals reach the token
gate), and every record is scrubbed of the token and the session cookie's value.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from aiohttp.abc import AbstractAccessLogger
from textual_serve.server import Server

from npa_sop_tui.web.access import TokenGate

log = logging.getLogger("npa-sop.serve")
MAX_COLUMNS = 500  # a 4K screen at a small font; more is not a window
MAX_ROWS = 200


def window_size(width: object, height: object) -> tuple[int, int] | None:
    """A client's window size, capped to `MAX_COLUMNS` × `MAX_ROWS`; None unless both are
    whole numbers (a float, a string, a bool or a 5000-digit number is not a size)."""
    if type(width) is not int or type(height) is not int:
        return None
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


class SecretScrub(logging.Filter):
    """Masks `secrets` in every record (message, arguments, traceback), on any handler."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._clean(record.getMessage())
        record.args = None
        if record.exc_info:
            # the text without local variables, masked; the live traceback is dropped
            record.exc_text = self._clean(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        return True


class PathOnlyAccessLogger(AbstractAccessLogger):
    """One line per request with its path and status, never its query string (the token
    arrives as `?token=`) nor its cookies."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s %s %.3fs",
            request.remote,
            request.method,
            request.path,
            response.status,
            time,
        )


class GatedServer(Server):
    """textual-serve's Server with our access rules; see the module docstring."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        gate: TokenGate,
        title: str,
        ssl_context: ssl.SSLContext | None = None,
        max_sessions: int = 8,
    ) -> None:
        scheme = "https" if ssl_context is not None else "http"
        super().__init__(
            command, host=host, port=port, title=title, public_url=f"{scheme}://{host}:{port}"
        )
        self.gate = gate
        self.ssl_context = ssl_context
        self.max_sessions = max_sessions
        self.sessions = 0

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.gate.middleware])
        templates = Path(self.templates_path)
        aiohttp_jinja2.setup(app, loader=_jinja_loader(templates))
        app.add_routes(
            [
                web.get("/", self.page, name="index"),
                web.get("/ws", self.session, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, name="static"),
            ]
        )
        return app

    async def page(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's page, with URLs of the address the browser used."""
        base = f"{request.scheme}://{request.host}"
        ws_scheme = "wss" if request.scheme == "https" else "ws"
        context: dict[str, Any] = {
            "font_size": _int(request.query.get("fontsize"), 16),
            "app_websocket_url": f"{ws_scheme}://{request.host}/ws",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def session(self, request: web.Request) -> web.StreamResponse:
        # the first window size comes in the URL: capped like every resize after it
        size = window_size(
            _int(request.query.get("width"), 80), _int(request.query.get("height"), 24)
        )
        width, height = size or (80, 24)
        request = request.clone(
            rel_url=request.rel_url.update_query(width=str(width), height=str(height))
        )
        if self.sessions >= self.max_sessions:
            return web.Response(
                status=503,
                text=f"503: {self.max_sessions} sessions are open already; close one and reload\n",
            )
        self.sessions += 1
        try:
            log.info("session opened (%d open)", self.sessions)
            return await self.handle_websocket(request)
        finally:
            self.sessions -= 1
            log.info("session closed (%d open)", self.sessions)

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: Any) -> None:
        """textual-serve's message loop, taking only what its page sends: a message that is
        not JSON, not a list or of the wrong shape is ignored, and a window size is capped."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except (ValueError, RecursionError):
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(data.encode("utf-8", errors="replace"))
            elif kind == "resize" and isinstance(data, dict):
                size = window_size(data.get("width"), data.get("height"))
                if size is not None:
                    await app_service.set_terminal_size(*size)
            elif kind == "ping" and isinstance(data, str | int | float):
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()

    def initialize_logging(self) -> None:
        """textual-serve's logging (Rich, to stderr: stdout has the URL), with no local
        variables in a traceback and the token and cookie value masked in every record."""
        from rich.console import Console
        from rich.logging import RichHandler

        handler = RichHandler(
            show_path=False,
            show_time=False,
            rich_tracebacks=False,
            tracebacks_show_locals=False,
            console=Console(stderr=True),
        )
        scrub = SecretScrub([self.gate.token, self.gate.session_value()])
        root = logging.getLogger()
        for other in (*root.handlers, handler):  # the --debug log's too
            other.addFilter(scrub)
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)

    async def on_startup(self, app: web.Application) -> None:
        """Quiet: `serve()` prints the URL once, after the port is bound."""

    def run(self, announce: Callable[[], None]) -> None:
        """Serve until SIGINT/SIGTERM, calling `announce` once the port is bound; OSError
        when the address cannot be bound."""
        self.initialize_logging()
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            ssl_context=self.ssl_context,
            access_log_class=PathOnlyAccessLogger,
            print=lambda _started: announce(),
        )


def _jinja_loader(templates: Path) -> Any:
    import jinja2

    return jinja2.FileSystemLoader(templates)


def _int(value: str | None, default: int) -> int:
    try:  # a few digits at most: a 5000-digit number is not a size either
        return int(value) if value is not None and len(value) < 10 else default
    except ValueError:
        return default
