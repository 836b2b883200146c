"""Ctrl-C for long operations: the first press stops gracefully, the second forces.

Lifecycle coroutines stop Terraform cleanly when their task is cancelled, and escalate to a
hard stop when cancelled again while stopping; this module maps key presses onto that.
asyncio is imported here, not at CLI import time, to keep `npa soperator validate` fast.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from npa_sop_tui.errors import Interrupted

T = TypeVar("T")

GRACEFUL = "interrupting: waiting for Terraform to stop cleanly (Ctrl-C again to force)"
FORCED = "forcing Terraform to stop; state may need repair"


def _to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def run_interruptible(
    coro_factory: Callable[[], Awaitable[T]],
    *,
    interrupted: str,
    hint: str | None = "run the same command again to converge",
    notify: Callable[[str], None] = _to_stderr,
    force: Callable[[], None] | None = None,
    graceful_message: str = GRACEFUL,
) -> T:
    """Run `coro_factory()` to completion; Ctrl-C cancels it, raising `Interrupted`.

    The second press calls `force` when given (e.g. a fleet runner that kills every
    target), else cancels the task again, which lifecycle coroutines treat as "force".
    """
    import asyncio
    import signal

    async def main() -> T:
        task = asyncio.ensure_future(coro_factory())
        presses = 0

        def on_sigint() -> None:
            nonlocal presses
            presses += 1
            if presses == 1:
                notify(graceful_message)
                task.cancel()
                return
            notify(FORCED)
            if force is not None:
                force()
            else:
                task.cancel()

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled():
                raise Interrupted(interrupted, hint=hint) from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    return asyncio.run(main())
