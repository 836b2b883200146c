"""The served app against a hostile websocket client (a raw aiohttp client, not a browser):
its window size is capped, messages of the wrong shape are ignored, and no log line carries
the token whatever it sends."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from npa_sop_tui.web.access import TokenGate
from npa_sop_tui.web.server import MAX_COLUMNS, MAX_ROWS, SecretScrub, window_size

pytestmark = [pytest.mark.slow]

TOKEN = "tok-" + "Q7w" * 12
QUIET = 3.0  # seconds without a frame: the app has drawn what it had to draw
SERVE = [
    sys.executable,
    "-c",
    "from npa_sop_tui.cli.entry import tui_main; raise SystemExit(tui_main())",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def served(tmp_path: Path, npa_home: Path) -> AsyncIterator[tuple[str, Path]]:
    """(websocket URL with the token, the server's log: its stderr) of `serve --sandbox`."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    port = _free_port()
    announced, log = tmp_path / "serve.out", tmp_path / "serve.log"
    args = ["serve", "--sandbox", "--port", str(port), "--token-file", str(token_file)]
    with announced.open("wb") as out, log.open("wb") as err:  # the URL is printed, not logged
        server = subprocess.Popen([*SERVE, *args], stdout=out, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while "?token=" not in announced.read_text():
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            await asyncio.sleep(0.2)
        yield f"ws://127.0.0.1:{port}/ws?token={TOKEN}", log
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _drain(ws: aiohttp.ClientWebSocketResponse, *, at_least: int = 0) -> int:
    """Bytes of the frames the app sends until it has been quiet for `QUIET` seconds (after
    at least `at_least` bytes), with a bound on the whole wait."""
    total = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            message = await ws.receive(timeout=QUIET)
        except TimeoutError:
            if total >= at_least:
                return total
            continue
        if message.type == aiohttp.WSMsgType.BINARY:
            total += len(message.data)
        elif message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            raise AssertionError(f"the session closed: {message}")
    raise AssertionError(f"the app never went quiet ({total} bytes)")


async def test_an_oversized_resize_is_capped_and_no_log_holds_the_token(
    served: tuple[str, Path],
) -> None:
    """Defect: a client sending an oversized `resize` made textual-serve log a traceback with
    local variables (the token gate and its token), and `resize 6000×6000` made the app
    allocate ~500 MB and stream 240 MB."""
    url, log = served
    async with (
        aiohttp.ClientSession() as client,
        client.ws_connect(url + "&width=6000&height=6000", max_msg_size=0) as ws,
    ):
        first = await _drain(ws, at_least=1)
        await ws.send_str('["resize", {"width": 6000, "height": 6000}]')
        after_resize = await _drain(ws)
        for hostile in (
            '["resize", {"width": ' + "9" * 5000 + ', "height": 24}]',
            '["resize", {"width": 1e308, "height": true}]',
            '["resize", "6000x6000"]',
            '["stdin", 5]',
            "not json at all",
            "[]",
            '{"resize": 1}',
            "[" * 5000 + "]" * 5000,
        ):
            await ws.send_str(hostile)
        await ws.send_str('["ping", "still-here"]')
        reply = None
        while reply is None:
            message = await ws.receive(timeout=30)
            if message.type == aiohttp.WSMsgType.TEXT:
                reply = message.json()
    assert reply == ["pong", "still-here"]  # the session went on serving
    # a full screen of 500×200 cells is well under a few MB; 6000×6000 was hundreds
    assert first < 8 * 1024 * 1024 and after_resize < 8 * 1024 * 1024, (first, after_resize)
    text = log.read_text(errors="replace")
    gate = TokenGate(TOKEN, 0)
    assert TOKEN not in text and gate.session_value() not in text
    assert "Traceback" not in text, text[-3000:]
    assert "session opened" in text  # the log is this one


def test_window_sizes_are_whole_numbers_within_the_cap() -> None:
    assert window_size(120, 40) == (120, 40)
    assert window_size(6000, 6000) == (MAX_COLUMNS, MAX_ROWS)
    assert window_size(0, -5) == (1, 1)
    assert window_size(10**5000, 24) == (MAX_COLUMNS, 24)  # a number, capped
    for bad in ((True, 24), (80.0, 24), ("80", 24), (None, 24), (80, [24])):
        assert window_size(*bad) is None, bad


def test_no_record_keeps_a_secret_even_in_a_traceback() -> None:
    """The scrub masks the token in a message, its arguments and an exception's text, and
    drops the live traceback (whose frames' locals a Rich handler would print)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("test.web.scrub")
    handler = Keep()
    handler.addFilter(SecretScrub([TOKEN]))
    logger.addHandler(handler)
    try:
        try:
            gate = TokenGate(TOKEN, 1)
            raise ValueError(f"bad gate {gate!r}")
        except ValueError:
            logger.exception("failed with %s", TOKEN)
    finally:
        logger.removeHandler(handler)
    (record,) = records
    assert record.exc_info is None and record.exc_text
    shown = logging.Formatter().format(record)
    assert TOKEN not in shown and "***" in shown and re.search(r"ValueError: bad gate", shown)
    assert os.environ.get("NPA_SERVE_TOKEN") is None  # nothing leaked into the environment
