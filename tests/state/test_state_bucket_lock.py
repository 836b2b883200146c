"""state/bucket_lock.py: the team lock's record, lease arithmetic, take-over and unlock,
against a real S3 API (moto's S3 served on 127.0.0.1 from a thread of this process). The slow
lease/kill scenarios are in test_state_bucket.py; these pin each rule on its own, fast.

The mutation run judges bucket_lock.py by this file alone, forking a fresh pytest per mutant:
a `moto_server` child would cost seconds of start-up per mutant, the in-process one nothing
(moto is imported here, before the fork). Waits end early when the lock shows it went wrong
(lost, renewal stopped), so a broken rule fails in a second, not at the deadline."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from moto import server as _moto_server  # noqa: F401  # imported before the mutation run's fork

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.locks import ClusterBusy, ClusterLock
from npa_sop_tui.state import bucket_lock as bl
from npa_sop_tui.state.bucket import Bucket, ConditionFailed
from npa_sop_tui.state.bucket_lock import BucketLock, TeamLock, break_lock, read_lock
from npa_sop_tui.state.location import StateLocation
from npa_sop_tui.state.s3 import S3Store
from npa_sop_tui.state.stores import store_at

from testkit.moto import InProcessMoto, MotoServer
from testkit.s3_proxy import ReplyDroppingProxy
from testkit.wait import wait_until


@pytest.fixture(scope="module", name="moto")
def in_process_moto() -> Iterator[MotoServer]:
    """The S3 API for this file's `bucket_env` (conftest's `moto`, served in-process)."""
    server = InProcessMoto().start()
    try:
        yield server
    finally:
        server.stop()


def _store(env: dict[str, str], lease: float = 120.0, endpoint: str | None = None) -> S3Store:
    store = store_at(
        StateLocation(
            backend="s3",
            bucket=env["NPA_STATE_BUCKET"],
            endpoint=endpoint or env["NPA_STATE_ENDPOINT"],
            region=env["NPA_STATE_REGION"],
            lease_seconds=lease,
        )
    )
    assert isinstance(store, S3Store)
    return store


def _lock(store: S3Store, name: str = "c1", operation: str = "deploy") -> BucketLock:
    return BucketLock(store.bucket, store.location.key(name, "npa.lock"), name, operation,
                      store.location)  # fmt: skip


def _plant(store: S3Store, name: str, holder: Any) -> str:
    key = store.location.key(name, "npa.lock")
    body = holder if isinstance(holder, bytes) else json.dumps(holder).encode()
    return store.bucket.put(key, body)


# -- the lease, by the bucket's clock -----------------------------------------------------


def _response(written: float | None, date: str | None) -> dict[str, Any]:
    response: dict[str, Any] = {"ResponseMetadata": {"HTTPHeaders": {}}}
    if written is not None:
        response["LastModified"] = datetime.fromtimestamp(written, UTC)
    if date is not None:
        response["ResponseMetadata"]["HTTPHeaders"]["date"] = date
    return response


def _http_date(ts: float) -> str:
    import email.utils

    return email.utils.formatdate(ts, usegmt=True)


def test_expiry_is_judged_by_the_buckets_date_header_not_this_machines_clock() -> None:
    """Protects "laptops' clocks do not matter": written at 1000 with a 60 s lease, the
    bucket's Date header decides (expired one second after 1060, not at 1060 itself)."""
    holder = {"lease_seconds": 60}
    assert bl._expired(holder, _response(1000, _http_date(1061))) is True
    assert bl._expired(holder, _response(1000, _http_date(1060))) is False
    assert bl._expired(holder, _response(1000, _http_date(1059))) is False
    # the local clock (now, years after 1060) is not consulted when the bucket sent a date
    assert bl._expired({"lease_seconds": 60.5}, _response(1000, _http_date(1060))) is False


def test_without_a_date_header_or_with_a_bad_one_the_local_clock_decides() -> None:
    now = time.time()
    holder = {"lease_seconds": 60}
    assert bl._expired(holder, _response(now - 3600, None)) is True
    assert bl._expired(holder, _response(now - 10, None)) is False
    assert bl._expired(holder, _response(now - 3600, "not a date")) is True
    assert bl._expired(holder, _response(now - 10, "not a date")) is False
    # no ResponseMetadata at all
    assert bl._expired(holder, {"LastModified": datetime.fromtimestamp(now - 3600, UTC)})


@pytest.mark.parametrize(
    "holder", [{}, {"lease_seconds": "60"}, {"lease_seconds": None}, {"lease": 60}]
)
def test_a_record_npa_did_not_write_never_expires(holder: dict[str, Any]) -> None:
    """Protects "never taken over, only broken by hand": no numeric lease, no expiry."""
    assert bl._expired(holder, _response(0, _http_date(time.time()))) is False


def test_without_last_modified_a_lock_never_expires() -> None:
    assert bl._expired({"lease_seconds": 1}, _response(None, _http_date(time.time()))) is False


# -- reading the record -------------------------------------------------------------------


def test_read_lock_names_holder_etag_and_expiry(bucket_env: dict[str, str]) -> None:
    store = _store(bucket_env)
    assert read_lock(store.bucket, store.location.key("none", "npa.lock")) is None
    etag = _plant(store, "c1", {"user": "ann", "lease_seconds": 120})
    current = read_lock(store.bucket, store.location.key("c1", "npa.lock"))
    assert current is not None
    assert current.holder == {"user": "ann", "lease_seconds": 120}
    assert current.etag == etag and etag
    assert current.expired is False
    _plant(store, "c2", {"user": "bob", "lease_seconds": -5})
    gone = read_lock(store.bucket, store.location.key("c2", "npa.lock"))
    assert gone is not None and gone.expired is True


class _Answers(Bucket):
    """A store's answer to a read, as given (no network): the fields S3 may leave out."""

    def __init__(self, body: bytes, response: dict[str, Any]) -> None:
        self.answer = body, response

    def get(self, key: str) -> tuple[bytes, dict[str, Any]]:
        return self.answer


def test_a_lock_read_without_an_etag_holds_an_empty_one() -> None:
    current = read_lock(_Answers(b'{"user": "ann"}', {}), "npa/c1/npa.lock")
    assert current == bl.CurrentLock({"user": "ann"}, "", False)


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"text"', b""])
def test_a_damaged_lock_record_reads_as_an_unnamed_holder(
    bucket_env: dict[str, str], body: bytes
) -> None:
    """Protects the refusal of a junk lock: it is held (by nobody named), never expired."""
    store = _store(bucket_env)
    _plant(store, "junk", body)
    current = read_lock(store.bucket, store.location.key("junk", "npa.lock"))
    assert current is not None and current.holder == {} and current.expired is False
    with pytest.raises(ClusterBusy) as busy:
        _lock(store, "junk").acquire()
    assert "another npa process holds its lock" in busy.value.message


# -- who holds it -------------------------------------------------------------------------


def test_whoami_falls_back_to_the_uid_without_a_user_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import getpass
    import socket

    def nobody() -> str:
        raise KeyError("uid not in passwd")

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert bl.whoami() == (str(os.getuid()), socket.gethostname())

    def no_env() -> str:
        raise OSError("no login")

    monkeypatch.setattr(getpass, "getuser", no_env)
    assert bl.whoami()[0] == str(os.getuid())


def test_the_record_names_the_holder_and_its_lease(
    bucket_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects what the team sees of a holder: user, host, pid, operation, command (no
    `-var` values), start, lease, a token, and an expiry one lease after the write."""
    monkeypatch.setattr(sys, "argv", ["npa", "soperator", "deploy", "-var", "secret=x"])
    monkeypatch.setattr(bl, "whoami", lambda: ("ann", "laptop"))
    store = _store(bucket_env, lease=90)
    before = time.time()
    lock = _lock(store, "rec", "destroy").acquire()
    try:
        current = read_lock(store.bucket, lock.key)
        assert current is not None
        record = current.holder
        assert record["user"] == "ann" and record["host"] == "laptop"
        assert record["pid"] == os.getpid()
        assert record["operation"] == "destroy"
        assert "secret=x" not in record["command"] and "deploy" in record["command"]
        assert before <= record["started"] <= time.time()
        assert record["lease_seconds"] == 90
        assert isinstance(record["token"], str) and len(record["token"]) == 16
        assert before + 90 <= record["expires"] <= time.time() + 90
        assert "took_over" not in record
        assert current.etag == lock.etag
        # indented, for whoever reads the lock object by hand
        found = store.bucket.get(lock.key)
        assert found is not None and found[0].decode() == json.dumps(record, indent=2)
        assert lock.name == "rec" and lock.operation == "destroy" and lock.lease == 90
        assert lock.lost is None and lock.renew_error is None
    finally:
        lock.release()
    assert read_lock(store.bucket, lock.key) is None
    assert lock.etag is None
    # two locks never share a token (break_lock compares it)
    assert _lock(store).holder["token"] != _lock(store).holder["token"]


def test_the_renewal_thread_is_named_after_the_cluster_and_does_not_block_exit(
    bucket_env: dict[str, str],
) -> None:
    lock = _lock(_store(bucket_env), "named").acquire()
    try:
        assert lock._thread is not None
        assert lock._thread.name == "npa-lock-named" and lock._thread.daemon
        assert lock._thread.is_alive()
    finally:
        lock.release()
    assert not lock._thread.is_alive()


# -- taking over an expired lock ----------------------------------------------------------


def test_an_expired_lock_is_taken_over_and_the_previous_holder_recorded(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    dead = {
        "user": "bob", "host": "gone", "pid": 4242, "operation": "deploy", "started": 5.0,
        "lease_seconds": -5, "token": "t0", "command": "npa soperator deploy",
    }  # fmt: skip
    _plant(store, "old", dead)
    lock = _lock(store, "old").acquire()
    try:
        assert lock.holder["took_over"] == {
            "user": "bob",
            "host": "gone",
            "pid": 4242,
            "operation": "deploy",
            "started": 5.0,
        }
        current = read_lock(store.bucket, lock.key)
        assert current is not None and current.holder["token"] == lock.holder["token"]
        assert current.holder["took_over"]["user"] == "bob"
    finally:
        lock.release()


def test_a_live_lock_is_refused_naming_its_holder(bucket_env: dict[str, str]) -> None:
    store = _store(bucket_env)
    _plant(store, "live", {"user": "bob", "host": "hb", "pid": 7, "operation": "plan",
                           "lease_seconds": 600, "command": "npa x"})  # fmt: skip
    with pytest.raises(ClusterBusy) as busy:
        _lock(store, "live").acquire()
    assert "plan by bob@hb (pid 7)" in busy.value.message
    assert busy.value.holder["user"] == "bob"


class _Scripted(Bucket):
    """The real bucket with a hook run before chosen calls: another operator acting at
    exactly that moment (release, take-over), which a real race cannot time."""

    def __init__(self, real: Bucket, before: dict[str, Any], lost_replies: Any = ()) -> None:
        self.__dict__.update(real.__dict__)
        self.before = before
        self.lost_replies = set(lost_replies)  # "put#N": the write lands, its reply is lost
        self.calls: list[str] = []

    def _hook(self, what: str) -> None:
        self.calls.append(what)
        hook = self.before.pop(f"{what}#{self.calls.count(what)}", None)
        if hook is not None:
            hook()

    def get(self, key: str) -> Any:
        self._hook("get")
        return super().get(key)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        self._hook("delete")
        super().delete(key, if_match=if_match)

    def put(self, key: str, body: bytes, **kwargs: Any) -> str:
        self._hook("put")
        etag = super().put(key, body, **kwargs)
        if f"put#{self.calls.count('put')}" in self.lost_replies:
            raise ConditionFailed("the client's retry met the write that landed")
        return etag


def test_a_lock_released_between_the_refusal_and_the_read_is_taken_from_scratch(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    key = store.location.key("gap", "npa.lock")
    _plant(store, "gap", {"user": "bob", "lease_seconds": 600})
    # after our create is refused, the holder releases before we read its record
    scripted = _Scripted(store.bucket, {"get#1": lambda: store.bucket.delete(key)})
    lock = BucketLock(scripted, key, "gap", "deploy", store.location).acquire()
    try:
        current = read_lock(store.bucket, key)
        assert current is not None and current.holder["token"] == lock.holder["token"]
        assert current.etag == lock.etag
        assert "took_over" not in lock.holder
    finally:
        lock.release()


def _refusal(store: S3Store, name: str, planted: dict[str, Any], hooks: Any) -> ClusterBusy:
    """Plant `planted` as the lock of `name`, then acquire it with `hooks(key)` run at the
    scripted moments; the refusal it ends in."""
    key = store.location.key(name, "npa.lock")
    _plant(store, name, planted)
    scripted = _Scripted(store.bucket, hooks(key))
    with pytest.raises(ClusterBusy) as busy:
        BucketLock(scripted, key, name, "deploy", store.location).acquire()
    return busy.value


def _writes(store: S3Store, key: str, holder: dict[str, Any]) -> Any:
    return lambda: store.bucket.put(key, json.dumps(holder).encode())


def test_a_lock_released_then_retaken_by_another_in_that_gap_is_refused_naming_them(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    carol = {"user": "carol", "host": "hc", "pid": 9, "lease_seconds": 600}
    busy = _refusal(store, "gap2", {"user": "bob", "lease_seconds": 600},
                    lambda key: {"get#1": lambda: store.bucket.delete(key),
                                 "put#2": _writes(store, key, carol)})  # fmt: skip
    assert busy.holder["user"] == "carol"


def test_a_take_over_lost_to_another_operator_names_the_winner(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    dave = {"user": "dave", "host": "hd", "pid": 3, "lease_seconds": 600}
    # our second write is the If-Match take-over; dave's lands just before it
    busy = _refusal(store, "race2", {"user": "dead", "lease_seconds": -5},
                    lambda key: {"put#2": _writes(store, key, dave)})  # fmt: skip
    assert busy.holder["user"] == "dave"
    assert busy.message.startswith("cluster 'race2' is busy: an operation by dave@hd")


def test_a_lost_take_over_whose_winner_already_left_names_the_expired_holder(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    busy = _refusal(store, "race3", {"user": "dead", "host": "hx", "lease_seconds": -5},
                    lambda key: {"put#2": _writes(store, key, {}),
                                 "get#2": lambda: store.bucket.delete(key)})  # fmt: skip
    assert busy.holder["user"] == "dead"


def _acquired_despite_a_lost_reply(
    store: S3Store, name: str, planted: dict[str, Any], before: Any, lost: str
) -> BucketLock:
    key = store.location.key(name, "npa.lock")
    _plant(store, name, planted)
    scripted = _Scripted(store.bucket, before(key), lost_replies={lost})
    lock = BucketLock(scripted, key, name, "deploy", store.location).acquire()
    current = read_lock(store.bucket, key)
    assert current is not None and current.holder["token"] == lock.holder["token"]
    assert lock.etag == current.etag  # the ETag to renew and release with
    return lock


def test_a_retried_create_whose_reply_was_lost_after_a_release_is_the_holders_own(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    lock = _acquired_despite_a_lost_reply(
        store, "gap3", {"user": "bob", "lease_seconds": 600},
        lambda key: {"get#1": lambda: store.bucket.delete(key)}, lost="put#2",
    )  # fmt: skip
    assert "took_over" not in lock.holder
    lock.release()


def test_a_take_over_whose_reply_was_lost_is_the_holders_own(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    lock = _acquired_despite_a_lost_reply(
        store, "race4", {"user": "dead", "lease_seconds": -5}, lambda key: {}, lost="put#2"
    )
    assert lock.holder["took_over"]["user"] == "dead"
    lock.release()


def test_a_lock_taken_and_released_again_in_the_gap_is_refused_without_a_name(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    busy = _refusal(store, "gap4", {"user": "bob", "lease_seconds": 600},
                    lambda key: {"get#1": lambda: store.bucket.delete(key),
                                 "put#2": _writes(store, key, {"user": "carol"}),
                                 "get#2": lambda: store.bucket.delete(key)})  # fmt: skip
    assert busy.holder == {}
    assert busy.message == "cluster 'gap4' is busy: another npa process holds its lock"


# -- renewal and release ------------------------------------------------------------------


def test_a_broken_lock_is_noticed_by_the_renewal_and_never_deleted_on_release(
    bucket_env: dict[str, str],
) -> None:
    """Protects `lost`: once someone else rewrote the lock, the holder says so and its
    release leaves the other's lock alone."""
    store = _store(bucket_env, lease=1.5)  # renewals every 0.5 s
    lock = _lock(store, "brk").acquire()
    try:
        store.bucket.put(lock.key, json.dumps({"user": "eve", "lease_seconds": 600}).encode())
        assert lock._thread is not None
        thread = lock._thread

        def settled() -> bool:  # noticed, or gone wrong: stopped, failing, eve's lock replaced
            if lock.lost is not None or lock.renew_error or not thread.is_alive():
                return True
            current = read_lock(store.bucket, lock.key)
            return current is None or current.holder.get("user") != "eve"

        wait_until(settled, timeout=60, what="the renewal to notice")
        assert lock.lost == (
            "the lock on 'brk' was broken or taken over while this operation ran "
            "(`npa soperator unlock`?)"
        )
        wait_until(lambda: not thread.is_alive(), timeout=60, what="renewal to stop")
    finally:
        lock.release()
    current = read_lock(store.bucket, lock.key)
    assert current is not None and current.holder["user"] == "eve"


class _Renewals(Bucket):
    """The real bucket, but the renewals (every write after the create) and the reads after
    the first renewal can be made to fail; what the lock shows (`lost`, `renew_error`) is
    noted as each renewal starts, i.e. what the previous one left, and whether the renewal
    is conditioned on the lock's ETag."""

    def __init__(self, real: Bucket, puts: list[Exception], gets: list[Exception]) -> None:
        self.__dict__.update(real.__dict__)
        self.puts, self.gets = puts, gets
        self.lock: BucketLock | None = None
        self.seen: list[tuple[str | None, str | None]] = []
        self.conditioned: list[bool] = []

    def put(self, *args: Any, **kwargs: Any) -> str:
        if not kwargs.get("if_none_match"):
            assert self.lock is not None
            self.seen.append((self.lock.renew_error, self.lock.lost))
            self.conditioned.append(kwargs.get("if_match") == self.lock.etag is not None)
            if self.puts:
                raise self.puts.pop(0)
        return super().put(*args, **kwargs)

    def get(self, key: str) -> Any:
        if self.gets and self.seen:
            raise self.gets.pop(0)
        return super().get(key)


def _renewing(
    env: dict[str, str], name: str, puts: list[Exception], gets: list[Exception]
) -> tuple[BucketLock, _Renewals]:
    """A lock on `name` renewing every 0.5 s through `_Renewals`, after three renewals have
    started (or the renewal thread stopped)."""
    store = _store(env, lease=1.5)
    bucket = _Renewals(store.bucket, puts, gets)
    lock = BucketLock(bucket, store.location.key(name, "npa.lock"), name, "deploy",
                      store.location)  # fmt: skip
    bucket.lock = lock
    lock.acquire()
    assert lock._thread is not None
    thread = lock._thread
    wait_until(lambda: len(bucket.seen) >= 3 or not thread.is_alive(), timeout=60,
               what="three renewals")  # fmt: skip
    return lock, bucket


def test_renewal_errors_are_kept_and_cleared_by_the_next_good_renewal(
    bucket_env: dict[str, str],
) -> None:
    lock, bucket = _renewing(bucket_env, "flaky", [RuntimeError("bucket unreachable")], [])
    try:
        assert bucket.seen[:3] == [(None, None), ("bucket unreachable", None), (None, None)]
        assert all(bucket.conditioned)  # If-Match on the ETag the lock holds
        assert lock.lost is None and lock._thread is not None and lock._thread.is_alive()
    finally:
        lock.release()
    assert read_lock(bucket, lock.key) is None


def test_a_refused_renewal_whose_read_back_fails_is_judged_on_the_next_renewal(
    bucket_env: dict[str, str],
) -> None:
    """A 412 whose record cannot be read (the bucket unreachable) is not taken for a lost
    lock: the error is kept and the next renewal decides."""
    lock, bucket = _renewing(
        bucket_env, "unread", [ConditionFailed("412")], [RuntimeError("read failed")]
    )
    try:
        assert bucket.seen[:2] == [(None, None), ("read failed", None)]
        assert lock.lost is None and lock._thread is not None and lock._thread.is_alive()
    finally:
        lock.release()
    assert read_lock(bucket, lock.key) is None


def test_a_renewal_waking_after_the_release_cleared_its_etag_writes_nothing(
    bucket_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the renewal's check under the mutex: a renewal whose wait ended just before
    the release, and that gets the mutex only after the release cleared the ETag (a starved
    thread), stops; it never writes the lock back unconditionally."""
    store = _store(bucket_env, lease=1.5)  # renewals every 0.5 s
    lock = _lock(store, "late")
    woke = threading.Event()
    real_wait = lock._stop.wait

    def wait(timeout: float | None = None) -> bool:
        stopped = real_wait(timeout)
        woke.set()
        return stopped

    monkeypatch.setattr(lock._stop, "wait", wait)
    with lock._mutex:  # what `release` holds while it clears the ETag
        lock.acquire()
        assert lock._thread is not None
        thread = lock._thread
        wait_until(woke.is_set, timeout=60, what="the renewal to wake")
        etag, lock.etag = lock.etag, None
    wait_until(lambda: not thread.is_alive() or lock.etag is not None, timeout=60,
               what="the renewal to see the release")  # fmt: skip
    assert lock.etag is None and not thread.is_alive()
    current = read_lock(store.bucket, lock.key)
    assert current is not None and current.etag == etag
    store.bucket.delete(lock.key, if_match=etag)


def test_renewals_come_every_third_of_the_lease(
    bucket_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the interval (a third of the lease, never under half a second): read by the
    wait the renewal thread asks for, not by timing."""
    waits: list[float] = []
    for lease, expected in ((30.0, 10.0), (0.9, 0.5)):
        store = _store(bucket_env, lease=lease)
        lock = _lock(store, f"iv{len(waits)}")
        stop = lock._stop
        real_wait = stop.wait

        def record(timeout: float | None = None, real_wait: Any = real_wait) -> bool:
            waits.append(float(timeout or 0))
            return real_wait(0)  # type: ignore[no-any-return]

        monkeypatch.setattr(stop, "wait", record)
        lock.acquire()
        assert lock._thread is not None
        thread = lock._thread
        wait_until(lambda thread=thread: len(waits) >= 1 or not thread.is_alive(), timeout=30,
                   what="the first renewal wait")  # fmt: skip
        lock.release()
        assert waits and all(w == pytest.approx(expected) for w in waits)
        waits.clear()


def _lock_writes(condition: str) -> Any:
    """The proxy's matcher: PUTs of a lock carrying `condition` (If-None-Match or If-Match)."""

    def match(method: str, path: str, headers: Any) -> bool:
        return method == "PUT" and path.endswith("/npa.lock") and condition in headers

    return match


def test_a_create_whose_reply_was_lost_is_the_holders_own_not_a_busy_cluster(
    moto: MotoServer, bucket_env: dict[str, str]
) -> None:
    """Protects idempotent lock writes: the bucket creates the lock but the reply is lost;
    the S3 client's retry meets the lock (412), which holds this holder's own token, so the
    lock is taken, not reported busy "by" its own process."""
    with ReplyDroppingProxy(moto.endpoint, _lock_writes("If-None-Match")) as proxy:
        store = _store(bucket_env, endpoint=proxy.endpoint)
        lock = _lock(store, "lost-reply").acquire()
        try:
            assert proxy.dropped == [("PUT", f"/{store.location.bucket}/{lock.key}")]
            current = read_lock(store.bucket, lock.key)
            assert current is not None and current.holder["token"] == lock.holder["token"]
            assert lock.etag == current.etag  # the ETag to renew and release with
        finally:
            lock.release()
    assert read_lock(_store(bucket_env).bucket, lock.key) is None


def test_a_renewal_whose_reply_was_lost_keeps_the_lock(
    moto: MotoServer, bucket_env: dict[str, str]
) -> None:
    """Protects renewals the same way: the retried If-Match renewal meets the record it
    wrote itself (412) and goes on holding the lock, not `lost`."""
    with ReplyDroppingProxy(moto.endpoint, _lock_writes("If-Match")) as proxy:
        store = _store(bucket_env, lease=1.5, endpoint=proxy.endpoint)  # renewals every 0.5 s
        lock = _lock(store, "lost-renewal").acquire()
        try:
            assert lock._thread is not None
            thread = lock._thread
            wait_until(lambda: proxy.dropped or lock.renew_error or not thread.is_alive(),
                       timeout=60, what="a renewal's reply to be lost")  # fmt: skip
            etag = lock.etag
            wait_until(lambda: lock.etag != etag or lock.lost or lock.renew_error
                       or not thread.is_alive(), timeout=60, what="the next renewal")  # fmt: skip
            assert lock.lost is None and lock.renew_error is None
        finally:
            lock.release()
    assert read_lock(_store(bucket_env).bucket, lock.key) is None


def test_a_write_refused_for_someone_elses_lock_is_still_busy(
    moto: MotoServer, bucket_env: dict[str, str]
) -> None:
    """The token decides: a 412 on a lock holding another holder's token stays a refusal."""
    store = _store(bucket_env)
    other = _lock(store, "theirs").acquire()
    try:
        with pytest.raises(ClusterBusy):
            _lock(store, "theirs").acquire()
    finally:
        other.release()


def test_release_without_acquire_and_twice_is_harmless(bucket_env: dict[str, str]) -> None:
    store = _store(bucket_env)
    _lock(store, "never").release()
    _plant(store, "never", {"user": "other"})
    key = store.location.key("never", "npa.lock")
    scripted = _Scripted(store.bucket, {})
    BucketLock(scripted, key, "never", "deploy", store.location).release()
    assert scripted.calls == []  # never acquired: nothing asked of the bucket
    held = read_lock(store.bucket, store.location.key("never", "npa.lock"))
    assert held is not None and held.holder == {"user": "other"}
    lock = _lock(store, "twice").acquire()
    lock.release()
    _plant(store, "twice", {"user": "next"})
    lock.release()  # the lock now belongs to someone else: untouched
    current = read_lock(store.bucket, lock.key)
    assert current is not None and current.holder == {"user": "next"}


def test_release_only_deletes_the_lock_it_wrote(bucket_env: dict[str, str]) -> None:
    """Conditioned on our ETag: a lock rewritten under us (before the renewal noticed) stays."""
    store = _store(bucket_env)
    lock = _lock(store, "mine").acquire()
    _plant(store, "mine", {"user": "frank"})
    lock.release()
    current = read_lock(store.bucket, lock.key)
    assert current is not None and current.holder == {"user": "frank"}


# -- this machine's flock first -----------------------------------------------------------


def test_team_lock_takes_the_flock_first_and_gives_it_back_when_the_bucket_refuses(
    bucket_env: dict[str, str], npa_home: Any
) -> None:
    store = _store(bucket_env)
    key = store.location.key("tl", "npa.lock")
    _plant(store, "tl", {"user": "bob", "host": "hb", "lease_seconds": 600})
    team = TeamLock(store.bucket, key, "tl", "deploy", store.location)
    with pytest.raises(ClusterBusy) as busy:
        team.acquire()
    assert busy.value.message.startswith("cluster 'tl' is busy")
    assert not team.held
    ClusterLock("tl", operation="plan").acquire().release()  # the flock is free again
    store.bucket.delete(key)
    team = TeamLock(store.bucket, key, "tl", "deploy", store.location).acquire()
    try:
        assert team.held and team.lost is None
        recorded = read_lock(store.bucket, key)
        assert recorded is not None and recorded.holder["operation"] == "deploy"
        assert team.fileno() == team.local.fileno()
        # the Terraform supervisor is recorded in (and cleared from) this machine's lock
        team.note_child(os.getpid(), ["plan", "-var=x=1"])
        assert team.local._record["terraform"]["pid"] == os.getpid()
        assert team.local._record["terraform"]["args"] == ["plan"]
        team.clear_child()
        assert team.local._record["terraform"] is None
        with pytest.raises(ClusterBusy) as here:
            ClusterLock("tl", operation="plan").acquire()
        assert "busy: deploy by pid" in here.value.message  # the flock names the operation
    finally:
        team.release()
    assert not team.held and read_lock(store.bucket, key) is None
    team.remote.lost = "gone"
    assert team.lost == "gone"


def test_team_lock_releases_the_flock_even_when_the_bucket_release_fails(
    bucket_env: dict[str, str], npa_home: Any
) -> None:
    store = _store(bucket_env)
    key = store.location.key("tl2", "npa.lock")
    team = TeamLock(store.bucket, key, "tl2", "deploy", store.location).acquire()

    def broken() -> None:
        raise RuntimeError("remote release failed")

    real_release = team.remote.release
    team.remote.release = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        team.release()
    assert not team.held
    real_release()


# -- unlock -------------------------------------------------------------------------------


def test_break_lock_removes_it_and_returns_the_holder_with_its_expiry(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    key = store.location.key("bk", "npa.lock")
    with pytest.raises(UsageError) as none:
        break_lock(store.bucket, key, "bk")
    assert none.value.message == "cluster 'bk' is not locked"
    assert none.value.hint == "nothing to unlock"
    _plant(store, "bk", {"user": "bob", "token": "t1", "lease_seconds": -5})
    broken = break_lock(store.bucket, key, "bk", expected={"token": "t1"})
    assert broken == {"user": "bob", "token": "t1", "lease_seconds": -5, "expired": True}
    assert read_lock(store.bucket, key) is None
    _plant(store, "bk", {"user": "bob", "token": "t2", "lease_seconds": 600})
    assert break_lock(store.bucket, key, "bk")["expired"] is False


def test_break_lock_refuses_a_lock_that_changed_since_it_was_shown(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    key = store.location.key("chg", "npa.lock")
    _plant(store, "chg", {"user": "new", "token": "t9"})
    with pytest.raises(UsageError) as changed:
        break_lock(store.bucket, key, "chg", expected={"token": "t1"})
    assert changed.value.message == (
        "the lock on 'chg' changed since it was shown (another operation took it)"
    )
    assert changed.value.hint == "run unlock again to see who holds it now"
    assert read_lock(store.bucket, key) is not None


def test_break_lock_refuses_when_the_lock_changes_while_being_broken(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    key = store.location.key("mid", "npa.lock")
    _plant(store, "mid", {"user": "old", "token": "t1"})

    class Racing(Bucket):
        def __init__(self) -> None:
            self.__dict__.update(store.bucket.__dict__)

        def delete(self, key: str, *, if_match: str | None = None) -> None:
            store.bucket.put(key, json.dumps({"user": "new", "token": "t2"}).encode())
            super().delete(key, if_match=if_match)

    with pytest.raises(UsageError) as changed:
        break_lock(Racing(), key, "mid", expected={"token": "t1"})
    assert changed.value.message == "the lock on 'mid' changed while it was being broken"
    assert changed.value.hint == "run unlock again to see who holds it now"
    current = read_lock(store.bucket, key)
    assert current is not None and current.holder["user"] == "new"


def test_condition_failed_is_what_a_lost_if_match_raises(bucket_env: dict[str, str]) -> None:
    """The premise of every refusal above: the S3 API answers a stale If-Match with a
    failed condition, which the bucket turns into ConditionFailed."""
    store = _store(bucket_env)
    etag = _plant(store, "pre", {"v": 1})
    _plant(store, "pre", {"v": 2})
    with pytest.raises(ConditionFailed):
        store.bucket.put(store.location.key("pre", "npa.lock"), b"{}", if_match=etag)
