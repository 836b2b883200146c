"""One operation per cluster at a time: an flock on `~/.npa/soperator/<name>/.lock`.

flock is released by the kernel when the last holder of the open file dies, so a crashed run
never leaves a stale lock behind. The file's content, the holder record, only names who holds
it: npa's pid and process start time, and, while Terraform runs, the pid and start time of
its supervisor, which inherits the lock. A Terraform that outlives a killed npa therefore
keeps the cluster locked until it has saved state and exited, and the next command says
exactly that instead of failing on Terraform's own state lock. Pid plus start time tells a
live process from a recycled pid.
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
from npa_sop_tui.home.files import HomeRefused, open_private
from npa_sop_tui.home.paths import cluster_dir


def process_start(pid: int) -> int | None:
    """The start time of `pid` in clock ticks since boot (Linux), or None if unknown/gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of the whole line
    except (IndexError, ValueError):
        return None


def process_alive(pid: object, start: object = None) -> bool:
    """True if `pid` runs and, when `start` is known, is the same process that was recorded."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    if isinstance(start, int):
        now = process_start(pid)
        return now is None or now == start
    return True


def _when(stamp: object) -> str:
    if not isinstance(stamp, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(stamp)))


class ClusterBusy(UsageError):
    """Another operation holds the cluster's lock (or Terraform left running by one)."""

    def __init__(
        self, name: str, holder: dict[str, object] | None, path: Path | None = None
    ) -> None:
        message, hint = _describe(name, holder, path)
        super().__init__(message, hint=hint)
        self.holder = holder or {}

    def json_extra(self) -> dict[str, object]:
        return {"holder": self.holder}


def _describe(name: str, holder: dict[str, object] | None, path: Path | None) -> tuple[str, str]:
    wait = "wait for that operation to finish (or interrupt it), then try again"
    if not holder:
        return f"cluster {name!r} is busy: another npa process holds its lock", wait
    op = holder.get("operation", "an operation")
    pid = holder.get("pid")
    if holder.get("host"):  # a lock held in the team's bucket names the person and machine
        who = f"{holder.get('user', '?')}@{holder.get('host')} (pid {pid})"
        since = _when(holder.get("started"))
        return (
            f"cluster {name!r} is busy: {op} by {who} ({holder.get('command', '?')}) since {since}",
            wait,
        )
    who = f"{op} by pid {pid} ({holder.get('command', '?')}) since {_when(holder.get('started'))}"
    tf = holder.get("terraform")
    tf = tf if isinstance(tf, dict) else None
    tf_alive = tf is not None and process_alive(tf.get("pid"), tf.get("pid_start"))
    if process_alive(pid, holder.get("pid_start")):
        running = f"; Terraform runs for it (pid {tf.get('pid')})" if tf and tf_alive else ""
        return f"cluster {name!r} is busy: {who}{running}", wait
    if tf is not None and tf_alive:
        args = " ".join(str(a) for a in tf.get("args") or [])[:80]
        return (
            f"cluster {name!r} is busy: Terraform (supervisor pid {tf.get('pid')}, "
            f"`terraform {args}`, since {_when(tf.get('since'))}) is still running for "
            f"{who}, and that npa process is gone (killed or crashed); Terraform was told to "
            "stop gracefully and holds the cluster until it has saved its state",
            f"wait until pid {tf.get('pid')} has exited (usually seconds), then run the command "
            f"again; `kill -TERM {tf.get('pid')}` repeats the stop request if it lingers",
        )
    where = f" {path}" if path else ""
    return (
        f"cluster {name!r} is busy: its lock{where} is held, but the recorded holder ({who}) "
        "is gone; another process has inherited the lock file",
        f"`fuser -v{where}` names that process; stop it, then try again",
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
        self._record: dict[str, object] = {}
        self.lost: str | None = None  # a flock cannot be taken away while held

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> ClusterLock:
        """Take the lock now, or raise `ClusterBusy` naming the holder; never waits."""
        # O_NOFOLLOW: a planted `.lock` symlink is refused, never truncated through
        fd = open_private(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise ClusterBusy(self.name, holder, self.path) from None
        self._fd = fd
        self._record = {
            "pid": os.getpid(),
            "pid_start": process_start(os.getpid()),
            "operation": self.operation,
            "command": holder_command(sys.argv),
            "started": time.time(),
            "terraform": None,
        }
        self._write_record()
        return self

    def _write_record(self) -> None:
        if self._fd is None:
            return
        data = json.dumps(self._record).encode()
        with contextlib.suppress(OSError):  # the record is informative; the flock is the lock
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)

    def fileno(self) -> int:
        if self._fd is None:
            raise RuntimeError(f"the lock of {self.name!r} is not held")
        return self._fd

    def note_child(self, pid: int, args: list[str]) -> None:
        """Record the Terraform supervisor that now shares the lock."""
        self._record["terraform"] = {
            "pid": pid,
            "pid_start": process_start(pid),
            "args": [a for a in args if not a.startswith("-var")][:6],
            "since": time.time(),
        }
        self._write_record()

    def clear_child(self) -> None:
        if self._record.get("terraform") is not None:
            self._record["terraform"] = None
            self._write_record()

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
    try:
        fd = open_private(path, os.O_RDONLY)
    except (FileNotFoundError, HomeRefused):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our probe lock too
    return False
