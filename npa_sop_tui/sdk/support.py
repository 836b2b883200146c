"""Plumbing of the Python SDK (`npa_sop_tui.sdk.soperator`): call options and environments, the
callback adapters (`on_event`, npa's `on_status`), npa's `work_root`, running async calls
from sync code, the event-stream iterator and the inventory listing."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.events import Event, describe, is_milestone
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle.api import LifecycleOptions

EventCallback = Callable[[Event], None]
StatusCallback = Callable[[str], None]
T = TypeVar("T")


class EventLoopRunning(UsageError, RuntimeError):
    """A synchronous SDK call was made from inside a running asyncio event loop."""


@contextlib.asynccontextmanager
async def _options(
    options: LifecycleOptions | None,
    *,
    terraform_dir: str | os.PathLike[str] | None,
    sandbox: bool | None,
    identity: Any,
    env: Mapping[str, str] | None,
    parallelism: int | None,
    capacity: Mapping[str, str] | None,
) -> AsyncIterator[LifecycleOptions]:
    """The call's options: keyword arguments override an explicit `LifecycleOptions`, and an
    environment (real, or the sandbox with `sandbox=True`) is opened for the call."""
    import dataclasses

    from npa_sop_tui.environment_choice import open_environment

    base = options or LifecycleOptions()
    changes: dict[str, Any] = {}
    if terraform_dir is not None:
        changes["terraform_dir"] = Path(terraform_dir)
    if identity is not None:
        changes["identity"] = identity
    if env is not None:
        changes["env"] = {**base.env, **dict(env)}
    if parallelism is not None:
        changes["parallelism"] = parallelism
    if capacity is not None:
        changes["capacity"] = dict(capacity)
    owned = None
    if base.environment is None or (sandbox is not None and base.environment.is_sandbox != sandbox):
        owned = changes["environment"] = open_environment(sandbox=bool(sandbox))
    try:
        yield dataclasses.replace(base, **changes)
    finally:
        if owned is not None:
            await owned.aclose()


def _sink(
    on_event: EventCallback | None,
    on_status: StatusCallback | None,
    stream_terraform_output: bool = False,
) -> EventCallback | None:
    """One callback for both styles; `on_status` (the anchor's) gets one line per milestone
    event, and with `stream_terraform_output` also each Terraform output line."""
    if on_status is None:
        return on_event
    from npa_sop_tui.events import LogLine

    def both(event: Event) -> None:
        if on_event is not None:
            on_event(event)
        if stream_terraform_output and isinstance(event, LogLine) and event.stream == "terraform":
            on_status(event.text)
            return
        line = describe_event(event)
        if line:
            on_status(line)

    return both


@contextlib.contextmanager
def _work_root(work_root: str | os.PathLike[str] | None) -> Any:
    """npa's `work_root` (its `~/.npa/soperator`): here the npa home for the call, so the
    recipe cache, installations and inventory all live under it. It is process-wide: run
    calls with different work roots one after the other, not concurrently."""
    if work_root is None:
        yield
        return
    from npa_sop_tui.home import paths

    saved = os.environ.get(paths.NPA_HOME_ENV)
    os.environ[paths.NPA_HOME_ENV] = str(Path(work_root).expanduser())
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(paths.NPA_HOME_ENV, None)
        else:
            os.environ[paths.NPA_HOME_ENV] = saved


def describe_event(event: Event) -> str:
    """One line for a milestone event (`events.describe`'s headline); empty for noise such
    as progress ticks and log lines (see `events.is_milestone`)."""
    return describe(event, detail=False) if is_milestone(event) else ""


def _run(coro: Coroutine[Any, Any, T], async_name: str) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise EventLoopRunning(
        "this synchronous SDK call cannot run inside a running asyncio event loop",
        hint=f"use `await soperator.{async_name}(...)` (or the matching *_events iterator)",
    )


class OperationStream:
    """`async for event in stream` yields the operation's events in order; afterwards
    `stream.result` is the typed result, or the operation's error is raised at the end of
    the iteration. Leaving the loop early (break, cancel) interrupts the operation."""

    def __init__(self, start: Callable[[EventCallback], Awaitable[Any]]) -> None:
        self._start = start
        self._result: Any = None
        self._done = False

    @property
    def result(self) -> Any:
        if not self._done:
            raise UsageError("the operation has not finished; iterate the stream to the end")
        return self._result

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.ensure_future(self._start(queue.put_nowait))
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
            self._result = task.result()
            self._done = True
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, NpaError):
                    await task


def list_clusters(*, sandbox: bool = False) -> builtins.list[InventoryEntry]:
    """Clusters in the local inventory (the sandbox's with `sandbox=True`), with state and
    last operation."""
    from npa_sop_tui.home import files as home_files
    from npa_sop_tui.lifecycle import api as lifecycle

    if not sandbox:
        return lifecycle.list_clusters()
    with home_files.SandboxHomeEntered():
        return lifecycle.list_clusters()


def require_sandbox_cluster(name: str) -> None:
    """The sandbox only has the clusters it deployed: an unknown name is bad input."""
    known = [entry.name for entry in list_clusters(sandbox=True)]
    if name not in known:
        raise UsageError(
            f"no sandbox cluster named {name!r}",
            hint=f"deploy it with sandbox=True first; known: {', '.join(known) or 'none'}",
        )
