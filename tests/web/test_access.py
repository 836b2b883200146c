"""The token gate in front of textual-serve: the page, the websocket and the statics are
refused without the token; a good token becomes a cookie and leaves the URL."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from npa_sop_tui.errors import UsageError
from npa_sop_tui.web.access import TokenGate, is_loopback, read_token_file

TOKEN = "s3cret-token-for-tests-0123456789"


async def _client(gate: TokenGate) -> TestClient:
    app = web.Application(middlewares=[gate.middleware])

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="the page")

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_str("hello")
        await socket.close()
        return socket

    app.add_routes([web.get("/", page), web.get("/ws", ws), web.get("/static/x.js", page)])
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


async def test_page_and_websocket_need_the_token() -> None:
    client = await _client(TokenGate(TOKEN, 8080))
    try:
        for path in ("/", "/ws", "/static/x.js", "/?token=wrong", "/?token="):
            response = await client.get(path)
            assert response.status == 403, path
            assert TOKEN not in await response.text()
        with pytest.raises(Exception, match="403"):
            await client.ws_connect("/ws")
    finally:
        await client.close()


async def test_a_good_token_becomes_a_cookie_and_leaves_the_url() -> None:
    gate = TokenGate(TOKEN, 8080)
    client = await _client(gate)
    try:
        response = await client.get(f"/?token={TOKEN}", allow_redirects=False)
        assert response.status == 303 and response.headers["Location"] == "/"
        cookie = response.cookies[gate.cookie_name]
        assert TOKEN not in cookie.value  # an HMAC of the token, not the token
        assert cookie["httponly"] and cookie["samesite"] == "Strict"
        page = await client.get("/")  # the client keeps the cookie, like a browser
        assert page.status == 200 and await page.text() == "the page"
        assert page.headers["Referrer-Policy"] == "no-referrer"
        socket = await client.ws_connect("/ws")
        assert await socket.receive_str() == "hello"
        await socket.close()
    finally:
        await client.close()


async def test_websocket_from_another_site_is_refused_even_with_the_cookie() -> None:
    client = await _client(TokenGate(TOKEN, 8080))
    try:
        await client.get(f"/?token={TOKEN}")
        with pytest.raises(Exception, match="403"):
            await client.ws_connect("/ws", headers={"Origin": "https://evil.example"})
        socket = await client.ws_connect(f"/ws?token={TOKEN}")  # a script: token on the URL
        assert await socket.receive_str() == "hello"
        await socket.close()
    finally:
        await client.close()


def test_cookie_names_differ_per_port() -> None:
    assert TokenGate(TOKEN, 8080).cookie_name != TokenGate(TOKEN, 8081).cookie_name


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("myhost", False),
        ("::", False),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_token_file_must_be_private_and_long(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    os.chmod(path, 0o644)
    with pytest.raises(UsageError, match="readable by other users"):
        read_token_file(path)
    os.chmod(path, 0o600)
    assert read_token_file(path) == TOKEN
    path.write_text("short\n")
    with pytest.raises(UsageError, match="shorter"):
        read_token_file(path)
    with pytest.raises(UsageError, match=r"(?i)cannot read .*no such file"):
        read_token_file(tmp_path / "missing")


def test_a_group_readable_token_file_is_refused(tmp_path: Path) -> None:
    """Defect: whoever may read the token may open the session; 0640 lets the group read."""
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    os.chmod(path, 0o640)
    with pytest.raises(UsageError, match=r"readable by other users \(mode 640\)") as refused:
        read_token_file(path)
    assert (
        refused.value.hint == f"run chmod 600 {path} (whoever reads the token can open the session)"
    )
    assert TOKEN not in refused.value.render()


def test_a_token_file_that_is_a_fifo_a_device_or_huge_is_refused_at_once(tmp_path: Path) -> None:
    """Defect: `serve --token-file` on a FIFO hung, on /dev/zero or a sparse 3 GB file read
    until memory ran out. Each is refused before a byte is read, saying what it is."""
    from testkit.hostile_files import plant

    fifo = plant(tmp_path / "fifo", "fifo")
    sparse = plant(tmp_path / "sparse", "sparse")
    for path in (fifo, sparse):
        path.chmod(0o600)
    for path, said in (
        (fifo, "is a named pipe (FIFO), not a token file"),
        (Path("/dev/zero"), "is a character device, not a token file"),
        (sparse, "token file is larger than 64 KiB"),
    ):
        with pytest.raises(
            UsageError, match=re.escape(f"cannot read --token-file {path} ({said})")
        ):
            read_token_file(path)
