"""The s3 store and the bucket lock against a real S3 API (moto's server on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.home.locks import ClusterBusy
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.state.errors import (
    StateBucketMissing,
    StateCredentialsMissing,
    StateUnreachable,
)
from npa_sop_tui.state.location import StateLocation
from npa_sop_tui.state.s3 import S3Store
from npa_sop_tui.state.stores import default_store, store_at

from testkit.wait import wait_until


def _store(env: dict[str, str], **changes: Any) -> S3Store:
    loc = StateLocation(
        backend="s3",
        bucket=env["NPA_STATE_BUCKET"],
        endpoint=env["NPA_STATE_ENDPOINT"],
        region=env["NPA_STATE_REGION"],
    )
    store = store_at(StateLocation(**{**loc.__dict__, **changes}))
    assert isinstance(store, S3Store)
    return store


def test_records_round_trip_through_the_bucket(bucket_env: dict[str, str]) -> None:
    store = default_store()  # NPA_STATE_BUCKET in the environment selects the bucket
    assert isinstance(store, S3Store) and store.shared
    entry = InventoryEntry(name="flow", kube_context="nebius-flow-slurm", region="eu-north1")
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0, user="ann", host="a"))
    inventory.save(entry)
    inventory.save_spec("flow", "name: flow\n")
    got = inventory.get("flow")
    assert got is not None and got.operations[0].user == "ann"
    assert [e.name for e in inventory.list_clusters()] == ["flow"]
    assert store.read_spec("flow") == "name: flow\n"
    # a damaged record is named, not hidden, and the others still list
    store.bucket.put("npa/bad/inventory.json", b"{not json")
    entries, damaged = store.scan()
    assert [e.name for e in entries] == ["flow"]
    assert damaged and "s3://" in str(damaged[0].path) and "npa/bad" in str(damaged[0].path)
    # nothing of it is on this machine's disk
    assert not (Path(os.environ["NPA_HOME"]) / "soperator" / "flow" / "inventory.json").exists()


def test_unreachable_missing_bucket_and_no_keys_are_clear_errors(
    bucket_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from testkit.moto import free_port

    down = _store(bucket_env, endpoint=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(StateUnreachable, match="cannot be reached") as caught:
        down.get("flow")
    assert "does not fall back to local" in caught.value.render()
    with pytest.raises(StateBucketMissing, match="does not exist") as missing:
        _store(bucket_env, bucket="no-such-bucket").get("flow")
    assert "state init --bucket no-such-bucket" in missing.value.render()
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(StateCredentialsMissing, match="no Object Storage access key"):
        _store(bucket_env, prefix="other").get("flow")


def test_a_terraform_failure_with_the_bucket_gone_is_named_as_such(
    bucket_env: dict[str, str], tmp_path: Path
) -> None:
    from npa_sop_tui.state.backend import explain_failure
    from npa_sop_tui.state.local import LocalStore

    from testkit.moto import free_port

    up = _store(bucket_env)
    assert explain_failure(tmp_path, up, "apply") is None  # a plain Terraform failure
    assert explain_failure(tmp_path, LocalStore(), "apply") is None
    down = _store(bucket_env, endpoint=f"http://127.0.0.1:{free_port()}")
    error = explain_failure(tmp_path, down, "apply")
    assert isinstance(error, StateUnreachable)
    assert error.message.startswith("terraform apply stopped: the state bucket")
    assert "never falls back to local state" in error.render()


def test_lock_is_exclusive_across_machines_and_names_the_holder(
    bucket_env: dict[str, str],
) -> None:
    store = _store(bucket_env)
    first = store.lock("flow", operation="deploy").acquire()
    try:
        holder = store.lock_holder("flow")
        assert holder is not None and holder["operation"] == "deploy"
        assert holder["pid"] == os.getpid() and holder["host"] and holder["user"]
        assert "secret" not in str(holder).lower()
        # another machine: a separate bucket lock on the same object (the local flock is
        # per-home, so take only the bucket part)
        from npa_sop_tui.state.bucket_lock import BucketLock

        other = BucketLock(store.bucket, first.remote.key, "flow", "destroy", store.location)
        with pytest.raises(ClusterBusy) as busy:
            other.acquire()
        assert f"deploy by {holder['user']}@{holder['host']}" in busy.value.message
    finally:
        first.release()
    assert store.lock_holder("flow") is None


def test_racing_operators_exactly_one_wins(bucket_env: dict[str, str]) -> None:
    from npa_sop_tui.state.bucket_lock import BucketLock

    store = _store(bucket_env)
    key = store.location.key("race", "npa.lock")
    winners: list[BucketLock] = []
    refused: list[ClusterBusy] = []
    gate = threading.Barrier(8)

    def contend() -> None:
        lock = BucketLock(store.bucket, key, "race", "deploy", store.location)
        gate.wait()
        try:
            winners.append(lock.acquire())
        except ClusterBusy as exc:
            refused.append(exc)

    threads = [threading.Thread(target=contend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(winners) == 1 and len(refused) == 7
    winners[0].release()


def test_renewal_keeps_a_live_lock_past_its_lease(bucket_env: dict[str, str]) -> None:
    # 4 s: renewals come every third of it, so a renewal thread starved for 2 s on a loaded
    # machine does not let the lease run out (the bucket's clock counts whole seconds).
    lease = 4.0
    store = _store(bucket_env, lease_seconds=lease)
    held = store.lock("live", operation="deploy").acquire()
    try:
        from npa_sop_tui.state.bucket_lock import BucketLock, read_lock

        def expires() -> float:
            current = read_lock(store.bucket, held.remote.key)
            return float(current.holder["expires"]) if current else 0.0

        # Renewals rewrite the record: wait until one has carried it two leases past the
        # first expiry, i.e. the lock outlived its original lease twice over.
        first = expires()
        wait_until(lambda: expires() > first + 2 * lease, timeout=60, what="two leases renewed")

        other = BucketLock(store.bucket, held.remote.key, "live", "plan", store.location)
        with pytest.raises(ClusterBusy):
            other.acquire()
        assert held.lost is None
    finally:
        held.release()


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from npa_sop_tui.state.stores import default_store
    lock = default_store().lock("flow", operation="deploy").acquire()
    print("locked", flush=True)
    time.sleep(600)
    """
)


LEASE = "12"  # seconds; see the docstring below


@pytest.mark.slow
def test_lease_runs_out_after_a_kill_then_unlock_breaks_a_fresh_one(
    bucket_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A holder killed with SIGKILL stops renewing: refused until its lease runs out (by the
    bucket's clock), then taken over. `unlock` breaks a lock at once after the typed name.

    The lease is long enough for a loaded machine: the refusal below has to come before the
    killed holder's last renewal (at most a third of a lease old at the kill, its time cut to
    whole seconds by the bucket) runs out, and at a load of 29 on 2 cores more than 3 s passed
    between the kill and that check. With 12 s the check has about 7 s."""
    env = {**os.environ, **bucket_env, "NPA_STATE_LEASE_SECONDS": LEASE}

    def holder(home: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER],
            env={**env, "NPA_HOME": str(tmp_path / home)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc

    proc = holder("machine-a")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    monkeypatch.setenv("NPA_STATE_LEASE_SECONDS", LEASE)
    store = default_store()
    with pytest.raises(ClusterBusy, match=f"pid {proc.pid}"):
        store.lock("flow", operation="deploy").acquire()
    taken: list[Any] = []

    def take() -> bool:
        try:
            taken.append(store.lock("flow", operation="deploy").acquire())
        except ClusterBusy:
            return False
        return True

    wait_until(take, timeout=90, interval=0.5, what="the lease of a killed holder to run out")
    assert taken[0].remote.holder["took_over"]["pid"] == proc.pid
    taken[0].release()

    # unlock: a live holder on "another machine", broken after the name is typed
    live = holder("machine-b")
    try:
        from npa_sop_tui.cli import lifecycle_cmds
        from npa_sop_tui.cli.entry import main as cli

        monkeypatch.setattr(lifecycle_cmds, "_interactive", lambda: True)
        answers = iter(["wrong\n", "flow\n"])
        monkeypatch.setattr(lifecycle_cmds, "_ask", lambda prompt: next(answers))
        assert cli(["soperator", "unlock", "--name", "flow"]) == 1  # wrong name: unchanged
        assert store.lock_holder("flow")["pid"] == live.pid  # type: ignore[index]
        assert cli(["soperator", "unlock", "--name", "flow"]) == 0
        out = capsys.readouterr().out
        assert f"pid {live.pid}" in out and "deploy by" in out
        assert store.lock_holder("flow") is None
    finally:
        live.kill()
        live.wait(10)


def test_settings_show_the_state_keys(bucket_env: dict[str, str]) -> None:
    settings = resolve_settings()
    assert settings.source("state.bucket") == "env NPA_STATE_BUCKET"
