"""Wait for a condition with a deadline instead of sleeping a fixed time.

A fixed sleep is either too short on a loaded machine (the test flakes) or too long on an idle
one (the suite drags). These return as soon as the condition holds and fail with what was
awaited once the deadline passes. Deadlines are generous: they only matter when it fails.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

Check = Callable[[], Any]
T = TypeVar("T")


async def eventually(
    check: Check,
    *,
    timeout: float = 30.0,
    what: str = "",
    pause: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    interval: float = 0.05,
) -> None:
    """Poll `check()` (sync or async) until it is truthy; `AssertionError` after `timeout` s.

    `pause` lets the event loop run between polls (a Textual Pilot passes `pilot.pause`).
    """
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or check}")
        await pause(interval)


def wait_until(
    check: Check, *, timeout: float = 30.0, what: str = "", interval: float = 0.05
) -> None:
    """The same for code outside an event loop (subprocesses, servers in threads)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or check}")
        time.sleep(interval)


async def within(
    stream: AsyncIterator[T], *, timeout: float = 60.0, what: str = "the stream"
) -> AsyncIterator[T]:
    """The items of an endless stream (status snapshots), until the consumer breaks out or
    `timeout` s pass: then `AssertionError` naming what was awaited, so a broken verdict
    fails the test instead of looping forever."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            # in this task (no wait_for): the stream may hold context tied to its task
            async with asyncio.timeout(max(left, 0.001)):
                item = await anext(stream)
        except TimeoutError:
            raise AssertionError(f"timed out after {timeout:g}s reading {what}") from None
        except StopAsyncIteration:
            return
        yield item
