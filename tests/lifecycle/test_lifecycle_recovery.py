"""Self-recovery after a killed run: the lock names a Terraform that outlived npa, a record
left `running` is settled with the next step, abandoned temp files go; then recovery.py's
rules one by one. The same through real deploys (and SIGHUP handled like Ctrl-C):
test_lifecycle_recovery_e2e.py."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import NpaError, OperationError
from npa_sop_tui.home import inventory
from npa_sop_tui.home.fsutil import DiskFull
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord, RecipeInfo
from npa_sop_tui.home.locks import ClusterBusy, ClusterLock, is_locked, process_alive, process_start
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.lifecycle import recovery
from npa_sop_tui.state.local import LocalStore
from npa_sop_tui.terraform import supervision
from npa_sop_tui.terraform._supervisor import MARK_ENV

from testkit.wait import wait_until

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_process_identity_is_pid_and_start_time() -> None:
    me = os.getpid()
    assert process_alive(me, process_start(me))
    assert not process_alive(me, (process_start(me) or 0) + 1)  # a recycled pid
    assert not process_alive(_dead_pid())


HOLDER = textwrap.dedent(
    """
    import subprocess, sys, time
    from npa_sop_tui.home.locks import ClusterLock
    lock = ClusterLock("leftover", operation="deploy").acquire()
    # Stands in for the Terraform supervisor: it inherits the lock and outlives us.
    child = subprocess.Popen(
        ["sleep", "30"], pass_fds=(lock.fileno(),), start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    lock.note_child(child.pid, ["apply", "-json", "plan.tfplan"])
    print(child.pid, flush=True)
    """
)


def test_a_terraform_left_by_a_killed_npa_is_named(npa_home: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", HOLDER], capture_output=True, text=True, check=True, timeout=30
    )
    leftover = int(out.stdout.split()[0])
    try:
        assert is_locked("leftover")  # npa is gone; its Terraform still holds the cluster
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("leftover", operation="deploy").acquire()
        text = caught.value.render()
        assert f"supervisor pid {leftover}" in text and "terraform apply -json" in text
        assert "that npa process is gone" in text and "saved its state" in text
        assert f"kill -TERM {leftover}" in text
        assert caught.value.exit_code == 2
    finally:
        os.kill(leftover, signal.SIGKILL)  # not our child: whoever adopted it reaps it
    wait_until(lambda: not is_locked("leftover"), timeout=5, what="the lock to go with its holder")
    ClusterLock("leftover", operation="deploy").acquire().release()


def test_a_live_holder_is_named_as_busy() -> None:
    with ClusterLock("busy", operation="deploy"), pytest.raises(ClusterBusy) as caught:
        ClusterLock("busy", operation="plan").acquire()
    assert f"deploy by pid {os.getpid()}" in caught.value.message


def _stale_entry(name: str, state: str, kind: str) -> InventoryEntry:
    entry = InventoryEntry(
        name=name,
        kube_context=f"nebius-{name}-slurm",
        state=state,  # type: ignore[arg-type]
        recipe=RecipeInfo(origin="sandbox", path="/x"),
    )
    entry.record(
        OperationRecord(id=f"{kind}-1", kind=kind, started=time.time() - 60, pid=_dead_pid())  # type: ignore[arg-type]
    )
    inventory.save(entry)
    return entry


def test_list_settles_a_run_that_died_with_the_next_step(npa_home: Path) -> None:
    dead = _stale_entry("killed", "deploying", "deploy").operations[-1].pid
    _stale_entry("halfgone", "destroying", "destroy")
    done = subprocess.run(
        [*NPA, "soperator", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(npa_home)},
        check=True,
    )
    assert "interrupted" in done.stdout
    assert "next for killed: `npa soperator deploy --spec" in done.stdout
    assert "--sandbox" in done.stdout  # the sandbox cluster's commands say so
    assert "next for halfgone: `npa soperator destroy --name halfgone --sandbox`" in done.stdout
    killed = inventory.require("killed")
    assert killed.state == "interrupted" and killed.last_operation.result == "interrupted"
    assert f"pid {dead}" in killed.last_operation.summary
    assert inventory.require("halfgone").state == "destroy-incomplete"


def test_a_running_record_under_a_held_lock_is_left_alone(npa_home: Path) -> None:
    _stale_entry("live", "deploying", "deploy")
    with ClusterLock("live", operation="deploy"):
        (entry,) = [e for e in inventory.list_clusters() if e.name == "live"]
        assert entry.state == "deploying"  # someone holds it: it really is running


# -- recovery.py's rules one by one (no Terraform) -----------------------------------------


def test_free_space_needed_is_a_floor_plus_three_states(tmp_path: Path) -> None:
    """Protects the disk check's arithmetic: a plan and a backup beside the state itself."""
    floor = 16 * 1024 * 1024
    assert floor == recovery.MIN_FREE_BYTES
    assert recovery.required_free_bytes(None) == floor
    assert recovery.required_free_bytes(tmp_path) == floor  # no state yet
    (tmp_path / "terraform.tfstate").write_bytes(b"x" * 1000)
    assert recovery.required_free_bytes(tmp_path) == floor + 3000


def test_a_disk_without_room_refuses_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, install = tmp_path / "home", tmp_path / "install"
    home.mkdir(), install.mkdir()
    free = {home: recovery.MIN_FREE_BYTES, install: recovery.MIN_FREE_BYTES}
    monkeypatch.setattr(recovery, "free_bytes", lambda where: free[where])
    recovery.check_free_space(home, install)  # exactly enough is enough
    free[install] = recovery.MIN_FREE_BYTES - 1
    with pytest.raises(DiskFull) as full:
        recovery.check_free_space(home, install)
    assert full.value.path == install and full.value.free == recovery.MIN_FREE_BYTES - 1
    assert full.value.needed == recovery.MIN_FREE_BYTES
    recovery.check_free_space(home, None)  # the install dir is only checked when given
    free[install] = None  # type: ignore[assignment]  # unknown: not refused
    recovery.check_free_space(home, install)


def _record_running(name: str, install: Path | None, op_id: str = "deploy-9") -> None:
    entry = InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm", state="deploying")
    entry.install_dir = str(install) if install else None
    entry.record(OperationRecord(id=op_id, kind="deploy", started=1.0, result="running",
                                 pid=_dead_pid()))  # fmt: skip
    inventory.save(entry)


def _install_in_home(name: str) -> Path:
    """Where npa puts a cluster's installation in the home (a record's path elsewhere is
    data npa does not follow: tests/home/test_home_recorded_paths.py)."""
    return cluster_dir(name) / "install" / "installations" / name


def test_begin_settles_sweeps_and_reports_the_orphaned_output(
    npa_home: Path, tmp_path: Path
) -> None:
    """Protects the notes the next operation prints: temp files removed in every folder
    npa writes to, the dead run settled (and saved), and where Terraform's output after npa
    died is, with how it ended (the last report wins)."""
    install = _install_in_home("tidy")
    run = supervision.run_dir(install)
    run.mkdir(parents=True)
    _record_running("tidy", install)
    dead = _dead_pid()
    for folder in (npa_home, cluster_dir("tidy"), install, run):
        (folder / f".x.json.{dead}-abcd1234.tmp").write_text("partial")
    spool = supervision.spool_path(install, "deploy-9")
    spool.write_text(
        "line\n# npa supervisor: Terraform exited with 2\n"
        "# npa supervisor: Terraform exited with 3\n"
        "# npa supervisor: Terraform exited with 1\n"
    )
    lock = ClusterLock("tidy", operation="plan")
    notes = recovery.begin(lock, "tidy")
    try:
        assert notes[0] == "removed 4 temp file(s) left by interrupted writes"
        assert notes[1].startswith("deploy deploy-9 did not finish")
        assert notes[2] == (
            "after npa stopped, its supervisor stopped Terraform gracefully (Terraform exited "
            f"with 1); Terraform's output from then on is in {spool}"
        )
        assert len(notes) == 3
        assert inventory.require("tidy").state == "interrupted"
    finally:
        lock.release()


def test_an_orphaned_run_that_never_reported_says_so_and_none_says_nothing(
    npa_home: Path, tmp_path: Path
) -> None:
    install = tmp_path / "install"
    install.mkdir()
    assert recovery._orphan_report(install, "op-1") == []
    spool = supervision.spool_path(install, "op-1")
    spool.parent.mkdir()
    spool.write_text("partial output\n")
    (report,) = recovery._orphan_report(install, "op-1")
    assert "gracefully (Terraform did not report);" in report
    # Terraform's output is not always valid UTF-8: still reported, never a crash
    spool.write_bytes(b"\xff\xfe junk\n# npa supervisor: Terraform exited with 1\n")
    (report,) = recovery._orphan_report(install, "op-1")
    assert "gracefully (Terraform exited with 1);" in report
    _record_running("quiet", install, op_id="op-2")  # settled, but no spool of its own
    lock = ClusterLock("quiet", operation="plan")
    notes = recovery.begin(lock, "quiet")
    lock.release()
    assert len(notes) == 1 and notes[0].startswith("deploy op-2 did not finish")


def test_begin_without_anything_left_over_says_nothing_and_holds_the_lock(
    npa_home: Path,
) -> None:
    inventory.save(InventoryEntry(name="clean", kube_context="nebius-clean-slurm"))
    lock = ClusterLock("clean", operation="plan")
    assert recovery.begin(lock, "clean") == []
    try:
        assert is_locked("clean")
    finally:
        lock.release()
    assert recovery.begin(ClusterLock("new", operation="plan"), "new") == []


def test_begin_gives_the_lock_back_when_the_disk_is_full(
    npa_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects "the lock is not held when it raises", and that the check looks at the
    installation folder (where Terraform writes) too."""
    install = _install_in_home("full")
    install.mkdir(parents=True)
    _record_running("full", install)
    monkeypatch.setattr(recovery, "free_bytes", lambda where: 0 if where == install else None)
    with pytest.raises(DiskFull) as full:
        recovery.begin(ClusterLock("full", operation="deploy"), "full")
    assert full.value.path == install
    assert not is_locked("full")
    assert inventory.require("full").state == "deploying"  # refused before settling


def test_the_disk_check_counts_the_installations_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the room asked of each disk checked, the cluster's folder's too: the floor
    plus three times the installation's state (the state, a plan and a backup)."""
    home, install = tmp_path / "home", tmp_path / "install"
    home.mkdir(), install.mkdir()
    (install / "terraform.tfstate").write_bytes(b"x" * 1000)
    needed = recovery.MIN_FREE_BYTES + 3000
    free = {home: needed, install: needed}
    monkeypatch.setattr(recovery, "free_bytes", lambda where: free[where])
    recovery.check_free_space(home, install)
    free[home] = needed - 1
    with pytest.raises(DiskFull) as full:
        recovery.check_free_space(home, install)
    assert full.value.path == home and full.value.needed == needed


class _RecordingStore(LocalStore):
    """The local store, noting each record read and saved: which store begin() uses."""

    def __init__(self) -> None:
        super().__init__()
        self.got: list[str] = []
        self.saved: list[str] = []

    def get(self, name: str) -> InventoryEntry | None:
        self.got.append(name)
        return super().get(name)

    def save(self, entry: InventoryEntry) -> None:
        self.saved.append(entry.name)
        super().save(entry)


def test_begin_reads_and_settles_the_record_in_the_store_it_is_given(npa_home: Path) -> None:
    """Protects `store`: a cluster whose records are the team's is settled in the team's
    bucket, not in a local record of the same name."""
    _record_running("shared", None)
    store = _RecordingStore()
    lock = ClusterLock("shared", operation="plan")
    try:
        (note,) = recovery.begin(lock, "shared", store)
    finally:
        lock.release()
    assert note.startswith("deploy deploy-9 did not finish")
    assert store.got == ["shared"] and store.saved == ["shared"]


def test_an_installation_folder_not_made_yet_is_not_measured(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the disk check's folders: a recorded installation that does not exist (yet,
    or any more) is not measured; its nearest folder is the home's, measured already."""
    install = _install_in_home("unmade")
    _record_running("unmade", install)
    measured: list[Path] = []

    def free(where: Path) -> int:
        measured.append(where)
        return 0 if where == install else recovery.MIN_FREE_BYTES

    monkeypatch.setattr(recovery, "free_bytes", free)
    lock = ClusterLock("unmade", operation="plan")
    try:
        recovery.begin(lock, "unmade")
    finally:
        lock.release()
    assert measured == [cluster_dir("unmade")]


def test_a_mark_names_the_supervisor_pid_before_its_first_colon() -> None:
    """Protects how a process's `NPA_SUPERVISOR=<pid>:<start ticks>` is read: only a gone
    supervisor (a dead pid, or a live pid started at another time: recycled) makes it an
    orphan; an unmarked process, a live supervisor and a mark naming no pid do not."""
    dead, me = _dead_pid(), os.getpid()
    start = process_start(me)

    def env(*entries: str) -> str:
        return "\0".join(["PATH=/usr/bin", *entries, "HOME=/root"])

    assert recovery._supervisor_gone(env(f"{MARK_ENV}={dead}:123"))
    assert recovery._supervisor_gone(env(f"{MARK_ENV}={dead}:"))  # start unknown
    assert recovery._supervisor_gone(env(f"{MARK_ENV}={me}:{(start or 0) + 1}"))  # recycled
    assert not recovery._supervisor_gone(env(f"{MARK_ENV}={me}:{start}"))
    assert not recovery._supervisor_gone(env(f"{MARK_ENV}={me}:"))
    assert not recovery._supervisor_gone(env())
    assert not recovery._supervisor_gone(env(f"X{MARK_ENV}={dead}:1", f"{MARK_ENV}X={dead}:1"))
    assert not recovery._supervisor_gone(env(f"{MARK_ENV}=abc:1"))
    # the pid is what comes before the first colon, the value what follows the first "="
    assert recovery._supervisor_gone(env(f"{MARK_ENV}={dead}:1:2"))  # start unreadable
    assert not recovery._supervisor_gone(env(f"{MARK_ENV}=7={dead}:1"))  # "7=…" is no pid
    # the first mark counts (a process has one; its supervisor set it last)
    assert not recovery._supervisor_gone(env(f"{MARK_ENV}={me}:{start}", f"{MARK_ENV}={dead}:"))


def test_a_process_belongs_to_the_folder_it_runs_in_or_below() -> None:
    assert recovery._inside("/srv/inst", "/srv/inst")
    assert recovery._inside("/srv/inst/sub/deeper", "/srv/inst")
    assert not recovery._inside("/srv/instx", "/srv/inst")  # shares the prefix only
    assert not recovery._inside("/srv", "/srv/inst")
    assert not recovery._inside("", "/srv/inst")  # a gone process's folder reads empty


def test_an_orphan_gone_before_its_kill_is_passed_over_without_a_note() -> None:
    """Protects the stop: a process that exited between being found and being killed is not
    an error (npa's next operation must start) and is not reported as stopped."""
    assert recovery._stop_orphans([str(_dead_pid())]) == []
    live = subprocess.Popen(["sleep", "60"])
    try:
        notes = recovery._stop_orphans([str(_dead_pid()), str(live.pid)])
        assert notes == [f"stopped sleep (pid {live.pid}), left running by an earlier run"]
        assert live.wait(timeout=30) == -signal.SIGKILL
    finally:
        live.kill()
        live.wait()


def _sleeper(cwd: Path, mark: str | None) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ["PATH"]}
    if mark is not None:
        env[MARK_ENV] = mark
    return subprocess.Popen(["sleep", "60"], cwd=cwd, env=env)


def test_reap_orphans_stops_only_processes_of_a_run_whose_supervisor_is_gone(
    tmp_path: Path,
) -> None:
    install = tmp_path / "install"
    (install / "sub").mkdir(parents=True)
    sibling = tmp_path / "installx"  # shares the prefix, not the folder
    sibling.mkdir()
    dead, me = _dead_pid(), os.getpid()
    orphans = [_sleeper(install, f"{dead}:123"), _sleeper(install / "sub", f"{dead}:")]
    spared = [
        _sleeper(install, f"{me}:{process_start(me)}"),  # its supervisor is alive
        _sleeper(install, None),  # not a supervised run's
        _sleeper(install, "abc:1"),  # a mark that is no pid
        _sleeper(sibling, f"{dead}:1"),
    ]
    try:
        notes = recovery.reap_orphans(install)
        assert sorted(notes) == sorted(
            f"stopped sleep (pid {p.pid}), left running by an earlier run" for p in orphans
        )
        for proc in orphans:
            assert proc.wait(timeout=30) == -signal.SIGKILL
        assert all(proc.poll() is None for proc in spared)
    finally:
        for proc in orphans + spared:
            proc.kill()
            proc.wait()


def test_a_process_of_a_recycled_supervisor_pid_is_an_orphan(tmp_path: Path) -> None:
    """The mark carries the supervisor's start time: a live process reusing its pid is not it."""
    me = os.getpid()
    orphan = _sleeper(tmp_path, f"{me}:{(process_start(me) or 0) + 1}")
    try:
        assert len(recovery.reap_orphans(tmp_path)) == 1
        assert orphan.wait(timeout=30) == -signal.SIGKILL
    finally:
        orphan.kill()
        orphan.wait()


def test_proc_fields_of_a_gone_process_read_empty() -> None:
    gone = str(_dead_pid())
    assert recovery._proc_field(gone, "cwd") == "" and recovery._proc_field(gone, "cmdline") == ""
    assert recovery._proc_field(str(os.getpid()), "cwd") == os.getcwd()
    # A child of our own, whose command line nothing rewrites (xdist may retitle this
    # process). Popen returns when the exec has closed its pipe, a moment before the kernel
    # has set up the new command line: wait for it.
    child = subprocess.Popen(["sleep", "30"])
    try:
        deadline = time.monotonic() + 30
        while not recovery._proc_field(str(child.pid), "cmdline") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert recovery._proc_field(str(child.pid), "cmdline").split("\0")[:2] == ["sleep", "30"]
    finally:
        child.kill()
        child.wait()


STATE = {"version": 4, "serial": 3, "lineage": "L1", "resources": []}


def test_a_process_environment_that_is_not_utf8_is_read_not_refused(tmp_path: Path) -> None:
    """Protects `/proc` reads: an environment (or command line) is any bytes; an undecodable
    one is read with replacement characters, never an error that stops the next operation."""
    child = subprocess.Popen(
        ["sleep", "30"], env={b"PATH": os.environb[b"PATH"], b"ODD": b"caf\xe9"}
    )
    try:
        deadline = time.monotonic() + 30
        while "ODD=" not in recovery._proc_field(str(child.pid), "environ"):
            assert time.monotonic() < deadline, "the child's environment never showed"
            time.sleep(0.01)
        assert "ODD=caf\ufffd" in recovery._proc_field(str(child.pid), "environ").split("\0")
    finally:
        child.kill()
        child.wait()


# Python in the C locale without UTF-8 mode: the locale's encoding is ASCII.
ASCII_LOCALE = {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}


def _in_the_c_locale(code: str, *args: str) -> str:
    """Run `code` with `recovery` imported in a Python whose locale encoding is ASCII; it
    prints one line, returned here (ASCII-escaped, so the pipe's encoding does not matter)."""
    env = {**os.environ, **ASCII_LOCALE}
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom npa_sop_tui.lifecycle import recovery\n" + code,
         *args],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_orphaned_runs_spool_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """Terraform writes UTF-8; the report quotes its last line as written, in any locale."""
    spool = supervision.spool_path(tmp_path, "op-1")
    spool.parent.mkdir()
    spool.write_text("# npa supervisor: Terraform exited with 1 (café)\n", encoding="utf-8")
    (report,) = recovery._orphan_report(tmp_path, "op-1")
    assert "(Terraform exited with 1 (café));" in report
    code = "print(ascii(recovery._orphan_report(__import__('pathlib').Path(sys.argv[1]), 'op-1')))"
    assert _in_the_c_locale(code, str(tmp_path)) == ascii([report])


def test_a_readable_state_with_non_ascii_text_is_left_alone_whatever_the_locale(
    tmp_path: Path,
) -> None:
    """A state holding UTF-8 text (a description, a tag) is readable: not replaced by an
    older dump because the locale's encoding is not UTF-8."""
    state = tmp_path / "terraform.tfstate"
    state.write_text(json.dumps({**STATE, "note": "café"}, ensure_ascii=False), encoding="utf-8")
    _dump(tmp_path, "errored.tfstate", {**STATE, "serial": 9}, age=1)
    notes: list[str] = []
    recovery.restore_state_file(tmp_path, notes.append)
    assert notes == []
    code = (
        "notes = []\n"
        "recovery.restore_state_file(__import__('pathlib').Path(sys.argv[1]), notes.append)\n"
        "print(ascii(notes))"
    )
    assert _in_the_c_locale(code, str(tmp_path)) == "[]"
    assert json.loads(state.read_text(encoding="utf-8"))["serial"] == 3


def _dump(install: Path, name: str, state: dict[str, Any], age: float) -> Path:
    path = install / name
    path.write_text(json.dumps(state))
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_a_missing_state_is_restored_from_the_newest_dump(tmp_path: Path) -> None:
    notes: list[str] = []
    recovery.restore_state_file(tmp_path, notes.append)  # no dumps: nothing to do
    assert notes == [] and not (tmp_path / "terraform.tfstate").exists()
    _dump(tmp_path, "errored.tfstate", {**STATE, "serial": 4}, age=60)
    newest = _dump(tmp_path, "errored-2.tfstate", {**STATE, "serial": 5}, age=10)
    (tmp_path / "errored-empty.tfstate").write_text("")  # empty: not a dump
    one_byte = tmp_path / "errored-1.tfstate"
    one_byte.write_text("{")
    os.utime(one_byte, (time.time() - 90, time.time() - 90))
    assert recovery._errored_dumps(tmp_path)[0] == one_byte  # non-empty: a dump, oldest first
    recovery.restore_state_file(tmp_path, notes.append)
    state = tmp_path / "terraform.tfstate"
    assert json.loads(state.read_text())["serial"] == 5
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    run = supervision.run_dir(tmp_path)
    kept = sorted(p.name for p in run.iterdir() if p.name.endswith(".tfstate"))
    assert sorted(k.split("-restored-")[0] for k in kept) == ["errored", "errored-1", "errored-2"]
    assert not newest.exists() and (tmp_path / "errored-empty.tfstate").exists()
    assert notes == [
        f"restored terraform.tfstate from the state Terraform could not save ({newest.name}); "
        f"the saved dumps are kept in {run}"
    ]


def test_a_cut_short_state_is_set_aside_and_a_readable_one_is_left_alone(
    tmp_path: Path,
) -> None:
    state = tmp_path / "terraform.tfstate"
    state.write_text(json.dumps(STATE))
    _dump(tmp_path, "errored.tfstate", {**STATE, "serial": 9}, age=1)
    notes: list[str] = []
    recovery.restore_state_file(tmp_path, notes.append)
    assert notes == [] and json.loads(state.read_text())["serial"] == 3
    state.write_text('{"version": 4, "ser')
    recovery.restore_state_file(tmp_path, notes.append)
    assert json.loads(state.read_text())["serial"] == 9
    (broken,) = supervision.run_dir(tmp_path).glob("terraform-unreadable-*.tfstate")
    assert broken.read_text() == '{"version": 4, "ser'
    assert f"(the unreadable one is kept as {broken})" in notes[0]


def test_newer_of_the_same_lineage_decides_the_force_push(tmp_path: Path) -> None:
    state = tmp_path / "terraform.tfstate"
    state.write_text(json.dumps(STATE))
    cases = [
        ({**STATE, "serial": 3}, True),  # same serial: the dump is the final state
        ({**STATE, "serial": 4}, True),
        ({**STATE, "serial": 2}, False),
        ({**STATE, "lineage": "other", "serial": 9}, False),
        ({"serial": 9}, False),  # no lineage
    ]
    for dump_state, newer in cases:
        dump = _dump(tmp_path, "errored.tfstate", dump_state, age=0)
        assert recovery._newer_of_same_lineage(dump, state) is newer, dump_state
    no_serial = _dump(tmp_path, "errored.tfstate", {"lineage": "L1"}, age=0)
    state.write_text(json.dumps({"lineage": "L1"}))
    assert recovery._newer_of_same_lineage(no_serial, state) is True  # both 0
    state.write_text(json.dumps({"lineage": "L1", "serial": 1}))
    assert recovery._newer_of_same_lineage(no_serial, state) is False  # 0 < 1
    state.write_text("{cut")
    assert recovery._newer_of_same_lineage(no_serial, state) is False


async def test_dumps_are_pushed_oldest_first_forced_only_when_newer(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfstate").write_text(json.dumps(STATE))
    old = _dump(tmp_path, "errored.tfstate", {**STATE, "lineage": "other"}, age=60)
    new = _dump(tmp_path, "errored-2.tfstate", {**STATE, "serial": 3}, age=10)
    calls: list[tuple[list[str], Path]] = []

    async def capture(args: list[str], *, cwd: Path) -> tuple[int, str, str]:
        calls.append((list(args), cwd))
        return 0, "", ""

    notes: list[str] = []
    await recovery.push_errored_state(capture, tmp_path, notes.append)
    assert calls == [
        (["state", "push", old.name], tmp_path),
        (["state", "push", "-force", new.name], tmp_path),
    ]
    assert not old.exists() and not new.exists()
    kept = sorted(supervision.run_dir(tmp_path).glob("*-pushed-*.tfstate"))
    assert len(kept) == 2 and len(notes) == 2
    assert notes[0].startswith(f"pushed the state Terraform could not save ({old.name}) back")
    assert notes[0].endswith(f"the file is kept as {supervision.run_dir(tmp_path)}/" +
                             notes[0].rsplit("/", 1)[1])  # fmt: skip


async def test_a_refused_push_names_the_dump_and_how_to_finish_by_hand(tmp_path: Path) -> None:
    dump = _dump(tmp_path, "errored.tfstate", STATE, age=0)

    async def refuses(args: list[str], *, cwd: Path) -> tuple[int, str, str]:
        return 1, "", '  Error: cannot import state with lineage "L1" ' + "x" * 500 + "\n"

    with pytest.raises(OperationError) as refused:
        await recovery.push_errored_state(refuses, tmp_path, lambda _: None)
    message = refused.value.message
    assert message.startswith(f"Terraform's saved state {dump} could not be pushed back: ")
    assert message == f"Terraform's saved state {dump} could not be pushed back: " + "x" * 400
    assert refused.value.hint == (
        f"compare it with {tmp_path / 'terraform.tfstate'}; if it is the newer one, "
        f"`cd {tmp_path} && terraform state push -force {dump.name}`, then run the command again"
    )
    assert dump.exists()

    async def silent(args: list[str], *, cwd: Path) -> tuple[int, str, str]:
        return 7, "", "  \n"

    with pytest.raises(OperationError) as quiet:
        await recovery.push_errored_state(silent, tmp_path, lambda _: None)
    assert quiet.value.message.endswith("could not be pushed back: exit 7")


def test_a_raw_no_space_error_becomes_one_disk_full(tmp_path: Path, npa_home: Path) -> None:
    import errno

    full = DiskFull(tmp_path, needed=1)
    assert recovery.translate_error(full) is full
    named = recovery.translate_error(OSError(errno.ENOSPC, "No space", str(tmp_path / "f")))
    assert isinstance(named, DiskFull) and named.path == tmp_path / "f"
    assert named.needed == recovery.MIN_FREE_BYTES
    (tmp_path / "terraform.tfstate").write_bytes(b"x" * 100)
    quota = recovery.translate_error(OSError(errno.EDQUOT, "Quota"), tmp_path)
    assert isinstance(quota, DiskFull) and quota.path == tmp_path
    assert quota.needed == recovery.MIN_FREE_BYTES + 300  # the installation's state counts
    unnamed = recovery.translate_error(OSError(errno.ENOSPC, "No space"))
    assert isinstance(unnamed, DiskFull) and unnamed.path == npa_home
    other = OSError(errno.EACCES, "denied")
    assert recovery.translate_error(other) is other
    plain = NpaError("no space left on device")  # not flagged by the runner: unchanged
    assert recovery.translate_error(plain) is plain


def test_terraforms_no_space_names_the_file_and_the_kept_state(tmp_path: Path) -> None:
    """Protects the message a Terraform run that filled the disk ends in: the file Terraform
    could not write (relative names are in the installation), and where its state was kept."""
    failed = OperationError(
        "Error: Failed to save state: write terraform.tfstate: no space left on device"
    )
    failed.no_space = True  # type: ignore[attr-defined]
    failed.errored_state = str(tmp_path / "errored.tfstate")  # type: ignore[attr-defined]
    (tmp_path / "terraform.tfstate").write_bytes(b"x" * 100)
    full = recovery.translate_error(failed, tmp_path)
    assert isinstance(full, DiskFull) and full.path == tmp_path / "terraform.tfstate"
    assert full.needed == recovery.MIN_FREE_BYTES + 300
    assert full.message.startswith(f"disk full: cannot write {tmp_path / 'terraform.tfstate'}")
    assert full.message.endswith(
        f"; Terraform could not save its state, npa kept it in {tmp_path / 'errored.tfstate'} "
        "and pushes it back on the next run"
    )
    assert full.errored_state == str(tmp_path / "errored.tfstate")  # type: ignore[attr-defined]
    opened = OperationError("open /var/x/plan.tfplan: no space left on device")
    opened.no_space = True  # type: ignore[attr-defined]
    full = recovery.translate_error(opened, tmp_path)
    assert isinstance(full, DiskFull) and full.path == Path("/var/x/plan.tfplan")
    assert "Terraform could not save" not in full.message
    assert full.errored_state is None  # type: ignore[attr-defined]
    unplaced = recovery.translate_error(failed)  # no installation: the name as Terraform gave it
    assert isinstance(unplaced, DiskFull) and unplaced.path == Path("terraform.tfstate")
    vague = OperationError("no space left on device")
    vague.no_space = True  # type: ignore[attr-defined]
    full = recovery.translate_error(vague, tmp_path)
    assert isinstance(full, DiskFull) and full.path == tmp_path


def test_the_disk_full_message_measures_the_disk_terraform_wrote_to(
    tiny_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terraform names the file it could not write relative to its folder: the message
    measures that folder's disk (the failure says where Terraform ran), not the disk of
    whatever folder npa was started in."""
    from npa_sop_tui.events import Diagnostic
    from npa_sop_tui.lifecycle.results import TerraformFailed
    from npa_sop_tui.terraform.run_result import RunResult

    from testkit.disks import fill

    disk = tiny_disk
    install = disk / "install"
    install.mkdir()
    fill(disk)
    monkeypatch.chdir(tmp_path)  # npa runs from a folder on another, roomy disk
    said = "Failed to save state: write terraform.tfstate: no space left on device"
    run = RunResult(args=["apply"], returncode=1, duration=1.0, no_space=True,
                    errors=[Diagnostic(ts=0, operation_id="o", severity="error",
                                       summary="Error", detail=said)])  # fmt: skip
    full = recovery.translate_error(TerraformFailed("apply", run, install))  # no dir given
    assert isinstance(full, DiskFull) and full.path == install / "terraform.tfstate"
    assert full.free == 0 and f"(0 B free on {disk};" in full.message


def test_an_incomplete_operation_log_is_named(tmp_path: Path) -> None:
    assert recovery.log_warning(None) is None

    class Log:
        path = tmp_path / "op.ndjson"
        failed: OSError | None = None

    log = Log()
    assert recovery.log_warning(log) is None  # type: ignore[arg-type]
    log.failed = OSError(28, "No space left on device")
    assert recovery.log_warning(log) == (  # type: ignore[arg-type]
        f"the operation log {log.path} is incomplete: No space left on device"
    )
    log.failed = OSError("plain")
    assert recovery.log_warning(log).endswith("is incomplete: plain")  # type: ignore[arg-type, union-attr]
