"""The MCP server's stdin: lines are bounded, and every message the server cannot take gets
a JSON-RPC error reply (with the request's id when it has one) while the server goes on.

The attacks are raw bytes on the server's stdin (no client library sends them); the server
is the real `npa soperator mcp` subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.agent.mcp_stdio import (
    INVALID_REQUEST,
    PARSE_ERROR,
    LineSplitter,
    Refused,
    checked,
    top_level_id,
)

NPA = Path(sys.executable).with_name("npa")
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def test_lines_are_split_and_an_oversized_one_is_refused_as_it_arrives() -> None:
    splitter = LineSplitter(limit=16)
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert splitter.feed(b":2}\n") == [b'{"b":2}']
    out = splitter.feed(b'{"id": 9, "x": "' + b"y" * 40)
    assert out == [] and len(splitter.held) <= 64 * 1024
    (refused,) = splitter.feed(b'"}\n')
    assert isinstance(refused, Refused) and refused.request_id == 9
    assert refused.code == INVALID_REQUEST and "larger than" in refused.message
    assert splitter.feed(b"tail", eof=True) == [b"tail"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"jsonrpc":"2.0","id":7,"method":"x"}', 7),
        ('{"method":"x","params":{"id":99,"deep":[[[', None),
        ('{"params":{"id":99},"id":"abc"}', "abc"),
        ('{"jsonrpc":"2.0","id" : -3, "params": ' + "[" * 5000, -3),
        ('{"x":"\\"id\\": 5","id":6}', 6),
        ("not json", None),
        ('{"id": {"nested": 1}}', None),
    ],
)
def test_the_top_level_id_is_found_without_parsing_the_rest(text: str, found: object) -> None:
    assert top_level_id(text) == found


def test_a_line_the_server_cannot_take_is_answered() -> None:
    deep = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":' + b"[" * 300 + b"]" * 300
    for line, code, request_id in (
        (deep + b"}", INVALID_REQUEST, 4),
        (b"{nope", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":5}', INVALID_REQUEST, 5),
    ):
        result = checked(line)
        assert isinstance(result, Refused), line[:40]
        assert (result.code, result.request_id) == (code, request_id)
    assert checked(json.dumps(INIT).encode()) == json.dumps(INIT)


class RawServer:
    """`npa soperator mcp --sandbox` with its stdin and stdout as plain pipes."""

    def __init__(self, npa_home: Path) -> None:
        env = {"PATH": os.environ["PATH"], "NPA_HOME": str(npa_home), "HOME": str(npa_home)}
        self.proc = subprocess.Popen(
            [str(NPA), "soperator", "mcp", "--sandbox"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def send(self, raw: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        data = raw if isinstance(raw, bytes) else json.dumps(raw).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the server closed its stdout"
        return dict(json.loads(line))

    def peak_memory_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


@pytest.mark.slow
def test_a_huge_line_and_a_deep_request_get_replies_and_the_server_goes_on(
    npa_home: Path,
) -> None:
    """Defect: a 1.5 GB MCP line crashed the server (read whole); a deeply nested request was
    dropped without a reply (its client waits forever). Here 200 MB stands for the giant:
    the server's memory stays far below it, each gets an error carrying its id, and the next
    request is served."""
    server = RawServer(npa_home)
    try:
        server.send(INIT)
        assert server.receive()["id"] == 1
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        arguments = b'{"spec_yaml": "' + b"a" * (200 * 1024 * 1024) + b'"}'
        server.send(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
            b'"infra.soperator.validate","arguments":' + arguments + b"}}"
        )
        huge = server.receive()
        assert huge["id"] == 2 and huge["error"]["code"] == INVALID_REQUEST
        assert "larger than 4 MiB" in huge["error"]["message"]
        server.send(
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":'
            b'"infra.soperator.validate","arguments":{"spec":'
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}}}"
        )
        deep = server.receive()
        assert deep == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": INVALID_REQUEST, "message": "request nested too deep to be read"},
        }
        server.send(b"\x00\xff not json")
        assert server.receive()["error"]["code"] == PARSE_ERROR
        server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        listed = server.receive()
        assert listed["id"] == 4 and listed["result"]["tools"]
        assert server.peak_memory_kib() < 150 * 1024  # a 200 MB line never held
    finally:
        assert server.close() == 0
