"""One operation per cluster at a time: an flock on `~/.npa/soperator/<name>/.lock`.

flock is released by the kernel when the process dies, so a crashed run never leaves a stale
lock behind; the holder record beside it is only there to name who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from npa_sop_tui.errors import UsageError
from npa_sop_tui.paths import cluster_dir


class ClusterBusy(UsageError):
    """Another operation holds the cluster's lock."""

    def __init__(self, name: str, holder: dict[str, object] | None) -> None:
        who = _describe(holder)
        super().__init__(
            f"cluster {name!r} is busy: {who}",
            hint="wait for that operation to finish (or interrupt it), then try again",
        )
        self.holder = holder or {}

    def json_extra(self) -> dict[str, object]:
        return {"holder": self.holder}


def _describe(holder: dict[str, object] | None) -> str:
    if not holder:
        return "another npa process holds its lock"
    started = holder.get("started")
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(started)))
        if isinstance(started, int | float)
        else "?"
    )
    who = f"pid {holder.get('pid')}"
    if holder.get("host"):  # a lock held in the team's bucket names the person and machine
        who = f"{holder.get('user', '?')}@{holder.get('host')} (pid {holder.get('pid')})"
    return (
        f"{holder.get('operation', 'an operation')} by {who} "
        f"({holder.get('command', '?')}) since {when}"
    )


# Flags whose values are secrets: the holder record is shown to whoever hits the lock.
_SECRET_FLAGS = ("--capacity-block-group",)


def holder_command(argv: list[str]) -> str:
    """The command line for the holder record, with secret flag values masked."""
    from npa_sop_tui.redact import MASK, Redactor

    parts: list[str] = []
    mask_next = False
    for i, arg in enumerate(argv):
        if i == 0:
            parts.append(Path(arg).name)
            continue
        flag, sep, value = arg.partition("=")
        if mask_next:
            pool, eq, _ = arg.partition("=")
            arg, mask_next = (f"{pool}={MASK}" if eq else MASK), False
        elif arg in _SECRET_FLAGS:
            mask_next = True
        elif sep and flag in _SECRET_FLAGS:
            pool, eq, _ = value.partition("=")
            arg = f"{flag}={pool}={MASK}" if eq else f"{flag}={MASK}"
        parts.append(arg)
    return Redactor().text(" ".join(parts))[:200]


class ClusterLock:
    """Non-blocking exclusive lock; use as a context manager or acquire()/release()."""

    def __init__(self, name: str, *, operation: str) -> None:
        self.name = name
        self.operation = operation
        self.path = cluster_dir(name) / ".lock"
        self._fd: int | None = None
        self.lost: str | None = None  # a flock cannot be taken away while held

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> ClusterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise ClusterBusy(self.name, holder) from None
        record = {
            "pid": os.getpid(),
            "operation": self.operation,
            "command": holder_command(sys.argv),
            "started": time.time(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> ClusterLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, object] | None:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode() or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_locked(name: str) -> bool:
    """True if some process currently holds the cluster's lock (used by tests and `list`)."""
    path = cluster_dir(name) / ".lock"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our probe lock too
    return False
