"""The served app: textual-serve's page, websocket and statics behind the token gate.

Each browser tab gets its own app process (textual-serve starts `command` per websocket);
this module adds what textual-serve leaves to its user: the token check on every route
(`access.TokenGate`), an access log that records paths without their query (the token
travels in the first URL), URLs in the page built from the address the browser used (so
`--host 0.0.0.0` works from another machine), TLS, and a cap on concurrent sessions.
"""

from __future__ import annotations

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
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
