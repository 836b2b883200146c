"""One browser's session: its websocket and its app process, and how either ends.

textual-serve starts the app process when the websocket opens, but when the process dies
(a crash, `kill`) it leaves the websocket open and the page keeps showing the last frame,
"fresh 4s · READY", as if it were live. Here the session watches the process: when it ends,
the websocket is closed with the reason, and the page says "Disconnected: …" (its script,
web/static/session.js). The server stopping closes every session the same way, and a
process that does not quit when asked is killed after `STOP_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService

log = logging.getLogger("npa-sop.serve")

STOP_SECONDS = 0.8
"""How long an app process gets to quit before it is killed."""
HEARTBEAT_SECONDS = 5.0
"""Websocket pings: a browser that vanished is noticed within about this long."""


async def refuse(request: web.Request, reason: str) -> web.WebSocketResponse:
    """Open the websocket only to close it with `reason`: a browser shows that, where a
    refused upgrade (an HTTP error) would show nothing it can read."""
    socket = web.WebSocketResponse()
    await socket.prepare(request)
    await socket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=reason.encode()[:120])
    return socket


class Session:
    """A websocket and the app process it drives."""

    def __init__(self, command: str, download_manager: Any, debug: bool) -> None:
        self.command = command
        self.download_manager = download_manager
        self.debug = debug
        self.socket: web.WebSocketResponse | None = None
        self.service: AppService | None = None

    async def run(self, request: web.Request, pump: Any) -> web.WebSocketResponse:
        """Serve the session until the browser leaves, the process ends or the server stops;
        `pump` is textual-serve's loop of browser messages (keys, resizes) to the process."""
        socket = self.socket = web.WebSocketResponse(heartbeat=HEARTBEAT_SECONDS)
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        await socket.prepare(request)
        service = self.service = AppService(
            self.command,
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=socket.close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        watcher: asyncio.Task[None] | None = None
        try:
            await service.start(width, height)
            watcher = asyncio.create_task(self._close_when_the_app_ends())
            await pump(socket, service)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # the session's own problem, never the server's
            log.exception(error)
        finally:
            if watcher is not None:
                watcher.cancel()
            await self.stop()
            if not socket.closed:
                await socket.close()
        return socket

    async def _close_when_the_app_ends(self) -> None:
        service = self.service
        task = getattr(service, "_task", None)
        if service is None or task is None:
            return
        await asyncio.shield(task)
        process = getattr(service, "_process", None)
        code = process.returncode if process is not None else None
        if code is None and process is not None:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(process.wait(), 1.0)
        why = "the app process ended" + (f" (exit code {code})" if code is not None else "")
        log.info("session: %s", why)
        await self.close(why, WSCloseCode.GOING_AWAY)

    async def close(self, reason: str, code: int = WSCloseCode.GOING_AWAY) -> None:
        socket = self.socket
        if socket is not None and not socket.closed:
            with contextlib.suppress(Exception):
                await socket.close(code=code, message=reason.encode()[:120])

    async def stop(self) -> None:
        """Ask the app process to quit; kill it when it has not within STOP_SECONDS."""
        service, self.service = self.service, None
        if service is None:
            return
        process = getattr(service, "_process", None)
        try:
            await asyncio.wait_for(service.stop(), STOP_SECONDS)
        except Exception:  # TimeoutError included
            if process is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), STOP_SECONDS)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
