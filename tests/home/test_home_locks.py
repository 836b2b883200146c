"""Cluster locks: a busy lock names its holder, and secrets handed in on the command line
never reach the holder record, which is shown to anyone who hits the lock (stderr and the
JSON error document)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from npa_sop_tui.home.locks import ClusterBusy, ClusterLock, is_locked

SECRET = "capacityblockgroup-LOCKsecret7"


@pytest.mark.parametrize(
    "flags",
    [
        ["--capacity-block-group", f"gpu={SECRET}"],
        [f"--capacity-block-group=gpu={SECRET}"],
        [
            "--capacity-block-group",
            "gpu=capacityblockgroup-other",
            "--capacity-block-group",
            SECRET,
        ],
    ],
)
def test_busy_lock_never_shows_a_capacity_id(
    flags: list[str], npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["/venv/bin/npa", "soperator", "deploy", "--spec", "c.yaml", *flags, "--yes"]
    monkeypatch.setattr(sys, "argv", argv)
    with ClusterLock("busy", operation="deploy") as held:
        record = held.path.read_text()
        assert SECRET not in record
        assert "capacityblockgroup-" not in record
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("busy", operation="plan").acquire()
    busy = caught.value
    assert SECRET not in busy.render()
    assert SECRET not in json.dumps(busy.json_extra())
    # still useful: it names the command and keeps the pool names
    assert "npa soperator deploy --spec c.yaml" in busy.message
    assert "gpu=***" in busy.message or "***" in busy.message


def test_lock_contention_names_the_holder() -> None:
    with ClusterLock("busy", operation="deploy"):
        assert is_locked("busy")
        with pytest.raises(ClusterBusy) as info:
            ClusterLock("busy", operation="destroy").acquire()
        assert f"pid {os.getpid()}" in info.value.message
        assert "deploy" in info.value.message
        assert info.value.exit_code == 2
    assert not is_locked("busy")
    ClusterLock("busy", operation="destroy").acquire().release()


# An ID the redactor's patterns do not know: only the flag handling can mask it.
PLAIN_ID = "e00LOCKplainid42"


@pytest.mark.parametrize(
    "flags",
    [
        ["--capacity-block-group", f"gpu={PLAIN_ID}"],
        ["--capacity-block-group", PLAIN_ID],
        [f"--capacity-block-group=gpu={PLAIN_ID}"],
        [f"--capacity-block-group={PLAIN_ID}"],
    ],
    ids=["separate-with-pool", "separate-bare", "joined-with-pool", "joined-bare"],
)
def test_holder_command_masks_every_form_of_the_capacity_flag(flags: list[str]) -> None:
    """Protects the flag masking itself: the IDs here match no redactor pattern."""
    from npa_sop_tui.home.locks import holder_command

    shown = holder_command(["/venv/bin/npa", "soperator", "deploy", *flags, "--yes"])
    assert PLAIN_ID not in shown
    assert shown.startswith("npa soperator deploy --capacity-block-group")
    assert shown.endswith("--yes")  # the flag after the value is kept as it is
    if "gpu=" in " ".join(flags):
        assert "gpu=***" in shown  # the pool name stays readable


# -- who holds it: pid plus start time, read from /proc ------------------------------------


def test_process_start_reads_field_22_even_when_the_command_name_has_parentheses(
    tmp_path: Path,
) -> None:
    """Protects the split after the last ")": a command named `a) (b` must not shift fields."""
    import subprocess

    from npa_sop_tui.home.locks import process_start

    own = Path(f"/proc/{os.getpid()}/stat").read_bytes()
    expected = int(own[own.rfind(b")") + 2 :].split()[19])
    assert process_start(os.getpid()) == expected
    odd = tmp_path / "a) (b c"
    odd.symlink_to("/bin/sleep")
    child = subprocess.Popen([str(odd), "30"])
    try:
        raw = Path(f"/proc/{child.pid}/stat").read_bytes()
        assert b"(a) (b c)" in raw
        assert process_start(child.pid) == int(raw.split(b") ")[-1].split()[19])
        assert process_start(child.pid) != process_start(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert process_start(child.pid) is None  # reaped: gone


def test_a_pid_is_alive_only_as_the_process_recorded() -> None:
    """Protects telling a live holder from a dead or recycled pid."""
    import subprocess

    from npa_sop_tui.home.locks import process_alive, process_start

    me = os.getpid()
    assert process_alive(me) and process_alive(me, process_start(me))
    assert not process_alive(me, (process_start(me) or 0) + 1)  # a recycled pid
    assert process_alive(me, "unknown")  # a start that is not a number is not compared
    for bad in (None, "123", 0, -1, 1.5):
        assert not process_alive(bad)
    assert process_alive(1)  # init: another user's process exists (EPERM or not)
    child = subprocess.Popen(["/bin/true"])
    child.wait()
    assert not process_alive(child.pid)


# -- what a busy lock says ------------------------------------------------------------------


def test_a_bucket_holder_is_named_by_user_host_command_and_time() -> None:
    import time

    started = time.mktime((2026, 3, 4, 5, 6, 7, 0, 0, -1))
    holder = {"operation": "deploy", "pid": 31, "user": "ana", "host": "ws1",
              "command": "npa soperator deploy", "started": started}  # fmt: skip
    busy = ClusterBusy("team", holder)
    assert busy.message == (
        "cluster 'team' is busy: deploy by ana@ws1 (pid 31) (npa soperator deploy) "
        "since 2026-03-04 05:06:07"
    )
    assert busy.hint == "wait for that operation to finish (or interrupt it), then try again"
    assert busy.json_extra() == {"holder": holder}
    unknown = ClusterBusy("team", {"host": "ws2"})
    assert unknown.message == (
        "cluster 'team' is busy: an operation by ?@ws2 (pid None) (?) since ?"
    )


def test_an_unreadable_holder_record_still_says_busy() -> None:
    busy = ClusterBusy("c", None)
    assert busy.message == "cluster 'c' is busy: another npa process holds its lock"
    assert "wait for that operation" in (busy.hint or "")
    assert busy.json_extra() == {"holder": {}}


def _gone_pid() -> int:
    import subprocess

    child = subprocess.Popen(["/bin/true"])
    child.wait()
    return child.pid


def test_a_live_holder_with_its_terraform_names_both() -> None:
    from npa_sop_tui.home.locks import process_start

    me = os.getpid()
    tf = {"pid": me, "pid_start": process_start(me), "args": ["apply"], "since": 1.0}
    holder = {"operation": "deploy", "pid": me, "pid_start": process_start(me),
              "command": "npa x", "started": "bad", "terraform": tf}  # fmt: skip
    busy = ClusterBusy("c", holder)
    assert busy.message == (
        f"cluster 'c' is busy: deploy by pid {me} (npa x) since ?; Terraform runs for it (pid {me})"
    )
    holder["terraform"] = {**tf, "pid": _gone_pid()}  # its Terraform has exited
    assert ClusterBusy("c", holder).message.endswith("since ?")
    holder["terraform"] = "not a record"
    assert ClusterBusy("c", holder).message.endswith("since ?")


def test_terraform_left_running_by_a_dead_npa_is_named_with_how_to_wait() -> None:
    """Protects the message a user sees after killing npa mid-apply."""
    from npa_sop_tui.home.locks import process_start

    me = os.getpid()
    args = ["apply", *[f"arg{i}" for i in range(40)]]
    tf = {"pid": me, "pid_start": process_start(me), "args": args, "since": "?"}
    holder = {"operation": "deploy", "pid": _gone_pid(), "command": "npa d", "terraform": tf}
    busy = ClusterBusy("c", holder)
    shown = " ".join(args)[:80]
    assert f"`terraform {shown}`," in busy.message
    assert busy.message.startswith(f"cluster 'c' is busy: Terraform (supervisor pid {me}, ")
    assert "that npa process is gone (killed or crashed)" in busy.message
    assert busy.hint == (
        f"wait until pid {me} has exited (usually seconds), then run the command again; "
        f"`kill -TERM {me}` repeats the stop request if it lingers"
    )
    tf["pid_start"] = (process_start(me) or 0) + 1  # recycled: not our Terraform
    assert "inherited the lock file" in ClusterBusy("c", holder).message


def test_a_lock_held_by_an_inheritor_names_the_file_to_ask_fuser_about(tmp_path: Path) -> None:
    holder = {"operation": "plan", "pid": _gone_pid(), "command": "npa p", "started": None}
    path = tmp_path / ".lock"
    busy = ClusterBusy("c", holder, path)
    assert f"its lock {path} is held, but the recorded holder (plan by pid" in busy.message
    assert busy.hint == f"`fuser -v {path}` names that process; stop it, then try again"
    bare = ClusterBusy("c", holder)
    assert "its lock is held" in bare.message and bare.hint == (
        "`fuser -v` names that process; stop it, then try again"
    )


# -- the holder record --------------------------------------------------------------------


def test_the_record_names_terraform_without_its_variables_and_forgets_it_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Protects the record: `-var` arguments (values may be secret) never reach it, at most
    six arguments are kept, and a finished Terraform is cleared; release empties the file."""
    from npa_sop_tui.home.locks import process_start

    monkeypatch.setattr(sys, "argv", ["/x/npa", "soperator", "deploy"])
    lock = ClusterLock("rec", operation="deploy")
    with pytest.raises(RuntimeError, match="the lock of 'rec' is not held"):
        lock.fileno()
    with lock:
        assert lock.held and lock.fileno() >= 0
        record = json.loads(lock.path.read_text())
        assert record["pid"] == os.getpid() and record["pid_start"] == process_start(os.getpid())
        assert record["operation"] == "deploy" and record["command"] == "npa soperator deploy"
        assert record["terraform"] is None and record["started"] > 1e9
        args = ["apply", "-var=token=s3cret", "-var-file=x.tfvars", "-input=false",
                "a", "b", "c", "d", "e", "f"]  # fmt: skip
        lock.note_child(os.getpid(), args)
        tf = json.loads(lock.path.read_text())["terraform"]
        assert tf["args"] == ["apply", "-input=false", "a", "b", "c", "d"]
        assert tf["pid"] == os.getpid() and tf["pid_start"] == record["pid_start"]
        assert tf["since"] >= record["started"]
        lock.clear_child()
        assert json.loads(lock.path.read_text())["terraform"] is None
    assert not lock.held and lock.path.read_text() == ""
    lock.release()  # twice is harmless


def test_a_long_command_line_is_cut_to_200_characters() -> None:
    from npa_sop_tui.home.locks import holder_command

    shown = holder_command(["/usr/local/bin/npa", *["x" * 50] * 10])
    assert shown.startswith("npa xxx") and len(shown) == 200


def test_is_locked_is_false_for_a_missing_or_planted_lock_file(npa_home: Path) -> None:
    assert not is_locked("never")
    folder = npa_home / "soperator" / "planted"
    folder.mkdir(parents=True)
    (folder / ".lock").symlink_to(npa_home / "elsewhere")
    assert not is_locked("planted")


def test_a_lock_file_that_is_not_a_record_reads_as_no_holder() -> None:
    import fcntl

    with ClusterLock("junk", operation="deploy") as held:
        held.path.write_text("[1, 2]")
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("junk", operation="plan").acquire()
        assert caught.value.holder == {}
        held.path.write_text("{broken")
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("junk", operation="plan").acquire()
        assert "another npa process holds its lock" in caught.value.message
    # released: the next one takes it (the flock was dropped, not just the file emptied)
    fd = os.open(held.path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


# -- from the mutation run of locks.py (each test names the rule it protects) --------------


def test_asking_whether_a_process_lives_does_not_signal_it() -> None:
    """Protects the probe's signal 0: a real signal (SIGHUP) would kill the holder it asks
    about."""
    import subprocess

    from npa_sop_tui.home.locks import process_alive

    child = subprocess.Popen(["/bin/sleep", "30"])
    try:
        assert process_alive(child.pid)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(0.5)  # still running: not hung up on
    finally:
        child.kill()
        child.wait()


def test_a_local_holder_without_a_command_shows_a_question_mark_and_its_start_time() -> None:
    import time

    from npa_sop_tui.home.locks import process_start

    me = os.getpid()
    started = time.mktime((2026, 1, 2, 3, 4, 5, 0, 0, -1))
    holder = {"operation": "plan", "pid": me, "pid_start": process_start(me), "started": started}
    assert ClusterBusy("c", holder).message == (
        f"cluster 'c' is busy: plan by pid {me} (?) since 2026-01-02 03:04:05"
    )


def test_a_recycled_npa_pid_is_not_taken_for_the_holder(tmp_path: Path) -> None:
    """Protects the start-time check of the holder itself: a pid reused by another process
    must not make a lost lock look like a running operation."""
    from npa_sop_tui.home.locks import process_start

    me = os.getpid()
    holder = {"operation": "deploy", "pid": me, "pid_start": (process_start(me) or 0) + 1,
              "command": "npa d", "started": None}  # fmt: skip
    busy = ClusterBusy("c", holder, tmp_path / ".lock")
    assert busy.message == (
        f"cluster 'c' is busy: its lock {tmp_path / '.lock'} is held, but the recorded holder "
        f"(deploy by pid {me} (npa d) since ?) is gone; another process has inherited the "
        "lock file"
    )


def test_terraform_left_running_says_since_when_and_that_it_saves_state() -> None:
    import time

    from npa_sop_tui.home.locks import process_start

    me = os.getpid()
    since = time.mktime((2026, 5, 6, 7, 8, 9, 0, 0, -1))
    tf = {"pid": me, "pid_start": process_start(me), "args": ["apply", "plan.bin"], "since": since}
    holder = {"operation": "deploy", "pid": _gone_pid(), "command": "npa d", "started": since,
              "terraform": tf}  # fmt: skip
    message = ClusterBusy("c", holder).message
    assert (
        f"Terraform (supervisor pid {me}, `terraform apply plan.bin`, since 2026-05-06 "
        "07:08:09) is still running for deploy by pid"
    ) in message
    assert message.endswith(
        "that npa process is gone (killed or crashed); Terraform was told to stop gracefully "
        "and holds the cluster until it has saved its state"
    )


def test_a_busy_lock_names_its_cluster_and_its_file_to_the_next_command() -> None:
    """Protects what `acquire` hands to the error: the cluster's name and the lock's path
    (the inheritor case tells the user which file to ask `fuser` about)."""
    import fcntl

    lock = ClusterLock("inherit", operation="deploy").acquire()
    lock.path.write_text(json.dumps({"operation": "deploy", "pid": _gone_pid(), "command": "x"}))
    try:
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("inherit", operation="plan").acquire()
        assert caught.value.message.startswith("cluster 'inherit' is busy: its lock ")
        assert f"its lock {lock.path} is held" in caught.value.message
        assert (
            caught.value.hint
            == f"`fuser -v {lock.path}` names that process; stop it, then try again"
        )
    finally:
        lock.release()
    fd = os.open(lock.path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released despite the planted record
    os.close(fd)


def test_the_record_is_informative_a_write_that_fails_never_fails_the_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Protects the OSError guards: a full disk while writing or emptying the record must
    neither fail the operation that holds the lock nor keep the lock after release."""

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    lock = ClusterLock("full", operation="deploy").acquire()
    monkeypatch.setattr(os, "pwrite", full)
    monkeypatch.setattr(os, "ftruncate", full)
    lock.note_child(os.getpid(), ["apply"])  # no error: the flock is the lock
    lock.release()
    monkeypatch.undo()
    assert not is_locked("full")


def test_recording_terraform_before_the_lock_is_taken_writes_nothing() -> None:
    lock = ClusterLock("early", operation="deploy")
    lock.clear_child()
    lock.note_child(os.getpid(), ["plan"])
    assert not lock.path.exists() and not lock.held


def test_the_holder_record_is_read_to_4_kib_only() -> None:
    """Protects the bounded read: a record beyond 4 KiB (a planted file) is not trusted,
    even when the whole of it would be valid JSON."""
    with ClusterLock("big", operation="deploy") as held:
        record = json.dumps({"operation": "deploy", "pid": 1, "pad": ""})
        pad = 4097 - len(record)
        held.path.write_text(json.dumps({"operation": "deploy", "pid": 1, "pad": "x" * pad}))
        assert held.path.stat().st_size == 4097
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("big", operation="plan").acquire()
        assert caught.value.holder == {}


def test_only_the_pool_name_before_the_first_equals_sign_stays_readable() -> None:
    """Protects `partition` (not `rpartition`) in the mask: an ID containing `=` must not
    leave its first part readable; and `=` in other flags is left alone."""
    from npa_sop_tui.home.locks import holder_command

    for flags in (
        ["--capacity-block-group", "gpu=e00abc=def"],
        ["--capacity-block-group=gpu=e00abc=def"],
    ):
        shown = holder_command(["npa", "deploy", *flags, "--spec=c.yaml"])
        assert "e00abc" not in shown and "def" not in shown.replace("deploy", "")
        assert "gpu=***" in shown and shown.endswith(" --spec=c.yaml")
