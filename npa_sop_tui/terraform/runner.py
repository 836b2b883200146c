"""The async runner over Terraform's `-json` machine UI (binary discovery: binary.py).

The runner turns Terraform's JSON lines into `events` models (json_ui.py) and keeps only
counters and bounded buffers, so a multi-hour apply does not grow memory. Every command runs
under the supervisor (supervision.py), which keeps Terraform alive and drained until it has
saved its state even if npa dies. Cancelling the task that awaits `TerraformRunner.run`
interrupts Terraform the way a terminal Ctrl-C would: SIGINT to its process group
(Terraform 1.0 runs under panicwrap, so signalling only the PID we started is ignored). A
second cancel while Terraform shuts down kills the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from npa_sop_tui.events import Diagnostic, Event
from npa_sop_tui.terraform import supervision
from npa_sop_tui.terraform.binary import (  # re-exported: callers import them from here
    TerraformBinary,
    clean_env,
    find_terraform,
    parse_version,
    required_version,
    satisfies,
    terraform_environment,
)
from npa_sop_tui.terraform.json_ui import JsonUiReading
from npa_sop_tui.terraform.run_result import RunResult, first_error_block

__all__ = [
    "RunResult",
    "TerraformBinary",
    "TerraformRunner",
    "clean_env",
    "find_terraform",
    "first_error_block",
    "parse_version",
    "required_version",
    "satisfies",
    "terraform_environment",
]

log = logging.getLogger(__name__)


class HeldLock(Protocol):
    """The cluster lock as the runner sees it: handed to the supervisor, told its pid."""

    def fileno(self) -> int: ...

    def note_child(self, pid: int, args: list[str]) -> None: ...

    def clear_child(self) -> None: ...


class TerraformRunner(JsonUiReading):
    """Runs one Terraform command at a time for one operation, emitting events.

    `lock` (the cluster lock) is inherited by each supervisor, so a Terraform that outlives
    npa keeps the cluster locked until it has exited, and the lock's holder record names it.
    """

    def __init__(
        self,
        binary: str,
        *,
        operation_id: str,
        on_event: Callable[[Event], None],
        env: Mapping[str, str] | None = None,
        text_filter: Callable[[str], str] = lambda s: s,
        lock: HeldLock | None = None,
    ) -> None:
        self.binary = binary
        self.operation_id = operation_id
        self._emit = on_event
        self._env = clean_env(env or {})
        self._filter = text_filter
        self._lock = lock
        self._in_flight: dict[str, float] = {}
        self._created: set[str] = set()  # real addresses created in the current command

    async def _spawn(self, args: Sequence[str], cwd: Path) -> supervision.Supervised:
        lock = self._lock
        return await supervision.spawn(
            self.binary,
            args,
            cwd=cwd,
            env=self._env,
            spool=supervision.spool_path(cwd, self.operation_id),
            hold_fds=(lock.fileno(),) if lock is not None else (),
            on_spawn=lock.note_child if lock is not None else None,
        )

    def _spawned_done(self) -> None:
        if self._lock is not None:
            self._lock.clear_child()

    async def run(self, args: Sequence[str], *, cwd: Path, json_ui: bool = True) -> RunResult:
        """Run `terraform <args>` in `cwd`; cancel the awaiting task to interrupt it."""
        started = time.monotonic()
        result = RunResult(args=list(args), returncode=-1, duration=0.0)
        log.debug("terraform %s (in %s)", " ".join(args), cwd)
        proc = await self._spawn(args, cwd)
        out_task = asyncio.create_task(self._pump_stdout(proc.stdout, result, json_ui))
        err_task = asyncio.create_task(self._pump_stderr(proc.stderr, result))
        pumps = asyncio.gather(out_task, err_task)
        try:
            await asyncio.shield(pumps)
            result.returncode = await proc.wait()
        except asyncio.CancelledError:
            await self._interrupt(proc, pumps, result)
            raise
        finally:
            result.duration = time.monotonic() - started
            self._in_flight.clear()
            self._created.clear()
            self._spawned_done()
            log.debug(
                "terraform %s: exit %s after %.1fs%s",
                args[0] if args else "",
                result.returncode,
                result.duration,
                " (interrupted)" if result.interrupted else "",
            )
        return result

    async def capture(self, args: Sequence[str], *, cwd: Path) -> tuple[int, str, str]:
        """Run a short command whose stdout we need whole (show -json, state list, output)."""
        proc = await self._spawn(args, cwd)
        # Not communicate(): it would close stdin, the supervisor's lifeline.
        reads = asyncio.gather(proc.stdout.read(), proc.stderr.read())
        try:
            out, err = await asyncio.shield(reads)
            code = await proc.wait()
        except asyncio.CancelledError:
            proc.kill()  # read-only commands: nothing to save
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(proc.wait())
            raise
        finally:
            self._spawned_done()
        return code, out.decode(errors="replace"), err.decode(errors="replace")

    async def _interrupt(
        self, proc: supervision.Supervised, pumps: asyncio.Future[Any], result: RunResult
    ) -> None:
        result.interrupted = True
        self._log("npa", "interrupt: asking Terraform to stop gracefully (SIGINT)")
        proc.interrupt()
        try:
            await asyncio.shield(pumps)
            result.returncode = await proc.wait()
        except asyncio.CancelledError:
            result.killed = True
            self._emit(
                Diagnostic(
                    operation_id=self.operation_id,
                    severity="warning",
                    summary="Terraform was killed before it could stop cleanly",
                    detail=(
                        "A second interrupt forced Terraform to stop. Resources that were being "
                        "changed may be missing from state or locked; run `terraform state list` "
                        "in the installation folder and deploy again to converge, or repair "
                        "state by hand."
                    ),
                )
            )
            proc.kill()
            # The kill is immediate; this wait cannot hang, so it is safe to finish it.
            with contextlib.suppress(asyncio.CancelledError):
                result.returncode = await asyncio.shield(proc.wait())
                await asyncio.shield(pumps)

    async def _pump_stderr(self, stream: asyncio.StreamReader, result: RunResult) -> None:
        async for raw in stream:
            line = self._filter(raw.decode(errors="replace").rstrip())
            if line:
                result.log_tail.append(line)
                self._log("stderr", line)

    async def _pump_stdout(
        self, stream: asyncio.StreamReader, result: RunResult, json_ui: bool
    ) -> None:
        async for raw in stream:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            message: Any = None
            if json_ui and line.startswith("{"):
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
            if isinstance(message, dict):
                self._handle(message, result)
            else:
                text = self._filter(line)
                result.log_tail.append(text)
                self._log("stdout", text)
