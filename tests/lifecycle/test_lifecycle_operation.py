"""lifecycle/operation.py: one operation's bookkeeping on every exit path (the lock, the
redacted event log, the inventory record, exactly one final event), with the local store of
the test's npa home. A failure's text is shown masked wherever it lands: the final event,
the record's summary, the NDJSON log and the HTML report made from them."""

from __future__ import annotations

import asyncio
import calendar
import errno
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.errors import NpaError, OperationError, UsageError
from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    OperationFinished,
    Outputs,
    PhaseChanged,
    ResourceFailed,
    ResourceFinished,
    ResourceStarted,
)
from npa_sop_tui.home import inventory
from npa_sop_tui.home.fsutil import DiskFull
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.home.locks import ClusterBusy, is_locked
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.lifecycle.operation import Operation, Rollback, operation
from npa_sop_tui.lifecycle.results import DestructivePlanError
from npa_sop_tui.redact import MASK, Redactor
from npa_sop_tui.state.local import LocalStore

SECRET = "pa'ss\\w0rd-7Hq2"  # a password may hold quotes and backslashes


def _entry(state: str = "deployed") -> InventoryEntry:
    entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm", state=state)  # type: ignore[arg-type]
    inventory.save(entry)
    return entry


def _run(
    kind: str, body: Any, *, secrets: tuple[str, ...] = (), store: Any = None
) -> tuple[list[Event], Operation | None, BaseException | None]:
    """Run `body(op)` inside one operation; the events it emitted, the operation and what it
    raised."""
    events: list[Event] = []
    holder: list[Operation] = []
    try:
        with operation(kind, "demo", events.append, Redactor(secrets, environ={}), store) as op:  # type: ignore[arg-type]
            holder.append(op)
            body(op)
    except BaseException as exc:  # what left the operation is what the test looks at
        return events, holder[0] if holder else None, exc
    return events, holder[0], None


def _raise(exc: BaseException) -> Any:
    def body(op: Operation) -> None:
        raise exc

    return body


def _final(events: list[Event]) -> OperationFinished:
    finished = [e for e in events if isinstance(e, OperationFinished)]
    assert len(finished) == 1, finished
    return finished[0]


def _log_lines(op: Operation) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(str(op.log_path)).read_text().splitlines()]


@pytest.mark.parametrize(
    "failure",
    [
        OperationError(f"terraform apply failed: login with {SECRET} refused"),
        RuntimeError(f"unexpected answer, password {SECRET} and more"),
    ],
    ids=["our-error", "internal-error"],
)
def test_an_operation_failing_with_a_secret_in_its_exception_shows_it_masked_everywhere(
    failure: BaseException, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry()
    events, op, raised = _run("deploy", _raise(failure), secrets=(SECRET,))
    assert raised is failure and op is not None
    final = _final(events)
    assert SECRET not in final.message and MASK in final.message
    record = inventory.require("demo").last_operation
    assert record is not None and record.id == op.id and record.result == "failed"
    assert SECRET not in record.summary and MASK in record.summary
    log = Path(str(op.log_path)).read_text()
    assert SECRET not in log and MASK in log
    assert json.loads(log.splitlines()[-1])["message"] == final.message
    page = tmp_path / "report.html"
    assert main(["soperator", "report", "--name", "demo", "--out", str(page), "--no-status"]) == 0
    html = page.read_text()
    assert SECRET not in html and MASK in html
    assert SECRET not in capsys.readouterr().out


def test_an_internal_error_names_its_type_and_text() -> None:
    _entry()
    events, _, _ = _run("deploy", _raise(KeyError("missing")))
    assert _final(events).message == "internal error: KeyError: 'missing'"


def test_a_successful_operation_records_ok_and_its_message() -> None:
    _entry()

    def body(op: Operation) -> None:
        assert is_locked("demo")
        op.phase("apply", "Applying")
        op.message = "deployed demo\nsecond line"

    events, op, raised = _run("deploy", body)
    assert raised is None and op is not None and not is_locked("demo")
    assert [e.kind for e in events] == [
        "operation_started",
        "phase_changed",
        "phase_changed",
        "operation_finished",
    ]
    assert events[0].operation_id == op.id and events[0].name == "demo"  # type: ignore[attr-defined]
    assert op.phases == ["apply", "done"]
    done = events[2]
    assert isinstance(done, PhaseChanged) and (done.phase, done.label) == ("done", "deploy ok")
    final = _final(events)
    assert (final.result, final.message) == ("ok", "deployed demo\nsecond line")
    assert 0 <= final.duration < 60
    entry = inventory.require("demo")
    record = entry.last_operation
    assert record is not None and (record.result, record.summary) == ("ok", "deployed demo")
    assert record.ended is not None and record.started <= record.ended
    assert record.pid == os.getpid() and record.user and record.host
    assert entry.state == "deployed"  # an ok deploy's state is set by deploy itself
    assert [e["kind"] for e in _log_lines(op)] == [e.kind for e in events]
    assert stat.S_IMODE(Path(str(op.log_path)).stat().st_mode) == 0o600


def test_an_operation_id_names_its_kind_and_time() -> None:
    _, op, _ = _run("plan", lambda op: None)
    assert op is not None
    kind, stamp, suffix = op.id.split("-")
    assert kind == "plan" and len(stamp) == 15 and stamp[8] == "T" and len(suffix) == 6
    assert op.record.kind == "plan" and op.kind == "plan" and op.name == "demo"
    assert op.duration >= 0 and op.lock is op._lock


def test_without_a_message_the_summary_is_the_result() -> None:
    _entry()
    _run("deploy", lambda op: None)
    record = inventory.require("demo").last_operation
    assert record is not None and record.summary == "ok"


def test_a_long_first_line_is_cut_in_the_summary_not_in_the_event() -> None:
    _entry()

    def body(op: Operation) -> None:
        op.message = "x" * 400

    events, _, _ = _run("deploy", body)
    record = inventory.require("demo").last_operation
    assert record is not None and record.summary == "x" * 300
    assert _final(events).message == "x" * 400


@pytest.mark.parametrize(
    ("kind", "failure", "state", "result", "message"),
    [
        ("deploy", OperationError("apply failed"), "failed", "failed", "apply failed"),
        ("destroy", OperationError("gone wrong"), "destroy-incomplete", "failed", "gone wrong"),
        ("deploy", KeyboardInterrupt(), "interrupted", "interrupted",
         "interrupted by the user"),
        ("destroy", asyncio.CancelledError("SIGTERM"), "destroy-incomplete", "interrupted",
         "interrupted by SIGTERM"),
        ("plan", OperationError("plan failed"), "deployed", "failed", "plan failed"),
    ],
)  # fmt: skip
def test_a_failure_sets_the_state_its_kind_leaves_behind(
    kind: str, failure: BaseException, state: str, result: str, message: str
) -> None:
    _entry()
    events, _, raised = _run(kind, _raise(failure))
    assert raised is failure
    final = _final(events)
    assert (final.result, final.message) == (result, message)
    entry = inventory.require("demo")
    assert entry.state == state
    assert entry.last_operation is not None and entry.last_operation.result == result
    done = [e for e in events if isinstance(e, PhaseChanged)][-1]
    assert done.label == f"{kind} {result}"
    assert not is_locked("demo")


def test_a_refused_destructive_plan_leaves_the_state_as_it_was() -> None:
    _entry("deployed")

    def body(op: Operation) -> None:
        op.entry.state = "deploying"  # type: ignore[union-attr]
        op.save_entry()
        raise DestructivePlanError(["module.k8s.a"], "phase-1")

    _run("deploy", body)
    assert inventory.require("demo").state == "deployed"


def test_a_degraded_deploy_keeps_the_state_deploy_gave_it() -> None:
    from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded

    _entry()

    class Result:
        name = "demo"
        validation: dict[str, Any] = {"pool": "gpu"}  # noqa: RUF012

    def body(op: Operation) -> None:
        op.applied = True
        op.entry.state = "degraded-validation"  # type: ignore[union-attr]
        raise DeploymentDegraded(Result())

    _, _, raised = _run("deploy", body)
    assert isinstance(raised, DeploymentDegraded)
    entry = inventory.require("demo")
    assert entry.state == "degraded-validation" and entry.last_operation.result == "failed"  # type: ignore[union-attr]


def test_a_first_deploy_without_a_record_records_nothing() -> None:
    events, op, raised = _run("deploy", _raise(OperationError("no")))
    assert isinstance(raised, OperationError) and op is not None and op.entry is None
    assert inventory.get("demo") is None and _final(events).result == "failed"
    assert op.prev_state is None


def test_a_raw_full_disk_becomes_one_disk_full_error() -> None:
    _entry()
    full = OSError(errno.ENOSPC, "No space left on device", "/x/terraform.tfstate")
    events, _, raised = _run("deploy", _raise(full))
    assert isinstance(raised, DiskFull) and raised.__cause__ is None
    assert raised.__suppress_context__
    assert _final(events).message.startswith("disk full: cannot write /x/terraform.tfstate")


def test_a_lost_lock_fails_an_operation_that_otherwise_succeeded() -> None:
    _entry()

    def body(op: Operation) -> None:
        op.message = "deployed"
        op.lock.lost = "the lock was broken by alice on laptop"  # type: ignore[attr-defined]

    events, _, raised = _run("deploy", body)
    assert isinstance(raised, OperationError)
    assert raised.message == "the lock was broken by alice on laptop"
    final = _final(events)
    assert (final.result, final.message) == ("failed", "the lock was broken by alice on laptop")
    assert inventory.require("demo").state == "failed"


def test_a_lost_lock_does_not_hide_the_operations_own_failure() -> None:
    _entry()

    def body(op: Operation) -> None:
        op.lock.lost = "broken"  # type: ignore[attr-defined]
        raise OperationError("apply failed")

    events, _, raised = _run("deploy", body)
    assert isinstance(raised, OperationError) and raised.message == "apply failed"
    assert _final(events).message == "apply failed"


class _UnsavableStore(LocalStore):
    """The team's bucket went away: the record cannot be written."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse = False

    def save(self, entry: InventoryEntry) -> None:
        if self.refuse:
            raise OperationError("cannot write the record: the bucket is gone")
        super().save(entry)


def test_a_record_that_cannot_be_saved_fails_a_successful_operation() -> None:
    store = _UnsavableStore()
    _entry()

    def body(op: Operation) -> None:
        op.message = "deployed"
        store.refuse = True

    events, _, raised = _run("deploy", body, store=store)
    assert isinstance(raised, OperationError)
    assert raised.message == "cannot write the record: the bucket is gone"
    final = _final(events)
    assert (final.result, final.message) == (
        "failed",
        "cannot write the record: the bucket is gone",
    )


def test_a_record_that_cannot_be_saved_is_added_to_a_failures_message() -> None:
    store = _UnsavableStore()
    _entry()

    def body(op: Operation) -> None:
        store.refuse = True
        raise OperationError("apply failed")

    events, _, raised = _run("deploy", body, store=store)
    assert isinstance(raised, OperationError) and raised.message == "apply failed"
    assert _final(events).message == ("apply failed\ncannot write the record: the bucket is gone")


def test_a_busy_cluster_is_refused_before_anything_is_recorded() -> None:
    _entry()
    with operation("deploy", "demo", None, Redactor(environ={})):
        events, op, raised = _run("deploy", lambda op: None)
    assert isinstance(raised, ClusterBusy) and op is None and events == []
    assert not is_locked("demo")


def test_leftovers_of_an_interrupted_run_are_reported_as_warnings() -> None:
    _entry()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (cluster_dir("demo") / f".inventory.json.{dead.pid}-abc123_x.tmp").write_text("x")
    events, _, _ = _run("plan", lambda op: None)
    warnings = [e for e in events if isinstance(e, Diagnostic)]
    assert [(w.severity, w.summary) for w in warnings] == [
        ("warning", "removed 1 temp file(s) left by interrupted writes")
    ]
    assert events[0].kind == "operation_started"


def test_a_start_that_fails_after_the_lock_releases_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _entry()

    def broken(*args: Any) -> Any:
        raise UsageError("no event log here")

    monkeypatch.setattr(LocalStore, "event_log", broken)
    with (
        pytest.raises(UsageError, match="no event log here"),
        operation("deploy", "demo", None, Redactor(environ={})),
    ):
        pass
    assert not is_locked("demo")


def test_an_incomplete_log_is_reported_before_the_end() -> None:
    _entry()

    def body(op: Operation) -> None:
        assert op._log is not None
        op._log.failed = OSError(errno.EIO, "Input/output error")

    events, op, _ = _run("deploy", body)
    assert op is not None
    warning = [e for e in events if isinstance(e, Diagnostic)][-1]
    assert warning.summary == (f"the operation log {op.log_path} is incomplete: Input/output error")
    assert events[-1].kind == "operation_finished"


def test_events_from_outside_are_redacted_and_the_expected_warnings_calmed() -> None:
    _entry()
    seen: list[Event] = []

    def body(op: Operation) -> None:
        op.observe(seen.append)
        op.observe(None)
        op.emit(LogLine(operation_id=op.id, stream="terraform", text=f"token {SECRET}"))
        op.emit(Diagnostic(operation_id=op.id, severity="warning", summary=f"x {SECRET}"))
        op.emit(Outputs(operation_id=op.id, outputs={"password": SECRET}))
        op.emit(Diagnostic(operation_id=op.id, severity="warning",
                           summary="Resource targeting is in effect"))  # fmt: skip
        op.emit(Diagnostic(operation_id=op.id, severity="warning",
                           summary="Applied changes may be incomplete: more"))  # fmt: skip
        op.emit(Diagnostic(operation_id=op.id, severity="warning", summary="Real warning"))
        op.note("a note")
        op.warn("a warning")

    events, op, _ = _run("deploy", body, secrets=(SECRET,))
    assert op is not None
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in events])
    assert SECRET not in Path(str(op.log_path)).read_text()
    diagnostics = [(e.severity, e.summary) for e in events if isinstance(e, Diagnostic)]
    assert diagnostics == [
        ("warning", f"x {MASK}"),
        ("info", "Resource targeting is in effect"),
        ("info", "Applied changes may be incomplete: more"),
        ("warning", "Real warning"),
        ("warning", "a warning"),
    ]
    notes = [e for e in events if isinstance(e, LogLine) and e.stream == "npa"]
    assert [n.text for n in notes] == ["a note"]
    # the observer saw every event from its start on, before the caller's sink
    assert [e.kind for e in seen] == [e.kind for e in events[1:]]


def test_resources_in_flight_are_tracked_and_the_long_waits_announced() -> None:
    _entry()
    wait = "module.slurm.terraform_data.wait_for_slurm_cluster_hr"

    def body(op: Operation) -> None:
        op.emit(ResourceStarted(operation_id=op.id, addr="a", module="k8s", action="create",
                                ts=5.0))  # fmt: skip
        op.emit(ResourceStarted(operation_id=op.id, addr="b", module="k8s", action="create",
                                ts=6.0))  # fmt: skip
        assert op.in_flight == {"a": 5.0, "b": 6.0}
        op.emit(ResourceFinished(operation_id=op.id, addr="a", module="k8s", action="create",
                                 elapsed=1.0))  # fmt: skip
        op.emit(ResourceFailed(operation_id=op.id, addr="b", module="k8s", action="create",
                               elapsed=1.0, message=f"bad {SECRET}"))  # fmt: skip
        op.emit(ResourceFinished(operation_id=op.id, addr="never", module="k8s",
                                 action="create", elapsed=1.0))  # fmt: skip
        assert op.in_flight == {}
        op.emit(ResourceStarted(operation_id=op.id, addr=wait, module="slurm", action="create"))

    events, _, _ = _run("deploy", body, secrets=(SECRET,))
    failed = next(e for e in events if isinstance(e, ResourceFailed))
    assert failed.message == f"bad {MASK}"
    notes = [e.text for e in events if isinstance(e, LogLine) and e.stream == "npa"]
    assert len(notes) == 1 and notes[0].startswith("apply waits for ")


def test_a_plan_leaves_the_files_as_they_were_even_when_it_succeeds(tmp_path: Path) -> None:
    kept = tmp_path / "terraform.tfvars.json"
    kept.write_text("before")
    kept.chmod(0o640)

    def body(op: Operation) -> None:
        op.rollback.keep(kept)
        kept.write_text("during")

    _run("plan", body)
    assert kept.read_text() == "before" and stat.S_IMODE(kept.stat().st_mode) == 0o640


@pytest.mark.parametrize("applied", [True, False])
def test_a_failed_deploy_restores_its_files_unless_it_applied(
    tmp_path: Path, applied: bool
) -> None:
    kept = tmp_path / "spec.yaml"
    kept.write_text("before")

    def body(op: Operation) -> None:
        op.rollback.keep(kept)
        kept.write_text("new spec")
        op.applied = applied
        raise OperationError("apply failed")

    _run("deploy", body)
    assert kept.read_text() == ("new spec" if applied else "before")


def test_a_successful_deploy_keeps_its_new_files(tmp_path: Path) -> None:
    kept = tmp_path / "spec.yaml"
    kept.write_text("before")

    def body(op: Operation) -> None:
        op.rollback.keep(kept)
        kept.write_text("new spec")

    _run("deploy", body)
    assert kept.read_text() == "new spec"


def test_rollback_keeps_the_first_copy_and_skips_what_did_not_exist(tmp_path: Path) -> None:
    kept, new, gone = tmp_path / "a", tmp_path / "new", tmp_path / "gone"
    kept.write_bytes(b"first")
    gone.write_bytes(b"was here")
    rollback = Rollback()
    rollback.keep(kept, new, gone)
    kept.write_bytes(b"second")
    rollback.keep(kept)  # the first copy stays the one restored
    new.write_bytes(b"created by the run")
    gone.unlink()
    rollback.restore()
    assert kept.read_bytes() == b"first"
    assert new.read_bytes() == b"created by the run"  # a first run's new file stays
    assert gone.read_bytes() == b"was here"


def test_rollback_leaves_an_unchanged_file_alone(tmp_path: Path) -> None:
    kept = tmp_path / "a"
    kept.write_bytes(b"same")
    rollback = Rollback()
    rollback.keep(kept)
    before = kept.stat().st_ino
    rollback.restore()
    assert kept.stat().st_ino == before  # not rewritten


def test_an_error_of_ours_is_not_an_internal_error() -> None:
    _entry()
    events, _, _ = _run("deploy", _raise(NpaError("plain failure")))
    assert _final(events).message == "plain failure"


def test_the_id_is_stamped_in_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        _, op, _ = _run("plan", lambda op: None)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert op is not None
    stamp = op.id.split("-")[1]
    assert abs(calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%S")) - op.started) < 5


def test_the_lock_names_the_operation_holding_it() -> None:
    _entry()
    holders: list[Any] = []
    _run("destroy", lambda op: holders.append(op.store.lock_holder("demo")))
    assert holders[0]["operation"] == "destroy"


def test_the_log_is_named_after_the_operation_and_closed_at_the_end() -> None:
    _, op, _ = _run("plan", lambda op: None)
    assert op is not None and op._log is not None
    assert Path(str(op.log_path)).name == f"{op.id}.ndjson"
    assert op._log._fd is None  # closed: nothing more is written


def test_an_observer_sees_each_event_before_the_callers_sink() -> None:
    order: list[str] = []
    with operation("plan", "demo", lambda e: order.append(f"caller {e.kind}"),
                   Redactor(environ={})) as op:  # fmt: skip
        op.observe(lambda e: order.append(f"observer {e.kind}"))
        op.note("x")
    assert order[1:3] == ["observer log_line", "caller log_line"]


class _StoreWithADeadRun(LocalStore):
    """A store (the team's bucket, say) whose record of the cluster has a run that died."""

    def get(self, name: str) -> InventoryEntry | None:
        from npa_sop_tui.home.inventory import OperationRecord

        entry = InventoryEntry(name=name, kube_context="nebius-demo-slurm", state="deploying")
        entry.record(OperationRecord(id="deploy-x", kind="deploy", started=1.0, pid=2**22 + 7))
        return entry


def test_the_operations_own_store_is_where_a_dead_run_is_settled() -> None:
    events, _, _ = _run("plan", lambda op: None, store=_StoreWithADeadRun())
    warnings = [e.summary for e in events if isinstance(e, Diagnostic)]
    assert len(warnings) == 1 and warnings[0].startswith("deploy deploy-x did not finish")


def test_a_failed_deploy_that_never_said_it_applied_restores_its_files(tmp_path: Path) -> None:
    kept = tmp_path / "spec.yaml"
    kept.write_text("before")

    def body(op: Operation) -> None:
        op.rollback.keep(kept)
        kept.write_text("new spec")
        raise OperationError("plan refused")

    _run("deploy", body)
    assert kept.read_text() == "before"


def test_rollback_keeps_every_file_named_again_with_a_kept_one(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.write_bytes(b"1")
    second.write_bytes(b"2")
    rollback = Rollback()
    rollback.keep(first)
    rollback.keep(first, second)
    first.write_bytes(b"changed")
    second.write_bytes(b"changed")
    rollback.restore()
    assert (first.read_bytes(), second.read_bytes()) == (b"1", b"2")


def test_rollback_restores_the_rest_after_an_unchanged_or_unwritable_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    same, lost, changed = tmp_path / "same", folder / "lost", tmp_path / "changed"
    for path in (same, lost, changed):
        path.write_bytes(b"before")
    rollback = Rollback()
    rollback.keep(same, lost, changed)
    lost.unlink()
    folder.rmdir()
    folder.write_bytes(b"a file where the folder was")  # the lost file cannot be written back
    changed.write_bytes(b"after")
    rollback.restore()
    assert changed.read_bytes() == b"before" and same.read_bytes() == b"before"
