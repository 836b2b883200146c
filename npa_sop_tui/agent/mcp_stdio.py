"""The MCP server's stdin: bounded lines, and an answer for every message it cannot take.

The `mcp` package's stdio transport reads a whole line before looking at it (a 1.5 GB line
is 1.5 GB of memory, then a crash) and drops a line it cannot parse without a word (a
request nested deeper than its JSON parser allows never gets a reply: the client waits
forever). Here:

- a line is read in chunks and kept up to `MAX_MESSAGE_BYTES`; the rest of a longer line is
  read and thrown away, so memory stays bounded whatever a client sends;
- a line that is too long, not JSON, nested too deep or not a JSON-RPC message gets a
  JSON-RPC error reply (`-32700` parse error, `-32600` invalid request) carrying the
  request's `id` when one can be found at the top level, else `null`, and the server goes
  on serving;
- good lines go to the `mcp` transport unchanged, which still owns stdout (and keeps stray
  prints off it). Our stdin is a private copy of fd 0; fd 0 itself is pointed at
  /dev/null while serving, so a child process cannot read the protocol's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # a spec or a batch script is KiBs; a tool call far less
_CHUNK = 1024 * 1024
_ID_PREFIX = 64 * 1024  # of an oversized line, what is kept to find its id
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class Refused:
    """A line that gets an error reply instead of reaching the server."""

    def __init__(self, code: int, message: str, request_id: int | str | None) -> None:
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> SessionMessage:
        error = types.ErrorData(code=self.code, message=self.message)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.request_id, error=error))


def _too_long(prefix: bytes, limit: int) -> Refused:
    text = prefix.decode("utf-8", errors="replace")
    return Refused(
        INVALID_REQUEST,
        f"message larger than {limit // (1024 * 1024)} MiB: not read; send smaller "
        "requests (a spec or a script is a few KiB)",
        top_level_id(text),
    )


def checked(line: bytes) -> str | Refused:
    """`line` as text if the `mcp` transport can take it, else the reply it gets."""
    text = line.decode("utf-8", errors="replace")
    if not text.strip():
        return text
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:  # pydantic's ValidationError: bad JSON, too deep, wrong shape
        request_id = top_level_id(text)
        detail = _first_error(exc)
        if "recursion limit" in detail:
            return Refused(INVALID_REQUEST, "request nested too deep to be read", request_id)
        if "json_invalid" in detail or "Invalid JSON" in detail:
            return Refused(PARSE_ERROR, "parse error: not a JSON message", request_id)
        return Refused(INVALID_REQUEST, "not a JSON-RPC 2.0 message", request_id)
    return text


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors(include_url=False, include_input=False)[0]
            return f"{first.get('type')} {first.get('msg')}"
    return str(exc)[:200]


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"-?\d{1,18}(?![\d.eE])")


def top_level_id(text: str) -> int | str | None:
    """The `id` member of the JSON object `text` starts with, read without parsing the rest
    (which may be too deep or cut off); None when there is none to be found."""
    depth = 0
    last = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            match = _STRING.match(text, i)
            if match is None:
                return None  # a string cut off: nothing more to read
            i = match.end()
            if depth == 1 and last in "{," and match.group() == '"id"':
                return _id_value(text, i)
            last = '"'
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        if not c.isspace():
            last = c
        i += 1
    return None


def _id_value(text: str, after_key: int) -> int | str | None:
    rest = text[after_key : after_key + 400].lstrip()
    if not rest.startswith(":"):
        return None
    value = rest[1:].lstrip()
    if value.startswith('"'):
        match = _STRING.match(value)
        with contextlib.suppress(ValueError):
            return json.loads(match.group()) if match else None
        return None
    match = _NUMBER.match(value)
    return int(match.group()) if match else None


class BoundedStdin:
    """What `mcp.server.stdio.stdio_server(stdin=…)` iterates: the good lines of fd 0; a bad
    one is answered on `replies` (the server's write stream, set once serving) instead."""

    def __init__(self, fd: int, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.fd = fd
        self.limit = limit
        self.replies: Any = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        splitter = LineSplitter(self.limit)
        eof = False
        while not eof:
            chunk = await asyncio.to_thread(os.read, self.fd, _CHUNK)
            eof = not chunk
            for item in splitter.feed(chunk, eof=eof):
                result = item if isinstance(item, Refused) else checked(item)
                if isinstance(result, Refused):
                    await self._answer(result)
                elif result.strip():
                    yield result + "\n"

    async def _answer(self, refused: Refused) -> None:
        if self.replies is None:
            return
        with contextlib.suppress(Exception):  # the server is gone (closing): nobody to tell
            await self.replies.send(refused.reply())


class LineSplitter:
    """Lines of a byte stream fed chunk by chunk (without their newline), each at most
    `limit` bytes: a longer one becomes a `Refused` (its first bytes kept to find the
    request's id) and the rest of it is dropped as it arrives, never held."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self.held = bytearray()
        self.oversized = False

    def feed(self, chunk: bytes, *, eof: bool = False) -> list[bytes | Refused]:
        out: list[bytes | Refused] = []
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start : len(chunk) if end < 0 else end]
            if not self.oversized:
                self.held += piece
                if len(self.held) > self.limit:
                    self.oversized = True
                    del self.held[_ID_PREFIX:]
            if end < 0:
                break
            out.append(self._line())
            start = end + 1
        if eof and (self.held or self.oversized):
            out.append(self._line())
        return out

    def _line(self) -> bytes | Refused:
        line = _too_long(bytes(self.held), self.limit) if self.oversized else bytes(self.held)
        self.held.clear()
        self.oversized = False
        return line


@contextlib.contextmanager
def private_stdin() -> Iterator[int]:
    """A private copy of fd 0 for the protocol, with fd 0 itself on /dev/null meanwhile."""
    import fcntl

    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no stdin to copy (closed): read fd 0 as it is, which ends at once
        yield 0
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield wire
    finally:
        os.dup2(wire, 0)
        os.close(wire)
