"""A cluster lock held in the team's bucket, so two machines never run on one cluster at once.

Taking it is a conditional create (`If-None-Match: *`) of `<prefix>/<cluster>/npa.lock`, a
small JSON record: who (user, host, pid, command), which operation, since when, until when
(the lease), and a random token of this holder's. Exactly one creator wins; everyone else is
refused at once with the holder's name.

Every write is idempotent through that token: the S3 client retries a request whose reply
was lost, and a retry of a write that did land meets its own object (412). A refused write is
therefore read back first, and when the lock holds our token the write is ours and done.

While the operation runs a thread renews the lease every third of it with a write conditioned
on the lock's current ETag (`If-Match`), so a renewal can never overwrite a lock someone else
took. A holder that dies (killed, machine gone) stops renewing; once its lease has run out —
judged by the bucket's own clock, so laptops' clocks do not matter — the next operator takes
the lock over, again with `If-Match`, so only one of several can. `break_lock` (`unlock`)
removes a lock at once, conditioned on the ETag it showed.

The local flock (locks.py) is taken first as well, so two runs on one machine are refused
without a round trip.
"""

from __future__ import annotations

import contextlib
import email.utils
import getpass
import json
import os
import secrets
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.locks import ClusterBusy, ClusterLock, holder_command
from npa_sop_tui.state.bucket import Bucket, ConditionFailed
from npa_sop_tui.state.location import StateLocation


def whoami() -> tuple[str, str]:
    """(user, host) as shown to the team."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return user, socket.gethostname()


@dataclass
class CurrentLock:
    holder: dict[str, Any]
    etag: str
    expired: bool


def read_lock(bucket: Bucket, key: str) -> CurrentLock | None:
    found = bucket.get(key)
    if found is None:
        return None
    body, response = found
    try:
        holder = json.loads(body)
    except ValueError:
        holder = {}
    if not isinstance(holder, dict):
        holder = {}
    return CurrentLock(holder, str(response.get("ETag", "")), _expired(holder, response))


def _expired(holder: dict[str, Any], response: dict[str, Any]) -> bool:
    """Whether the lease ran out, by the bucket's clock: last write + lease < the bucket's now."""
    lease = holder.get("lease_seconds")
    written = response.get("LastModified")
    date = response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if not isinstance(lease, int | float) or written is None:
        return False  # not a lock npa wrote: never taken over, only broken by hand
    try:
        now = email.utils.parsedate_to_datetime(date).timestamp() if date else time.time()
    except (TypeError, ValueError):
        now = time.time()
    return now > written.timestamp() + float(lease)


class BucketLock:
    def __init__(
        self, bucket: Bucket, key: str, name: str, operation: str, location: StateLocation
    ) -> None:
        self.bucket = bucket
        self.key = key
        self.name = name
        self.operation = operation
        self.lease = location.lease_seconds
        self.etag: str | None = None
        self.lost: str | None = None
        self.renew_error: str | None = None
        user, host = whoami()
        self.holder: dict[str, Any] = {
            "user": user,
            "host": host,
            "pid": os.getpid(),
            "operation": operation,
            "command": holder_command(sys.argv),
            "started": time.time(),
            "lease_seconds": self.lease,
            "token": secrets.token_hex(8),
        }
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()

    def _body(self) -> bytes:
        record = dict(self.holder, expires=time.time() + self.lease)
        return json.dumps(record, indent=2).encode()

    def _landed(self, current: CurrentLock | None) -> bool:
        """Whether `current` is a write of ours (a retried request whose first try landed):
        then it is done, and its ETag is the one to hold."""
        if current is None or current.holder.get("token") != self.holder["token"]:
            return False
        self.etag = current.etag
        return True

    def acquire(self) -> BucketLock:
        try:
            self.etag = self.bucket.put(self.key, self._body(), if_none_match=True)
        except ConditionFailed:
            self._take_over_expired()
        self._thread = threading.Thread(
            target=self._renew_loop, name=f"npa-lock-{self.name}", daemon=True
        )
        self._thread.start()
        return self

    def _take_over_expired(self) -> None:
        current = read_lock(self.bucket, self.key)
        if self._landed(current):
            return
        if current is None:  # released in between: try once more from scratch
            try:
                self.etag = self.bucket.put(self.key, self._body(), if_none_match=True)
                return
            except ConditionFailed:
                current = read_lock(self.bucket, self.key)
                if self._landed(current):
                    return
        if current is None or not current.expired:
            raise ClusterBusy(self.name, current.holder if current else None)
        # Named in the record the take-over writes, so the team sees whose lock it replaced
        # at once (not only after the first renewal).
        self.holder["took_over"] = {
            k: current.holder.get(k) for k in ("user", "host", "pid", "operation", "started")
        }
        try:
            self.etag = self.bucket.put(self.key, self._body(), if_match=current.etag)
        except ConditionFailed:  # another operator took it over first, or our retry did
            latest = read_lock(self.bucket, self.key)
            if self._landed(latest):
                return
            raise ClusterBusy(self.name, latest.holder if latest else current.holder) from None

    def _renew_loop(self) -> None:
        interval = max(0.5, self.lease / 3)
        while not self._stop.wait(interval):
            with self._mutex:
                if self.etag is None or self.lost:
                    return
                try:
                    self.etag = self.bucket.put(self.key, self._body(), if_match=self.etag)
                    self.renew_error = None
                except ConditionFailed:
                    if self._renewal_landed():
                        continue
                    self.lost = (
                        f"the lock on {self.name!r} was broken or taken over while this "
                        "operation ran (`npa soperator unlock`?)"
                    )
                    return
                except Exception as exc:  # unreachable: keep trying until the lease runs out
                    self.renew_error = str(exc)

    def _renewal_landed(self) -> bool:
        try:
            return self._landed(read_lock(self.bucket, self.key))
        except Exception as exc:  # unreachable: judge it on the next renewal
            self.renew_error = str(exc)
            return True

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._mutex:
            etag, self.etag = self.etag, None
        if etag is None or self.lost:
            return
        # Conditioned on our ETag: a lock someone else took over is never removed. When the
        # bucket cannot be reached the lease simply runs out.
        with contextlib.suppress(Exception):
            self.bucket.delete(self.key, if_match=etag)


class TeamLock:
    """This machine's flock, then the bucket's lock; released the other way round. A bucket
    not yet known to honour conditional writes is checked in between (bucket_checks.py):
    the lock means nothing on a store that ignores them."""

    def __init__(
        self, bucket: Bucket, key: str, name: str, operation: str, location: StateLocation
    ) -> None:
        self.local = ClusterLock(name, operation=operation)
        self.remote = BucketLock(bucket, key, name, operation, location)

    @property
    def lost(self) -> str | None:
        return self.remote.lost

    @property
    def held(self) -> bool:
        return self.local.held

    def acquire(self) -> TeamLock:
        from npa_sop_tui.state.bucket_checks import ensure_conditional_writes

        self.local.acquire()
        try:
            ensure_conditional_writes(self.remote.bucket)
            self.remote.acquire()
        except BaseException:
            self.local.release()
            raise
        return self

    def release(self) -> None:
        try:
            self.remote.release()
        finally:
            self.local.release()

    # The Terraform supervisor inherits this machine's flock (terraform/runner.py HeldLock).
    def fileno(self) -> int:
        return self.local.fileno()

    def note_child(self, pid: int, args: list[str]) -> None:
        self.local.note_child(pid, args)

    def clear_child(self) -> None:
        self.local.clear_child()


def break_lock(
    bucket: Bucket, key: str, name: str, expected: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Remove the lock now; the holder it broke. `expected`: only if it is still that one."""
    current = read_lock(bucket, key)
    if current is None:
        raise UsageError(f"cluster {name!r} is not locked", hint="nothing to unlock")
    if expected is not None and current.holder.get("token") != expected.get("token"):
        raise UsageError(
            f"the lock on {name!r} changed since it was shown (another operation took it)",
            hint="run unlock again to see who holds it now",
        )
    try:
        bucket.delete(key, if_match=current.etag)
    except ConditionFailed:
        raise UsageError(
            f"the lock on {name!r} changed while it was being broken",
            hint="run unlock again to see who holds it now",
        ) from None
    return dict(current.holder, expired=current.expired)
