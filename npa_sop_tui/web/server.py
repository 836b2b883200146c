"""The served app: textual-serve's websocket and statics behind the token gate.

Each browser tab gets its own app process (textual-serve starts `command` per websocket);
this module adds what textual-serve leaves to its user: the token check on every route
(`access.TokenGate`), an access log that records paths without their query (the token
travels in the first URL), URLs in the page built from the address the browser used (so
`--host 0.0.0.0` works from another machine), TLS, and a cap on concurrent sessions.

The page is our own (web/templates, web/static): no third-party request (its font comes
from textual-serve's statics), a strict Content-Security-Policy on every response (no
inline script; styles inline only because xterm.js writes its own), and a script that
says "Disconnected" and why when the session ends (web/session.py closes it with the
reason: the app process ended, too many sessions, the server stopping). Stopping the
server closes every session and stops their app processes within about 2 seconds.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from textual_serve.server import Server

from npa_sop_tui.web.access import TokenGate
from npa_sop_tui.web.session import Session, refuse

HERE = Path(__file__).parent
SHUTDOWN_SECONDS = 0.5
"""How long stopping the server waits for requests still running (after every session
was closed and its app process stopped)."""

log = logging.getLogger("npa-sop.serve")


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
        self.open_sessions: set[Session] = set()

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.gate.middleware, _security_headers])
        aiohttp_jinja2.setup(app, loader=_jinja_loader(HERE / "templates"))
        app.add_routes(
            [
                web.get("/", self.page, name="index"),
                web.get("/ws", self.session, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, name="static"),
                web.static("/npa-static", HERE / "static", name="npa-static"),
            ]
        )
        app.on_shutdown.append(self._close_sessions)
        return app

    async def page(self, request: web.Request) -> web.StreamResponse:
        """Our page, with URLs of the address the browser used."""
        base = f"{request.scheme}://{request.host}"
        ws_scheme = "wss" if request.scheme == "https" else "ws"
        context: dict[str, Any] = {
            "font_size": _int(request.query.get("fontsize"), 16),
            "app_websocket_url": f"{ws_scheme}://{request.host}/ws",
            "config": {
                "static": {"url": f"{base}/static/"},
                "npa_static": {"url": f"{base}/npa-static/"},
            },
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def session(self, request: web.Request) -> web.StreamResponse:
        if self.sessions >= self.max_sessions:
            log.info("session refused: %d open", self.sessions)
            return await refuse(
                request,
                f"{self.max_sessions} sessions are open already (--max-sessions); "
                "close one and reconnect",
            )
        session = Session(self.command, self.download_manager, self.debug)
        self.sessions += 1
        self.open_sessions.add(session)
        try:
            log.info("session opened (%d open)", self.sessions)
            return await session.run(request, self._process_messages)
        finally:
            self.open_sessions.discard(session)
            self.sessions -= 1
            log.info("session closed (%d open)", self.sessions)

    async def _close_sessions(self, app: web.Application) -> None:
        """The server is stopping: every page says so, every app process is stopped."""
        sessions = list(self.open_sessions)
        await asyncio.gather(*(s.close("the server is stopping") for s in sessions))
        await asyncio.gather(*(s.stop() for s in sessions))

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
            shutdown_timeout=SHUTDOWN_SECONDS,
        )


CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "font-src 'self'; img-src 'self' data:; connect-src 'self' {sockets}; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: scripts, fonts and the websocket only from this
server; `unsafe-inline` for styles only, which xterm.js writes into the page itself."""


@web.middleware
async def _security_headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    if not response.prepared:  # a websocket's upgrade was sent already
        host = request.host
        response.headers["Content-Security-Policy"] = CSP.format(
            sockets=f"ws://{host} wss://{host}"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _jinja_loader(templates: Path) -> Any:
    import jinja2

    return jinja2.FileSystemLoader(templates)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
