"""Signals and closed pipes for long operations.

- SIGINT (Ctrl-C), SIGTERM and SIGHUP all mean "stop": the first asks Terraform to stop
  gracefully (the lifecycle task is cancelled; the runner sends SIGINT to Terraform's process
  group and waits for it to save state), the operation is recorded `interrupted`, and the
  command exits 128 + the signal's number (130, 143, 129). A second signal forces the stop.
- Once the operation has finished, a late signal changes nothing: the result is already
  recorded, and the command prints it and exits with its code, even while the process is
  exiting (`signals_restored`, around a command called in-process, gives that caller its
  own handlers back afterwards).
- A closed stdout or stderr (`npa … --output json | head -c 200`) is not an error: the
  stream is swapped for /dev/null and the operation goes on; its events are still in the
  operation log.

asyncio is imported inside the function, not at CLI import time, to keep `npa soperator
validate` fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TextIO, TypeVar

from npa_sop_tui.errors import Interrupted

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACEFUL = "interrupting: waiting for Terraform to stop cleanly (Ctrl-C again to force)"
FORCED = "forcing Terraform to stop; state may need repair"


def _to_stderr(message: str) -> None:
    from npa_sop_tui.safe_text import safe_text

    sys.stderr.write(safe_text(message, keep_newlines=True) + "\n")
    sys.stderr.flush()


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def run_interruptible(
    coro_factory: Callable[[], Awaitable[T]],
    *,
    interrupted: str,
    hint: str | None = "run the same command again to converge",
    notify: Callable[[str], None] = _to_stderr,
    force: Callable[[], None] | None = None,
    graceful_message: str = GRACEFUL,
    final: bool = True,
) -> T:
    """Run `coro_factory()` to completion; a stop signal cancels it, raising `Interrupted`.

    The second signal calls `force` when given (e.g. a fleet runner that kills every
    target), else cancels the task again, which lifecycle coroutines treat as "force".
    `final`: this is the command's last operation, so signals that arrive after it finished
    are ignored until the process exits (they must not turn a recorded success into 130).
    """
    import asyncio

    received: list[int] = []

    async def main() -> T:
        task = asyncio.ensure_future(coro_factory())

        def on_signal(signum: int) -> None:
            received.append(signum)
            if len(received) == 1:
                name = _signal_name(signum)
                notify(
                    graceful_message if signum == signal.SIGINT else f"{name}: {graceful_message}"
                )
                task.cancel(msg=name)
                return
            notify(FORCED)
            if force is not None:
                force()
            else:
                task.cancel(msg=_signal_name(signum))

        # Python-level handlers, not loop.add_signal_handler: the loop would put the default
        # handlers back when it closes, and a late Ctrl-C would then kill a finished command.
        loop = asyncio.get_running_loop()
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():  # only there can we
            previous = {
                sig: signal.signal(sig, lambda n, _f: loop.call_soon_threadsafe(on_signal, n))
                for sig in STOP_SIGNALS
            }
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled():
                error = Interrupted(interrupted, hint=hint)
                error.exit_code = 128 + received[0] if received else error.exit_code
                raise error from None
            raise
        finally:
            for sig, handler in previous.items():
                # After the last operation a late signal is swallowed (a no-op handler, not
                # SIG_IGN: that would be inherited by every process started afterwards);
                # `signals_restored` puts the caller's handlers back when the command ends.
                signal.signal(sig, _swallow if final else handler)

    return asyncio.run(main())


def _swallow(_signum: int, _frame: object) -> None:
    """A stop signal after the command's last operation finished: nothing left to stop."""


def ignore_stops_until_exit() -> None:
    """The process's own command is over and starts nothing more: stop signals are ignored
    from here. A Python handler (`_swallow`) is not enough: the interpreter puts the default
    back while it finalizes, and a SIGTERM in that moment would end a recorded success by the
    signal (-15) instead of its exit code; an ignored signal stays ignored."""
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


@contextlib.contextmanager
def signals_restored() -> Iterator[None]:
    """Around one CLI command: whatever `run_interruptible` installs is undone afterwards, so
    an in-process caller (tests, embedders) keeps its own Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


# ---------------------------------------------------------------------------------------------
# Closed pipes


class _TolerantStream:
    """Wraps sys.stdout/sys.stderr: a broken pipe swaps the file descriptor for /dev/null
    instead of raising, so the operation (and its log) goes on."""

    def __init__(self, inner: TextIO, on_lost: Callable[[str], None] | None) -> None:
        self._inner = inner
        self._on_lost = on_lost
        self.lost = False

    def _lose(self) -> None:
        if self.lost:
            return
        self.lost = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._inner.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
        if self._on_lost is not None:
            self._on_lost(getattr(self._inner, "name", "stream"))

    def write(self, text: str) -> int:
        if self.lost:
            return len(text)
        try:
            return self._inner.write(text)
        except BrokenPipeError:
            self._lose()
            return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.lost:
            with contextlib.suppress(BrokenPipeError, ValueError):
                self._inner.flush()  # to /dev/null now: empties what the broken pipe kept
            return
        try:
            self._inner.flush()
        except BrokenPipeError:
            self._lose()
            self.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _stdout_lost(_name: str) -> None:
    err = sys.stderr
    if isinstance(err, _TolerantStream) and err.lost:
        return
    _to_stderr(
        "note: stdout was closed; the operation goes on and its events are kept in the "
        "operation log only (see `npa soperator list`)"
    )


def guard_std_streams() -> None:
    """Make the real stdout/stderr tolerant of a closed reader (idempotent; leaves streams
    that tests or embedders replaced alone)."""
    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        sys.stdout = _TolerantStream(sys.stdout, _stdout_lost)  # type: ignore[assignment]
    if sys.stderr is sys.__stderr__ and sys.stderr is not None:
        sys.stderr = _TolerantStream(sys.stderr, None)  # type: ignore[assignment]


def stdout_lost() -> bool:
    return isinstance(sys.stdout, _TolerantStream) and sys.stdout.lost
