"""What a status watch reads from the inventory for its verdict: the cluster's state, its
last operation (summary cut to 200 characters) and the last GPU check; a missing or damaged
record is no record, never an error."""

from __future__ import annotations

import time
from pathlib import Path

from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory_records import InventoryEntry, OperationRecord
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.status.watch_settings import (
    StatusSettings,
    last_validation,
    verdict_context_for,
)


def _save(name: str) -> None:
    entry = InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm", state="failed")
    entry.record(
        OperationRecord(
            id="op-1", kind="deploy", started=time.time(), result="failed", summary="x" * 300
        )
    )
    entry.validation = {"status": "degraded-validation"}
    inventory.save(entry)


def test_the_context_carries_the_cluster_state_and_its_last_operation(npa_home: Path) -> None:
    _save("ctx")
    context = verdict_context_for(StatusSettings(name="ctx"))
    assert (context.state, context.last_operation) == ("failed", "deploy")
    assert context.last_message == "x" * 200
    assert last_validation("ctx") == {"status": "degraded-validation"}


def test_no_record_and_a_damaged_record_are_both_no_record(npa_home: Path) -> None:
    empty = verdict_context_for(StatusSettings(name="nobody"))
    assert (empty.state, empty.last_operation, empty.last_message) == (None, None, "")
    assert last_validation("nobody") is None
    _save("broken")
    for record in cluster_dir("broken").glob("*.json"):
        record.write_text("{ not json")
    assert verdict_context_for(StatusSettings(name="broken")).state is None
    assert last_validation("broken") is None


def test_the_kube_context_defaults_to_the_recipe_name() -> None:
    assert StatusSettings(name="demo").kube_context == "nebius-demo-slurm"
    assert StatusSettings(name="demo", context="mine").kube_context == "mine"
