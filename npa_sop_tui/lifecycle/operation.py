"""One operation's bookkeeping, on every exit path: lock, event log, inventory, final event.

    with operation("deploy", name, on_event, redactor) as op:
        ...                          # op.emit(...), op.phase(...), op.entry, op.applied
        op.message = "deployed …"

Entering takes the cluster's lock (refused at once when someone else holds it), settles what
a killed run left behind (recovery.py) and opens the redacted NDJSON event log. Leaving —
normally, by an error, or by cancellation — records the result (ok / failed / interrupted)
in the inventory, emits exactly one `OperationFinished` and releases the lock. Files the
operation must not leave changed (a plan's, or those of a deploy that ended before anything
was applied) are restored first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.errors import NpaError, OperationError
from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    OperationFinished,
    OperationKind,
    OperationStarted,
    PhaseChanged,
)
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.lifecycle import recovery
from npa_sop_tui.lifecycle.results import DestructivePlanError
from npa_sop_tui.redact import Redactor
from npa_sop_tui.terraform.runner import HeldLock

if TYPE_CHECKING:
    from npa_sop_tui.state.store import StateStore

# Expected warnings of the two-phase deploy; shown as info so they don't alarm anyone.
_EXPECTED = ("Resource targeting is in effect", "Applied changes may be incomplete")
_REDACTED_KINDS = ("log_line", "diagnostic", "outputs", "resource_failed")

Sink = Callable[[Event], None]


class Operation:
    def __init__(
        self,
        kind: OperationKind,
        name: str,
        on_event: Sink | None,
        redactor: Redactor,
        store: StateStore | None = None,
    ):
        self.kind = kind
        self.name = name
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.id = f"{kind}-{stamp}-{secrets.token_hex(3)}"
        self.redactor = redactor
        self.started = time.time()
        self.record = OperationRecord(id=self.id, kind=kind, started=self.started, pid=os.getpid())
        self.entry: InventoryEntry | None = None
        self.prev_state: str | None = None
        self.phases: list[str] = []
        self.message = ""
        self.applied = False  # a deploy that applied something keeps its new files
        self.rollback = Rollback()
        self.preflight: Any = None  # the cloud preflight's report, when it ran
        self.in_flight: dict[str, float] = {}  # resource → start time (timeouts say where)
        self._sinks: list[Sink] = [on_event] if on_event is not None else []
        # Records, logs and the lock live where the settings say: local, or the team's bucket.
        self.store = store if store is not None else _default_store()
        self._lock = self.store.lock(name, operation=kind)
        self._log: inventory.EventLog | None = None

    @property
    def duration(self) -> float:
        return time.time() - self.started

    @property
    def log_path(self) -> str | None:
        return self.record.log

    @property
    def lock(self) -> HeldLock:
        """Handed to each Terraform supervisor, so a Terraform outliving npa keeps it."""
        return self._lock

    # -- events ----------------------------------------------------------------------------

    def observe(self, sink: Sink | None) -> None:
        """Feed every later event to `sink` too (the environment's simulated cloud)."""
        if sink is not None:
            self._sinks.insert(0, sink)

    def emit(self, event: Event) -> None:
        if event.kind == "resource_started":
            self.in_flight[event.addr] = event.ts
        elif event.kind in ("resource_finished", "resource_failed"):
            self.in_flight.pop(event.addr, None)
        if isinstance(event, Diagnostic) and event.summary.startswith(_EXPECTED):
            event = event.model_copy(update={"severity": "info"})
        if event.kind in _REDACTED_KINDS:
            event = self.redactor.model(event)
        if self._log is not None:
            self._log.write(event.model_dump(mode="json"))
        for sink in self._sinks:
            sink(event)
        if event.kind.startswith("resource_"):
            from npa_sop_tui.lifecycle.apply_waits import wait_note

            said = wait_note(event)
            if said is not None:  # one of the recipe's three long waits: say until when
                self.note(said)

    def phase(self, phase: str, label: str) -> None:
        self.phases.append(phase)
        self.emit(PhaseChanged(operation_id=self.id, phase=phase, label=label))

    def note(self, text: str) -> None:
        self.emit(LogLine(operation_id=self.id, stream="npa", text=text))

    def warn(self, text: str) -> None:
        self.emit(Diagnostic(operation_id=self.id, severity="warning", summary=text))

    # -- records ---------------------------------------------------------------------------

    def save_entry(self) -> None:
        if self.entry is not None:
            self.entry.record(self.record)
            self.store.save(self.entry)

    def _start(self) -> None:
        # Raises ClusterBusy at once when someone else holds the lock; settles what a killed
        # run left behind and checks the free disk space.
        notes = recovery.begin(self._lock, self.name, self.store)
        try:
            from npa_sop_tui.state.bucket_lock import whoami

            self.record.user, self.record.host = whoami()
            self._log = self.store.event_log(self.name, self.id)
            self.record.log = str(self._log.path)
            self.entry = self.store.get(self.name)
            self.prev_state = self.entry.state if self.entry is not None else None
            self.emit(OperationStarted(operation_id=self.id, operation=self.kind, name=self.name))
            for note in notes:
                self.warn(note)
        except BaseException:
            self._lock.release()
            raise

    def _finish(self, exc: BaseException | None) -> None:
        # A failure of the bookkeeping itself (the lock was broken, the state bucket could not
        # be reached to record the result): reported in the final event, raised afterwards.
        own: NpaError | None = None
        try:
            if self.kind == "plan" or (exc is not None and not self.applied):
                # A plan changes nothing, not even local files; nor does a deploy that was
                # refused or failed before any apply. Once an apply started, the new files
                # describe the (partial) state and a re-run converges from them.
                self.rollback.restore()
            if exc is None and self._lock.lost:
                own = OperationError(self._lock.lost)
            failure = exc if exc is not None else own
            result, message = _outcome(failure, self.message)
            message = self.redactor.text(message)
            self.record.ended = time.time()
            self.record.result = result
            self.record.summary = message.splitlines()[0][:300] if message else result
            if self.entry is not None:
                self._settle_state(failure, result)
                try:
                    self.save_entry()
                except NpaError as unsaved:
                    result = "failed"
                    message = f"{message}\n{unsaved.message}" if failure else unsaved.message
                    own = own or (unsaved if exc is None else None)
            if (log_problem := recovery.log_warning(self._log)) is not None:
                self.warn(log_problem)
            self.phase("done", f"{self.kind} {result}")
            self.emit(
                OperationFinished(
                    operation_id=self.id, result=result, message=message, duration=self.duration
                )
            )
        finally:
            if self._log is not None:
                self._log.close()
            self._lock.release()
        if own is not None and exc is None:
            raise own

    def _settle_state(self, exc: BaseException | None, result: str) -> None:
        assert self.entry is not None
        if isinstance(exc, DestructivePlanError) and self.prev_state is not None:
            self.entry.state = self.prev_state  # type: ignore[assignment]  # nothing applied
        elif _degraded(exc):
            pass  # applied, a GPU check failed: `degraded-validation`, set by deploy, stands
        elif exc is not None and self.kind != "plan":
            self.entry.state = {  # type: ignore[assignment]
                "deploy": "interrupted" if result == "interrupted" else "failed",
                "destroy": "destroy-incomplete",
            }[self.kind]


def _degraded(exc: BaseException | None) -> bool:
    from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded

    return isinstance(exc, DeploymentDegraded)


def _outcome(
    exc: BaseException | None, message: str
) -> tuple[Literal["ok", "failed", "interrupted"], str]:
    if exc is None:
        return "ok", message
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        # The CLI cancels with the signal's name (cli/interrupts.py).
        return "interrupted", f"interrupted by {exc.args[0] if exc.args else 'the user'}"
    if isinstance(exc, NpaError):
        return "failed", exc.message
    # the text as raised, not its repr: repr escapes quotes and backslashes, and a secret
    # spelled differently would pass the redactor
    return "failed", f"internal error: {type(exc).__name__}: {exc}"


@contextlib.contextmanager
def operation(
    kind: OperationKind,
    name: str,
    on_event: Sink | None,
    redactor: Redactor,
    store: StateStore | None = None,
) -> Iterator[Operation]:
    """Run one operation's body with its bookkeeping (see the module docstring)."""
    op = Operation(kind, name, on_event, redactor, store)
    op._start()
    exc: BaseException | None = None
    try:
        yield op
    except BaseException as caught:
        exc = recovery.translate_error(caught)  # a raw "no space left" becomes DiskFull
        if exc is not caught:
            raise exc from None
        raise
    finally:
        op._finish(exc)


def _default_store() -> StateStore:
    from npa_sop_tui.state.stores import default_store

    return default_store()


class Rollback:
    """Files that must be left as they were unless the operation applied something: the
    installation's variables and the spec of the last deploy. Otherwise a refused or failed
    run would leave files describing a cluster that was never applied (and a later apply or
    destroy in the installation would use them).

    Only files that existed are restored; a first run's new files stay (destroy needs them).
    """

    def __init__(self) -> None:
        self._saved: dict[Path, tuple[bytes, int]] = {}

    def keep(self, *paths: Path) -> None:
        for path in paths:
            if path in self._saved:
                continue
            try:
                self._saved[path] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
            except OSError:
                continue  # nothing there yet (or unreadable): nothing to restore

    def restore(self) -> None:
        from npa_sop_tui.home.fsutil import atomic_write_bytes

        for path, (data, mode) in self._saved.items():
            with contextlib.suppress(OSError):
                if path.read_bytes() == data:
                    continue
            with contextlib.suppress(OSError):
                atomic_write_bytes(path, data, mode=mode)
