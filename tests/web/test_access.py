"""The token gate in front of textual-serve: the page, the websocket and the statics are
refused without the token; a good token becomes a cookie and leaves the URL."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from npa_sop_tui.errors import UsageError
from npa_sop_tui.web.access import (
    REFUSED_TEXT,
    TokenGate,
    is_loopback,
    new_token,
    read_token_file,
)

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


@pytest.fixture
async def client() -> AsyncIterator[TestClient]:
    """A client of a page, a websocket and a static file behind the gate for port 8080."""
    served = await _client(TokenGate(TOKEN, 8080))
    try:
        yield served
    finally:
        await served.close()


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
    for mode in (0o640, 0o620, 0o604, 0o602, 0o610):
        os.chmod(path, mode)
        with pytest.raises(UsageError) as info:
            read_token_file(path)
        assert info.value.message == (
            f"--token-file {path} is readable by other users (mode {mode:o})"
        )
        assert info.value.hint == (
            f"run chmod 600 {path} (whoever reads the token can open the session)"
        )
        assert TOKEN not in info.value.render()
    os.chmod(path, 0o400)
    assert read_token_file(path) == TOKEN


def test_the_token_is_the_first_line_stripped_and_at_least_16_characters(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.touch(mode=0o600)
    path.write_text(f"  {TOKEN}  \nsomething else\n")
    assert read_token_file(path) == TOKEN
    path.write_text("0123456789abcdef\n")  # exactly the minimum
    assert read_token_file(path) == "0123456789abcdef"
    for short in ("0123456789abcde\n", "", "\n" + TOKEN):
        path.write_text(short)
        with pytest.raises(UsageError) as info:
            read_token_file(path)
        assert info.value.message == (
            f"the first line of --token-file {path} is shorter than 16 characters"
        )
        assert info.value.hint == (
            "write a long random token there, e.g. `python3 -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' > FILE`"
        )


def test_an_unreadable_token_file_is_named_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "missing"
    for path, why in (
        (tmp_path, "is a folder, not a token file"),
        (missing, "No such file or directory"),
    ):
        with pytest.raises(UsageError) as info:
            read_token_file(path)
        assert info.value.message == f"cannot read --token-file {path} ({why})"
        assert info.value.hint == (
            "give a regular file that holds the session token on its first line"
        )
    (tmp_path / "token").touch(mode=0o600)

    def fails(*_: object, **__: object) -> str:
        raise OSError("the read was cut short")  # an error without an errno's text

    monkeypatch.setattr("npa_sop_tui.home.bounded_read.read_regular_text", fails)
    with pytest.raises(UsageError, match=r"\(the read was cut short\)$"):
        read_token_file(tmp_path / "token")


def test_new_tokens_are_long_random_and_url_safe() -> None:
    tokens = {new_token() for _ in range(5)}
    assert len(tokens) == 5
    for token in tokens:
        assert len(token) == 43 and token.replace("-", "").replace("_", "").isalnum()


def test_a_bracketed_ipv6_loopback_is_loopback() -> None:
    assert is_loopback("[::1]") is True and is_loopback("[::]") is False


def test_the_gate_checks_the_exact_token_and_the_cookie_of_this_token() -> None:
    gate = TokenGate(TOKEN, 8080)
    assert gate.token_ok(TOKEN) and not gate.token_ok(None) and not gate.token_ok(TOKEN + "x")
    cookie = hmac.new(TOKEN.encode(), b"npa-sop session", hashlib.sha256).hexdigest()
    assert gate.cookie_ok(cookie) and not gate.cookie_ok(None) and not gate.cookie_ok(TOKEN)
    assert not TokenGate("another-token-of-enough-length", 8080).cookie_ok(cookie)
    assert gate.cookie_name == "npa_sop_session_8080"


async def test_the_refusal_says_how_to_get_in_and_never_redirects(client: TestClient) -> None:
    response = await client.get("/?token=wrong", allow_redirects=False)
    assert response.status == 403 and await response.text() == REFUSED_TEXT
    assert "Set-Cookie" not in response.headers


async def test_a_script_may_give_the_token_on_any_path_without_a_redirect(
    client: TestClient,
) -> None:
    response = await client.get(f"/static/x.js?token={TOKEN}", allow_redirects=False)
    assert response.status == 200 and await response.text() == "the page"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "Set-Cookie" not in response.headers


async def test_a_wrong_token_on_the_url_is_refused_even_with_a_good_cookie(
    client: TestClient,
) -> None:
    await client.get(f"/?token={TOKEN}")  # the cookie is set
    assert (await client.get("/")).status == 200
    assert (await client.get("/?token=wrong")).status == 403


@pytest.mark.parametrize("secure", [True, False])
async def test_a_secure_gate_sets_a_secure_cookie_for_the_whole_site(secure: bool) -> None:
    gate = TokenGate(TOKEN, 8443, secure=secure)
    client = await _client(gate)
    try:
        response = await client.get(f"/?token={TOKEN}", allow_redirects=False)
        cookie = response.cookies[gate.cookie_name]
        assert bool(cookie["secure"]) is secure and cookie["path"] == "/"
    finally:
        await client.close()


async def test_a_websocket_from_this_servers_own_page_is_let_in(client: TestClient) -> None:
    await client.get(f"/?token={TOKEN}")
    origin = f"http://{client.host}:{client.port}"
    socket = await client.ws_connect("/ws", headers={"Origin": origin})
    assert await socket.receive_str() == "hello"
    await socket.close()
    refused = await client.get("/ws", headers={"Origin": "http://evil.example"})
    assert refused.status == 403
    assert await refused.text() == "403: websocket from another site refused\n"


async def test_the_pages_own_headers_are_kept() -> None:
    app = web.Application(middlewares=[TokenGate(TOKEN, 8080).middleware])

    async def cached(request: web.Request) -> web.Response:
        return web.Response(text="x", headers={"Cache-Control": "max-age=60"})

    app.add_routes([web.get("/c", cached)])
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        response = await client.get(f"/c?token={TOKEN}")
        assert response.headers["Cache-Control"] == "max-age=60"
    finally:
        await client.close()


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
