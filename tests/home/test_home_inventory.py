"""The cluster inventory: private records that round-trip, damaged records named, not fatal."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import ClassVar

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord


def test_inventory_round_trip_is_private() -> None:
    entry = InventoryEntry(name="inv", kube_context="nebius-inv-slurm", region="eu-north1")
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0))
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0, result="ok"))
    inventory.save(entry)
    loaded = inventory.require("inv")
    assert loaded.operations[-1].result == "ok" and len(loaded.operations) == 1
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "inv" / "inventory.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [e.name for e in inventory.list_clusters()] == ["inv"]
    with pytest.raises(UsageError, match="no cluster named 'other'"):
        inventory.require("other")


def test_damaged_inventory_is_reported() -> None:
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "bad" / "inventory.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(Exception, match="damaged"):
        inventory.get("bad")
    assert inventory.list_clusters() == []  # skipped, not fatal


def test_operation_history_is_bounded_and_updates_in_place() -> None:
    entry = InventoryEntry(name="hist", kube_context="nebius-hist-slurm", region="eu-north1")
    for i in range(inventory.MAX_OPERATIONS + 5):
        entry.record(OperationRecord(id=f"op-{i}", kind="plan", started=float(i)))
    assert len(entry.operations) == inventory.MAX_OPERATIONS
    assert entry.operations[0].id == "op-5"  # the oldest go first
    assert entry.last_operation is not None and entry.last_operation.id == f"op-{i}"
    entry.record(OperationRecord(id="op-7", kind="plan", started=7.0, result="ok"))
    assert [o.id for o in entry.operations].count("op-7") == 1
    assert entry.last_operation.id == f"op-{i}"  # an update keeps its place


@pytest.mark.parametrize(
    ("state", "after"),
    [("deploying", "interrupted"), ("destroying", "destroy-incomplete"), ("deployed", "deployed")],
)
def test_a_dead_operation_is_settled_with_the_next_step(state: str, after: str) -> None:
    """A record left `running` by a process that died says so, moves the cluster to the
    state that tells the truth, and names the command that moves it on."""
    entry = InventoryEntry(name="dead", kube_context="nebius-dead-slurm", region="eu-north1")
    entry.state = state  # type: ignore[assignment]
    kind = "destroy" if state == "destroying" else "deploy"
    entry.record(OperationRecord(id="op-1", kind=kind, started=1.0, result="running",
                                 pid=4242, host="ws1"))  # fmt: skip
    note = inventory.settle_dead_operation(entry)
    assert note is not None and "pid 4242 on ws1" in note and "killed or crashed" in note
    assert entry.state == after and entry.last_operation.result == "interrupted"
    verb = "destroy --name dead" if kind == "destroy" else "deploy --spec"
    assert f"npa soperator {verb}" in note
    assert inventory.settle_dead_operation(entry) is None  # settled once


def test_listing_settles_a_record_whose_process_is_gone() -> None:
    entry = InventoryEntry(name="gone", kube_context="nebius-gone-slurm", region="eu-north1")
    entry.state = "deploying"  # type: ignore[assignment]
    entry.record(OperationRecord(id="op-1", kind="deploy", started=1.0, result="running"))
    inventory.save(entry)
    (listed,) = inventory.list_clusters()
    assert listed.state == "interrupted"
    assert inventory.require("gone").state == "interrupted"  # and saved so


def _running(
    name: str, *, state: str = "deploying", kind: str = "deploy", **who: object
) -> InventoryEntry:
    entry = InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm", region="eu-north1")
    entry.state = state  # type: ignore[assignment]
    entry.record(OperationRecord(id="op-1", kind=kind, started=1.0, result="running", **who))  # type: ignore[arg-type]
    return entry


def test_a_settled_record_says_when_it_ended_and_keeps_the_note_as_its_summary() -> None:
    """Protects what `list` and `history` show for a killed run: an end time and the note."""
    entry = _running("ended", pid=77)
    note = inventory.settle_dead_operation(entry)
    last = entry.last_operation
    assert note is not None and last is not None
    assert last.ended is not None and last.ended > 1.0
    assert last.summary == note[:300] and len(entry.operations) == 1
    assert "pid 77)" in note and " on " not in note.split("Next:")[0]  # no host: none named
    assert note.startswith("deploy op-1 did not finish: npa (pid 77)")


def test_a_dead_record_without_a_pid_names_its_npa_process() -> None:
    note = inventory.settle_dead_operation(_running("nopid"))
    assert note is not None and "npa (its npa process) stopped" in note


@pytest.mark.parametrize("result", ["ok", "failed", "interrupted"])
def test_only_a_running_record_is_settled(result: str) -> None:
    entry = InventoryEntry(name="done", kube_context="nebius-done-slurm", region="eu-north1")
    entry.state = "deploying"  # type: ignore[assignment]
    entry.record(OperationRecord(id="op-1", kind="deploy", started=1.0, result=result))  # type: ignore[arg-type]
    assert inventory.settle_dead_operation(entry) is None
    assert entry.state == "deploying" and entry.last_operation.ended is None  # type: ignore[union-attr]
    empty = InventoryEntry(name="empty", kube_context="nebius-empty-slurm")
    assert inventory.settle_dead_operation(empty) is None


def test_the_next_step_after_a_teardown_is_destroy_and_keeps_the_sandbox_flag() -> None:
    """Protects the command a stuck cluster's record names: destroy after a destroy, with
    `--sandbox` only for a sandbox cluster, else deploy with the spec as deployed."""
    from npa_sop_tui.home.inventory import RecipeInfo

    entry = InventoryEntry(name="nx", kube_context="nebius-nx-slurm", state="destroy-incomplete")
    assert inventory.next_step(entry) == "`npa soperator destroy --name nx` finishes the teardown"
    entry.recipe = RecipeInfo(origin="sandbox", path="/x")
    assert inventory.next_step(entry).startswith("`npa soperator destroy --name nx --sandbox`")
    entry.state = "deployed"  # type: ignore[assignment]
    entry.record(OperationRecord(id="d-1", kind="destroy", started=1.0, result="failed"))
    assert "destroy --name nx --sandbox` finishes" in inventory.next_step(entry)
    entry.record(OperationRecord(id="p-1", kind="deploy", started=2.0, result="failed"))
    spec = Path(os.environ["NPA_HOME"]) / "soperator" / "nx" / "spec.yaml"
    assert inventory.next_step(entry) == (
        f"`npa soperator deploy --spec {spec} --sandbox` converges (pass capacity block groups "
        "again), or `npa soperator destroy --name nx --sandbox` removes it"
    )
    entry.recipe = RecipeInfo(origin="git", path="/x")
    assert "--sandbox" not in inventory.next_step(entry)


def test_listing_leaves_a_running_record_alone_while_its_lock_is_held() -> None:
    """Protects a live deploy from being marked interrupted by someone's `list`."""
    from npa_sop_tui.home.locks import ClusterLock

    inventory.save(_running("live"))
    with ClusterLock("live", operation="deploy"):
        (listed,) = inventory.list_clusters()
        assert listed.state == "deploying" and listed.last_operation.result == "running"  # type: ignore[union-attr]
    assert inventory.require("live").state == "deploying"  # nothing saved either


def test_an_unknown_cluster_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as none_known:
        inventory.require("ghost")
    assert "known clusters: none;" in (none_known.value.hint or "")
    for name in ("b-one", "a-two"):
        inventory.save(InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm"))
    with pytest.raises(UsageError) as two_known:
        inventory.require("ghost")
    assert "known clusters: a-two, b-one;" in (two_known.value.hint or "")


def test_a_long_note_is_cut_to_300_characters_as_the_summary() -> None:
    """Protects the summary's bound (a record line in `list`/`history`), not the note's."""
    entry = _running("long", pid=5, host="h" * 400)
    note = inventory.settle_dead_operation(entry)
    assert note is not None and len(note) > 300
    assert entry.last_operation is not None and entry.last_operation.summary == note[:300]
    assert len(entry.last_operation.summary) == 300


def test_specs_round_trip_and_damaged_records_are_named() -> None:
    inventory.save_spec("sp", "name: sp\n")
    assert inventory.read_spec("sp") == "name: sp\n"
    assert inventory.read_spec("other") is None
    assert inventory.get("other") is None
    bad = Path(os.environ["NPA_HOME"]) / "soperator" / "broken" / "inventory.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("[]")
    (damaged,) = inventory.damaged_records()
    assert "broken" in str(damaged.path)


def test_settling_on_list_gives_the_lock_back() -> None:
    """Protects the lock `list` takes to prove a record's process gone: released after."""
    from npa_sop_tui.home.locks import ClusterLock

    inventory.save(_running("freed"))
    (listed,) = inventory.list_clusters()
    assert listed.state == "interrupted"
    ClusterLock("freed", operation="deploy").acquire().release()  # not still held by list


def test_a_settled_record_that_cannot_be_saved_is_shown_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Protects `list` on a read-only or full disk: the record as stored, no traceback, and
    the lock released."""
    from npa_sop_tui.home.locks import ClusterLock
    from npa_sop_tui.state.stores import default_store

    store = default_store()
    store.save(_running("ro"))

    def read_only(entry: InventoryEntry) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(store, "save", read_only)
    (listed,) = inventory.list_clusters(store=store)
    assert listed.state == "deploying" and listed.last_operation.result == "running"  # type: ignore[union-attr]
    ClusterLock("ro", operation="deploy").acquire().release()


def test_a_lock_that_cannot_be_taken_leaves_the_record_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from npa_sop_tui.state.stores import default_store

    store = default_store()
    store.save(_running("nolock"))

    class Unlockable:
        def acquire(self) -> None:
            raise OSError(13, "Permission denied")

    taken: list[str] = []

    def lock(name: str, *, operation: str) -> Unlockable:
        taken.append(f"{name}:{operation}")
        return Unlockable()

    monkeypatch.setattr(store, "lock", lock)
    (listed,) = inventory.list_clusters(store=store)
    assert listed.state == "deploying" and taken == ["nolock:list"]


def test_the_record_is_settled_as_read_again_under_the_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Protects the re-read: what the scan saw may have finished before the lock was taken;
    the record as it is then is the one settled (or left alone) and shown."""
    from npa_sop_tui.state.stores import default_store

    store = default_store()
    store.save(_running("raced"))
    finished = _running("raced")
    finished.last_operation.result = "ok"  # type: ignore[union-attr]
    finished.state = "deployed"
    monkeypatch.setattr(store, "get", lambda name: finished)
    (listed,) = inventory.list_clusters(store=store)
    assert listed is finished and listed.state == "deployed"


def test_a_cluster_being_destroyed_is_finished_by_destroy_whatever_ran_last() -> None:
    """Protects both teardown states on their own: `destroying` (a killed destroy) and
    `destroy-incomplete` name destroy even when the last record is not a destroy."""
    for state in ("destroying", "destroy-incomplete"):
        entry = InventoryEntry(name="td", kube_context="nebius-td-slurm", state=state)  # type: ignore[arg-type]
        entry.record(OperationRecord(id="p-1", kind="deploy", started=1.0, result="failed"))
        assert inventory.next_step(entry).startswith("`npa soperator destroy --name td`")


def test_the_functions_use_the_store_they_are_given() -> None:
    """Protects the team's bucket: a caller's store (not this machine's default) holds the
    spec, the records and the damaged ones."""
    from npa_sop_tui.state.local import LocalStore

    class Given(LocalStore):
        specs: ClassVar[dict[str, str]] = {}
        entries: ClassVar[dict[str, InventoryEntry]] = {}

        def get(self, name: str) -> InventoryEntry | None:
            return self.entries.get(name)

        def save(self, entry: InventoryEntry) -> None:
            self.entries[entry.name] = entry

        def save_spec(self, name: str, spec_yaml: str) -> None:
            self.specs[name] = spec_yaml

        def read_spec(self, name: str) -> str | None:
            return self.specs.get(name)

        def scan(self) -> tuple[list[InventoryEntry], list[inventory.InventoryDamaged]]:
            return [], [inventory.InventoryDamaged("s3://team/x", ["bad"])]

    given = Given()
    entry = InventoryEntry(name="gs", kube_context="nebius-gs-slurm")
    inventory.save(entry, store=given)
    assert inventory.get("gs", store=given) is entry
    assert inventory.require("gs", store=given) is entry
    assert inventory.get("gs") is None  # this machine's store never saw it
    inventory.save_spec("gs", "name: gs\n", store=given)
    assert inventory.read_spec("gs", store=given) == "name: gs\n"
    assert inventory.read_spec("gs") is None  # not written to this machine's store
    (damaged,) = inventory.damaged_records(store=given)
    assert str(damaged).startswith("s3://team/x: the inventory record is damaged")
    assert inventory.damaged_records() == []


def test_a_record_without_operations_lists_as_it_is() -> None:
    """Protects `list` on a cluster that never ran an operation (nothing to settle)."""
    inventory.save(InventoryEntry(name="fresh", kube_context="nebius-fresh-slurm"))
    (listed,) = inventory.list_clusters()
    assert listed.name == "fresh" and listed.operations == [] and listed.state == "planned"
