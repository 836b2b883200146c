"""The cluster inventory: private records that round-trip, damaged records named, not fatal."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from npa_sop_tui import inventory
from npa_sop_tui.errors import UsageError
from npa_sop_tui.inventory import InventoryEntry, OperationRecord


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
